"""`logging` calls inside forward."""

import logging

import torch
from torch import nn

log = logging.getLogger(__name__)


class LoggerInForward(nn.Module):
    """`log.debug` is a logging.Logger method Dynamo will not trace: a break.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: print
        break_at: log.debug("activations ready")
        gb_id: GB0291
        advice_contains: Guard it with `if not torch.compiler.is_compiling()
        fix: print_guard verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        log.debug("activations ready")
        return self.fc2(h)


class InlineLogger(nn.Module):
    """`logging.getLogger(__name__).info(...)` written inline: Dynamo fails on the logger
    object itself (GB6215, "Unresolved GetAttrVariable comparison"), then on the `.info` call
    (GB0291): two records, one logging call, one root cause.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 2
        category: print
        break_at: logging.getLogger(__name__).info("activations ready")
        gb_id: GB6215
        advice_contains: Guard it with `if not torch.compiler.is_compiling()
        fix: print_guard verified
    """

    def __init__(self, width: int = 16):
        super().__init__()
        self.fc1 = nn.Linear(width, width)
        self.fc2 = nn.Linear(width, width)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        logging.getLogger(__name__).info("activations ready")
        return self.fc2(h)


class LoggerOutsideForward(nn.Module):
    """Fixed twin: log in the caller (or guard with torch.compiler.is_compiling()).

    Expected scan (--input-shape 8,16):
        twin_of: LoggerInForward
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
        return self.fc2(h)
