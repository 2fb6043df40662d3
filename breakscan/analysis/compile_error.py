"""A compiled call that raised: the ``compile_error`` at the user's line to act on, and the
break Dynamo's metrics made of that line dropped (nothing ran eagerly there).
"""

from __future__ import annotations

from typing import Any

from ..frames import acting_frame, is_torch_file, model_stack, owner_of, parse_stack
from ..messages import dynamo_error
from ..model.raw import RawFailure
from ..model.records import CompileError
from .discrepancies import recount
from .ranking import reorder_breaks
from .roots import source_text


def compile_error(failure: RawFailure) -> CompileError:
    """What a compiled call's exception says, at the line to act on (never torch's own).

    Dynamo's errors carry the user's stack after "from user code:" (inside a ``torch.cond``
    branch too: the branch's line, not the ``cond`` call); a wrapper's message names the break
    it wraps. Other failures (a backend crash) carry only their traceback, whose innermost frame
    outside torch is the line.
    """
    head, marker, tail = failure.text.partition("from user code:")
    chain = model_stack(parse_stack(tail)) if marker else []
    if not chain:
        chain = model_stack([f for f in failure.traceback if not is_torch_file(f.file)])
    frame = acting_frame(chain)
    lines = [line.strip() for line in head.splitlines() if line.strip()]
    message, _, explanation = dynamo_error(head) or (
        lines[0] if lines else failure.exception, None, "")
    if len(explanation) > 300:
        explanation = explanation[:297] + "..."
    return CompileError(
        message=message[:300], exception=failure.exception,
        file=frame.file if frame else None, line=frame.line if frame else None,
        call_chain=chain, code=source_text(frame.file, frame.line, frame.code) if frame else "",
        explanation=explanation, owner=owner_of(frame.file) if frame else "torch")


def apply_compile_error(result: Any, failure: RawFailure) -> None:
    """The model does not compile: record why, and drop the "break" Dynamo's metrics made of
    the failing line (nothing ran eagerly there: the compiled call raised)."""
    error = result.compile_error = compile_error(failure)
    keep = [b for b in result.breaks if (b.file, b.line) != (error.file, error.line)]
    if len(keep) == len(result.breaks):
        return
    reorder_breaks(result, keep)
    result.summary.frames_skipped = sum(1 for f in result.frames if f.skipped and (
        f.fail_file, f.fail_line) != (error.file, error.line))
    recount(result)
