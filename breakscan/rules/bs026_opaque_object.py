"""BS026 opaque_object: Opaque object built or used in forward.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS026", "opaque_object", "opaque-object",
    'Opaque object built or used in forward',
    why='A C++/TorchScript object (torch.Generator, ScriptModule, registered opaque class) '
        'is created in the compiled region or used in a way Dynamo cannot see into.',
    suggestion='Create it before `torch.compile` and pass it in (or make it a global); for a '
               'Generator, use the global RNG (see rng).',
    before='g = torch.Generator().manual_seed(0)\nnoise = torch.rand(4, generator=g)',
    after='noise = torch.rand(4)  # the global RNG; seed it outside forward',
    advice_by_id=(("GB4695", 'A `torch.jit.script`ed (or frozen) module called inside the compiled model: '
                          'Dynamo cannot trace TorchScript; use the plain `nn.Module` (drop '
                          '`torch.jit.script`) and let `torch.compile` compile it.'),),
    ids=('GB0265 GB0266 GB0267 GB0357 GB0362 GB0363 GB1739 GB2078 GB4695 GB7685 '
         'GB8656 GB8843 GB9567 '
         'GB6441'),
    makes_object=True)
