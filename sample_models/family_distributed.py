"""An asynchronous collective (`async_op=True`) inside forward: the distributed family.

The model joins a one-process gloo group (an in-process `HashStore`: no ports, no other
process) the first time one is built, so it scans on one CPU.
"""

import torch
import torch.distributed as dist
from torch import nn


def join_single_process_group():
    if not dist.is_initialized():
        dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)


class AsyncAllReduce(nn.Module):
    """Overlapping communication with compute: the all-reduce is started asynchronously and
    its handle kept for the caller to wait on (what DDP and FSDP do with gradient buckets).
    Dynamo traces collectives only with `async_op=False` (GB0172): a break. Inside a compiled
    region call the collective synchronously; the compiler schedules the overlap.

    Expected scan (--input-shape 8,16):
        graphs: 2
        breaks: 1
        records: 1
        category: distributed
        break_at: self.pending.append(dist.all_reduce(h, async_op=True))
        gb_id: GB0172
        advice_contains: Use `async_op=False`
        fix: enable_p2p_compilation no effect
    """

    def __init__(self, width: int = 16):
        super().__init__()
        join_single_process_group()
        self.fc = nn.Linear(width, width)
        self.pending = []

    def forward(self, x):
        h = self.fc(x)
        self.pending.append(dist.all_reduce(h, async_op=True))
        return torch.relu(h)


class SyncAllReduce(nn.Module):
    """Fixed twin: a synchronous all-reduce.

    Expected scan (--input-shape 8,16):
        twin_of: AsyncAllReduce
        graphs: 1
        breaks: 0
        records: 0
    """

    def __init__(self, width: int = 16):
        super().__init__()
        join_single_process_group()
        self.fc = nn.Linear(width, width)

    def forward(self, x):
        h = self.fc(x)
        dist.all_reduce(h)
        return torch.relu(h)
