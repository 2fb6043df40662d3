"""BS034 dynamo_limitation: Python construct Dynamo does not support yet.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS034", "dynamo_limitation", "dynamo-limitation",
    'Python construct Dynamo does not support yet',
    why='Dynamo has no support for this construct (a bytecode, comprehension form, '
        'reconstruction across a break, a C slot of a builtin type); not a bug in your code.',
    suggestion='Write the construct more plainly (a loop instead of the comprehension, no '
               'closures/iterators kept across a break); fix an earlier break first when '
               'Dynamo says it may be the cause; else put it in a small disabled helper.',
    before='out = {k: f(v) for k, v in items if cond(v)}',
    after='out = {}\nfor k, v in items:\n    if cond(v):\n        out[k] = f(v)',
    ids=('GB0023 GB0047 GB0048 GB0055 GB0071 GB0079 GB0080 GB0082 GB0086 GB0092 '
         'GB0093 GB0116 GB0117 GB0122 GB0143 GB0168 GB0178 GB0193 GB0200 GB0215 '
         'GB0292 GB0295 GB0299 GB0354 GB0755 GB0781 GB1297 GB2483 GB2544 GB2669 '
         'GB3006 GB3775 GB3934 GB4240 GB4411 GB4841 GB4880 GB5195 GB5696 GB5904 '
         'GB6053 GB6215 GB6276 GB6604 GB6622 GB6890 GB7286 GB7425 GB7510 GB7786 '
         'GB7906 GB8435 GB9458 GB9548 GB9561 GB9648 GB9898 '
         'GB2069 GB2412 GB2444 GB4234 GB5017 GB9493 '
         'GB7168 GB6404 GB1472 GB1583 GB1350 GB0507 GB9368 GB2582'),
    smallest_region=True)
