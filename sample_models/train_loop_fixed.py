"""The training program of `train_loop.py` with both problems fixed.

- `check_finite` asserts without a Python branch: `torch._assert_async` checks the tensor inside
  the graph, so the blocks compile into the model's one graph;
- `torch.compile(model, dynamic=True)` compiles the batch dimension as a symbol, so the last,
  smaller batch reuses the graph.

Expected run (--capture-only --epochs 1):
    regions: 1
    calls: 5
    graphs: 1
    breaks: 0
    graph_calls_per_call: 1
    eager_gaps_per_call: 0
    frames_run_eagerly_per_call: 0
    recompiles: 0
"""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def check_finite(h):
    torch._assert_async(torch.isfinite(h).all(), "non-finite activations")
    return h


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        return check_finite(torch.relu(self.fc(x))) + x


class Net(nn.Module):
    def __init__(self, width=16, depth=4):
        super().__init__()
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--samples", type=int, default=36)
    args = parser.parse_args()
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(args.samples, 16), torch.randn(args.samples, 1))
    loader = DataLoader(data, batch_size=args.batch_size)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    compiled = torch.compile(model, dynamic=True)
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = F.mse_loss(compiled(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
