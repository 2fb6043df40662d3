"""A tensor's storage resized in forward (`Tensor.resize_`): the tensor_mutation family."""

import torch
from torch import nn


class ResizeWorkspace(nn.Module):
    """An output allocated empty and then resized to fit (`out = x.new_empty(0);
    out.resize_(...)`), the habit of Python wrappers around hand-written kernels. Dynamo does
    not trace `Tensor.resize_()` (GB0126): a break. Allocate it at its size instead
    (`torch.empty_like(h)`). (`resize_` on a registered buffer is GB0148, another family.)

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: tensor_mutation
        break_at: workspace.resize_(h.shape)
        gb_id: GB0126
        advice_contains: Use out-of-place ops and return the new
        fix: none
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        workspace = h.new_empty(0)
        workspace.resize_(h.shape)
        workspace.copy_(h)
        return torch.relu(workspace)


class FreshWorkspace(nn.Module):
    """Fixed twin: a fresh tensor per call (the compiler plans the memory).

    Expected scan (--input-shape 8,16):
        twin_of: ResizeWorkspace
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        workspace = torch.empty_like(h)
        workspace.copy_(h)
        return torch.relu(workspace)
