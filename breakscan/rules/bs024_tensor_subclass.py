"""BS024 tensor_subclass: Tensor subclass or __torch_function__ override Dynamo cannot trace.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS024", "tensor_subclass", "tensor-subclass",
    'Tensor subclass or __torch_function__ override Dynamo cannot trace',
    why='A tensor subclass attribute/method or a `__torch_function__` override that Dynamo '
        'cannot model.',
    suggestion='Unwrap to plain tensors before the compiled call, or make the subclass '
               'traceable (a wrapper subclass with '
               '`__tensor_flatten__`/`__tensor_unflatten__`).',
    before='out = model(MyTensor(x))',
    after='out = model(x)  # wrap the result outside',
    ids=('GB0000 GB0001 GB0026 GB0103 GB0163 GB0164 GB0227 GB0234 '
         'GB2736'))
