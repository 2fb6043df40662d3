"""A small training program, as users write one: data, model, loss, backward, optimizer step.

Run it as a program, not as a model: `breakscan run sample_models/train_loop.py --epochs 1`.
Two things make `torch.compile` slow here, and neither shows in a scan of one forward call:

- `check_finite`, a sanity check every block calls, branches on a tensor: a break in each of
  the 4 blocks, so every step returns to Python 4 times (and Dynamo skips the loop over the
  blocks, which runs eagerly);
- 36 samples in batches of 8 leave a last batch of 4: its new size recompiles the model's frames.

`train_loop_fixed.py` is the same program with both fixed: it compiles to one graph per step
and never recompiles.

Expected run (--capture-only --epochs 1):
    regions: 1
    calls: 5
    graphs: 10
    breaks: 1
    break_at: if not torch.isfinite(h).all():
    fires: 20
    fires_per_call: 4
    graph_calls_per_call: 12
    eager_gaps_per_call: 8
    frames_run_eagerly_per_call: 1
    recompiles: 7
    last_batch_guard: tensor 'x' size mismatch at index 0. expected 8, actual 4
"""

import argparse

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def check_finite(h):
    if not torch.isfinite(h).all():
        raise FloatingPointError("non-finite activations")
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
    compiled = torch.compile(model)
    for epoch in range(args.epochs):
        for x, y in loader:
            loss = F.mse_loss(compiled(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
