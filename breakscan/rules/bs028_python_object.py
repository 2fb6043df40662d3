"""BS028 python_object: Python object feature Dynamo cannot model.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS028", "python_object", "python-object",
    'Python object feature Dynamo cannot model',
    why='A class defined inside forward, dataclass/pydantic/namedtuple construction, '
        'getattr/setattr with computed names, metaclasses or repr of non-constant '
        'containers.',
    suggestion='Define classes at module level, use constant attribute names, plain '
               'dicts/tuples; a class defined in forward can also be traced with the '
               'setting.',
    before='def forward(self, x):\n    class Box: ...',
    after='class Box: ...  # module level',
    settings=(('enable_trace_load_build_class', True),),
    advice_by_id=(("GB8977", 'A class is defined inside forward: define it at module level (or set '
                          '`enable_trace_load_build_class`, below).'),),
    ids=('GB0004 GB0006 GB0054 GB0075 GB0084 GB0113 GB0131 GB0175 GB0180 GB0183 '
         'GB0184 GB0186 GB0190 GB0194 GB0195 GB0197 GB0199 GB0201 GB0203 GB0204 '
         'GB0217 GB0252 GB0255 GB0256 GB0257 GB0258 GB0259 GB0260 GB0261 GB0278 '
         'GB0280 GB0287 GB0289 GB0368 GB0369 GB0459 GB0808 GB1220 GB1275 GB1319 '
         'GB1584 GB2852 GB3383 GB4393 GB4778 GB5380 GB5458 GB5849 GB6012 GB6999 '
         'GB7637 GB7968 GB8315 GB8887 GB8977 GB9137 GB9277 GB9522 GB9528 GB9672 '
         'GB4399 GB4818 GB6066 GB9899 GB3780 GB1157 GB1618 GB1354 GB9890 GB3837 GB5460'),
    smallest_region=True)
