"""``breakscan compare``'s child (``OUTPUTS_JOB``): A and B loaded in one process, B given A's
weights (when their parameters have the same names and shapes), their eager outputs compared
from one random state, and both compiled models timed interleaved here: the only A-vs-B speed
comparison the report states.
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import running_model
from ..model.jobs import OutputsRequest
from ..model.verdicts import OutputsCheck
from .interleaved import Variant, time_interleaved
from .load import REDEFINED_DIFFERENTLY, load_target
from .outputs import compare_outputs, eager_outputs
from .state import CallState


def outputs_job(request: OutputsRequest, on_stage: Callable[[str, Any], None],
                on_progress: Any = None) -> OutputsCheck:
    """``compare``'s isolated child: A and B loaded here, B given A's weights, their eager
    outputs compared, both compiled and timed here, interleaved."""
    options = request.options
    load = options.load_options
    on_stage("load", None)
    first = load_target(request.a, **load)
    mark = len(REDEFINED_DIFFERENTLY)
    second = load_target(request.b, **load)
    one_op = sorted(set(REDEFINED_DIFFERENTLY[mark:]))  # B's definitions replaced A's
    second.args, second.kwargs = first.args, first.kwargs
    shared = True
    try:
        second.model.load_state_dict(first.model.state_dict())
    except (RuntimeError, KeyError):
        shared = False  # different parameters: compare anyway, both built from the same seed
    second.state = CallState(second.model)  # as built, with A's weights
    on_stage("eager run", None)
    with running_model("A's eager call"):
        expected = eager_outputs(first)
    with running_model("B's eager call"):
        actual = eager_outputs(second)
    correctness = compare_outputs(expected, actual)
    note = None if shared else "parameters differ (names or shapes): B kept its own weights"
    if one_op:  # torch keeps one definition per operator name in a process
        note = "; ".join(filter(None, [note, (
            f"A and B define custom op {', '.join(one_op)} with different code; one process "
            "holds one definition per name, so A ran B's: the outputs compare the rest of "
            "the models")]))
    ab = None
    if options.timing is not None:
        t = options.timing
        with running_model("timing A and B side by side"):
            ab, _, why = time_interleaved(
                Variant(first.fn, first.args, first.kwargs, dynamic=options.dynamic,
                        state=first.state),
                Variant(second.fn, second.args, second.kwargs, dynamic=options.dynamic,
                        state=second.state),
                device=first.device, training=first.training, backend=t.backend, mode=t.mode,
                threads=t.threads, max_run_time=t.max_run_time,
                compile_options=dict(options.compile_options),
                on_stage=lambda name: on_stage(name, None), on_progress=on_progress)
        if why:
            note = "; ".join(filter(None, [note, f"not timed side by side: {why}"]))
    return OutputsCheck(shared, correctness, note, ab)
