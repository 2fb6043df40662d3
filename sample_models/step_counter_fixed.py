"""`step_counter.py` fixed: the step lives in a tensor buffer, so its value is data, not a guard.

`self.step` is a 0-d `long` buffer bumped in place; the warm-up factor is computed with tensor ops
(`torch.clamp`). Dynamo compiles `forward` once and every call reuses the graph.

Expected run (--capture-only --steps 12):
    regions: 1
    calls: 12
    graphs: 1
    breaks: 0
    graph_calls_per_call: 1
    frames_run_eagerly_per_call: 0
    recompiles: 0
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
        self.register_buffer("step", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        self.step += 1
        scale = torch.clamp(self.step / self.warmup, max=1.0)
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
