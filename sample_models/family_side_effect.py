"""A side effect inside an activation-checkpointed function: the side_effect family."""

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

ACTIVATION_NORMS: list = []


class LogInCheckpoint(nn.Module):
    """The block run under `torch.utils.checkpoint` appends to a global list: a checkpointed
    function is traced as a higher-order operator, and a side effect there is unsafe (it would
    run again when the backward recomputes the block; GB0067, reported at the append inside
    the block): a break; the checkpointed call runs eagerly. Record outside the checkpointed
    function.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: side_effect
        gb_id: GB0067
        advice_contains: move the mutation to the caller
        fix: skip_fwd_side_effects_in_bwd_under_checkpoint verified
        break_at: ACTIVATION_NORMS.append(h.norm())
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def block(self, h):
        ACTIVATION_NORMS.append(h.norm())
        return torch.relu(self.fc2(h))

    def forward(self, x):
        h = self.fc(x)
        y = checkpoint(self.block, h, use_reentrant=False)
        return torch.tanh(y) + h


class LogOutsideCheckpoint(nn.Module):
    """Fixed twin: the norm recorded in forward, the checkpointed block pure.

    Expected scan (--input-shape 8,16):
        twin_of: LogInCheckpoint
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def block(self, h):
        return torch.relu(self.fc2(h))

    def forward(self, x):
        h = self.fc(x)
        ACTIVATION_NORMS.append(h.detach().norm())
        y = checkpoint(self.block, h, use_reentrant=False)
        return torch.tanh(y) + h
