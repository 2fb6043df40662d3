"""A break inside a loop: Dynamo cannot resume inside a loop, so it skips the whole frame."""

import torch
from torch import nn


class PrintInLoop(nn.Module):
    """A print in the loop body: forward runs entirely in eager mode. explain reports 0 graphs
    and -1 breaks; breakscan reports the skipped frame and the print that caused it.

    Expected scan (--input-shape 8,16):
        graphs: 0
        breaks: 1
        records: 1
        category: frame_skipped
        cause: print
        frames_skipped: 1
        break_at: print("layer", i)
        explain_breaks: -1
        graph_calls_per_call: 0
        eager_gaps_per_call: 0
        frames_run_eagerly_per_call: 1
        fires_per_call: 1
        gb_id: GB0059
        advice_contains: Guard it with `if not torch.compiler.is_compiling()
        fix: print_guard verified
    """

    def __init__(self, width: int = 16, depth: int = 3):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = torch.relu(layer(x))
            print("layer", i)
        return x


class PrintAfterLoop(nn.Module):
    """Fixed twin: no print in the loop; the loop unrolls into one graph.

    Expected scan (--input-shape 8,16):
        twin_of: PrintInLoop
        graphs: 1
        breaks: 0
        records: 0
        frames_skipped: 0
    """

    def __init__(self, width: int = 16, depth: int = 3):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x
