"""BS008 frame_skipped: Whole frame fell back to eager.

The rule's whole behaviour: its entry.
"""
from __future__ import annotations

from .model import Match, Rule

RULE = Rule(
    "BS008", "frame_skipped", "break-in-loop-or-try", "Whole frame fell back to eager",
    why="A break Dynamo cannot resume from — inside a `for`/`while` loop (GB7000), inside a "
        "`try`/`with` block, or with nothing resumable before it — makes it skip the whole "
        "function, which then runs entirely in eager (explain shows 0 graphs for it). The "
        "report says which of these Dynamo gave as the cause.",
    suggestion="Move the breaking call out of the loop or try/with block, or fix the break "
               "itself (see its cause), so the rest of the function compiles again.",
    before="for layer in self.layers:\n    x = layer(x)\n    print(x.norm())",
    after="for layer in self.layers:\n    x = layer(x)\nreturn x  # report norms outside",
    matches=(Match("GB4297"),  # torch._dynamo.skip_frame()
             Match("GB7000")),
    ids="GB0052 GB0065 GB0096 GB9741")
