"""BS030 escape_hatch: nonstrict_trace / leaf_function / assume_constant_result used with inputs it does not accept.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS030", "escape_hatch", "escape-hatch-misuse",
    'nonstrict_trace / leaf_function / assume_constant_result used with inputs it does not '
    'accept',
    why='The escape hatch only takes tensors, basic Python values or registered pytrees, and '
        'needs a fake function (leaf_function).',
    suggestion='Pass tensors/pytrees of tensors, define the function outside the compiled '
               'region, and give leaf_function its fake_fn.',
    before='@leaf_function\ndef f(x): ...',
    after='@leaf_function(fake_fn)\ndef f(x): ...',
    ids=('GB0078 GB0236 GB0238 GB0239 GB0251 GB2520 GB3840 GB6210'))
