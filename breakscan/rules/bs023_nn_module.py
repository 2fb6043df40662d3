"""BS023 nn_module: nn.Module used in a way Dynamo cannot trace.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS023", "nn_module", "module-usage",
    'nn.Module used in a way Dynamo cannot trace',
    why='Custom `__getattr__`/`__getattribute__`, indexing a ModuleList with a non-constant, '
        '`nn.Parameter(...)` built in forward, RNN/GRU/LSTM, or a module missing '
        '`super().__init__()`.',
    suggestion='Create parameters in `__init__`, index submodules with Python ints, keep '
               'module attribute access plain; an RNN, GRU or LSTM needs `torch._dynamo.config.allow_rnn = True` '
               '(Dynamo\'s hint names it; `--fix` tries it).',
    before='w = nn.Parameter(torch.ones(4))  # in forward',
    after='self.w = nn.Parameter(torch.ones(4))  # in __init__',
    ids=('GB0014 GB0031 GB0032 GB0119 GB0121 GB0153 GB0161 GB0162 GB0188 GB0202 '
         'GB0211 GB0226 GB0228 GB0229 GB0235 GB0237 GB0243 GB0244 GB0264 GB0281'))
