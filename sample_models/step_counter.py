"""A training program whose model counts its own calls: recompiles until the limit, then eager
(family `recompile_limit`).

`WarmupScaled.forward` bumps `self.step` and scales by a warm-up factor computed from it. Dynamo
treats an integer attribute of an `nn.Module` as a constant, so every call guards on the value it
saw (`self.step == 7`) and compiles again; after `torch._dynamo.config.recompile_limit` (8)
compilations the frame runs eagerly for the rest of the program (GB0039, family
`recompile_limit`). The fix: keep the step in a tensor buffer (`step_counter_fixed.py`), or set
`torch._dynamo.config.allow_unspec_int_on_nn_module = True`, as Dynamo's recompile hint says.

Expected run (--capture-only --steps 12):
    regions: 1
    calls: 12
    graphs: 8
    breaks: 0
    graph_calls_per_call: 0.67
    frames_run_eagerly_per_call: 0.33
    recompiles: 8
    limit_hit: forward
"""

import argparse

import torch
import torch.nn.functional as F
from torch import nn


class WarmupScaled(nn.Module):
    def __init__(self, width=16, warmup=10):
        super().__init__()
        self.fc = nn.Linear(width, 1)
        self.warmup = warmup
        self.step = 0

    def forward(self, x):
        self.step += 1
        scale = min(1.0, self.step / self.warmup)
        return self.fc(x) * scale


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=12)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = WarmupScaled()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    compiled = torch.compile(model)
    for _ in range(args.steps):
        x, y = torch.randn(8, 16), torch.randn(8, 1)
        loss = F.mse_loss(compiled(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
