"""BS018 iteration: An iterator or generator Dynamo cannot step.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Match, Rule

RULE = Rule(
    "BS018", "iteration", "iterator",
    'An iterator or generator Dynamo cannot step',
    why='A `dict_items`/`zip`/`map` object passed in, a generator method, an itertools form '
        'or an unpacking of an unknown object cannot be iterated at trace time (often the '
        'whole function is skipped).',
    suggestion='Pass a list, tuple or dict (materialise iterators in the caller) and iterate '
               'it inside forward.',
    before='model(x, d.items())',
    after='model(x, d)  # forward: for k, v in d.items()',
    # torch 2.14 reports a dict view or zip passed in as GB9493 (a C-implemented __iter__)
    matches=(Match("GB9493", r"'(dict_items|dict_keys|dict_values|zip|map|enumerate|"
                             r"filter|reversed)' implements '__(iter|next)__'"),),
    advice_by_id=(("GB0811", 'An iterator object passed in (`d.items()`, `zip(...)`, `map(...)`) cannot be '
                          'stepped at trace time (when the break is in a loop, Dynamo skips the whole '
                          'function): pass the dict, list or '
                          'tuple itself and iterate it inside forward.'),
                 ("GB9493", 'An iterator object passed in (`d.items()`, `zip(...)`, `map(...)`) cannot be '
                          'stepped at trace time: pass the dict, list or tuple itself and iterate it '
                          'inside forward.')),
    ids=('GB0003 GB0024 GB0061 GB0062 GB0063 GB0077 GB0094 GB0114 GB0115 GB0118 '
         'GB0120 GB0132 GB0133 GB0134 GB0152 GB0154 GB0155 GB0160 GB0192 GB0253 '
         'GB0268 GB0811 GB1752 GB2549 GB4347 GB7230 GB8335 '
         'GB7151 GB9192'),
    smallest_region=True)
