"""BS036 backend_error: The compiler backend failed on this graph.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Rule

RULE = Rule(
    "BS036", "backend_error", "backend-error",
    'The compiler backend failed on this graph',
    why='Inductor (or another backend) raised while compiling the graph, so Dynamo split it '
        'and ran that part eagerly.',
    suggestion='Reproduce with `backend="aot_eager"` to see whether the backend is at fault, '
               'then isolate the failing op in a small disabled helper and report it.',
    before='torch.compile(model)',
    after='torch.compile(model, backend="aot_eager")  # bisect',
    ids=('GB0219'))
