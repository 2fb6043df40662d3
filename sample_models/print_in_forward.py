"""`print` inside forward (debug output left in the model)."""

import torch
from torch import nn


class PrintInForward(nn.Module):
    """A debug print between two layers splits forward in two.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: print
        break_at: print("hidden norm", h.norm())
        graph_calls_per_call: 2
        eager_gaps_per_call: 1
        frames_run_eagerly_per_call: 0
        fires_per_call: 1
        gb_id: GB0059
        advice_contains: Guard it with `if not torch.compiler.is_compiling()
        fix: print_guard verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        print("hidden norm", h.norm())
        return self.fc2(h)


class LeadingPrint(nn.Module):
    """A print before any tensor op: a real break that `torch._dynamo.explain` cannot see
    (it reports 1 graph, 0 breaks and no reason).

    Expected scan (--input-shape 8,16):
        graphs: 1
        breaks: 1
        records: 1
        category: print
        break_at: print("running LeadingPrint")
        explain_breaks: 0
        gb_id: GB0059
        advice_contains: Guard it with `if not torch.compiler.is_compiling()
        fix: print_guard verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        print("running LeadingPrint")
        return torch.relu(self.fc(x))


class GuardedPrint(nn.Module):
    """Fixed twin: the print runs only in eager mode.

    Expected scan (--input-shape 8,16):
        twin_of: PrintInForward
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if not torch.compiler.is_compiling():
            print("hidden norm (eager only)", h.norm())
        return self.fc2(h)
