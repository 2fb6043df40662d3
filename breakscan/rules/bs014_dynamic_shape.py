"""BS014 dynamic_shape: A condition on symbolic sizes Dynamo cannot decide.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS014", "dynamic_shape", "symbolic-shape",
    'A condition on symbolic sizes Dynamo cannot decide',
    why='With dynamic shapes a size is a symbol; an assert or comparison on it (or an '
        'unbacked size input) cannot be decided at trace time.',
    suggestion='State the fact with `torch._check(...)`, keep that dimension static '
               '(`mark_static`/no `mark_dynamic`), or drop the Python-level test.',
    before='assert x.shape[0] == y.shape[0]',
    after='torch._check(x.shape[0] == y.shape[0])',
    ids=('GB0002 GB0018 GB0214 GB0224 GB0360 GB5565'))
