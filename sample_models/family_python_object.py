"""A class defined inside forward: the python_object family."""

import torch
from torch import nn


class Output:
    def __init__(self, hidden):
        self.hidden = hidden


class ClassInForward(nn.Module):
    """A small record type defined in forward, a new class on every call: Dynamo cannot trace
    a class statement (GB8977, invalid call to `__build_class__`): a break. Define the class
    at module level.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: python_object
        gb_id: GB8977
        advice_contains: define it at module level
        fix: enable_trace_load_build_class verified
        break_at: class Result:
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)

        class Result:
            def __init__(self, hidden):
                self.hidden = hidden

        return Result(torch.relu(h)).hidden


class ClassAtModuleLevel(nn.Module):
    """Fixed twin: the class is defined once, at module level.

    Expected scan (--input-shape 8,16):
        twin_of: ClassInForward
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        return Output(torch.relu(h)).hidden
