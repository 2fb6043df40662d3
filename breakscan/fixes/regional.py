"""``regional_compile``: compile the repeated block alone, not the whole model.

A model that calls one ``nn.Module`` class N times per forward (transformer layers, UNet blocks;
``ScanResult.repeated_blocks``, counted on the eager run) is compiled whole as N copies of that
block's code, traced and compiled one after another. Compiling each block's ``forward`` instead
(``block.compile()``; the rest of the model runs eagerly) compiles the code once and reuses it
for every instance. It is judged on what it is for, the compile: the verifying child compiles
the block alone and then the whole model, each cold (Dynamo reset, Inductor's caches in an empty
folder; the block first, so that anything the process keeps favours the whole model), and times
both compiled models interleaved in one process. ``verified``: the cold compile measurably
shorter (under 90 % of the whole model's), the same outputs, and the run time at most 5 %
slower (calling N compiled blocks costs N frame calls; the reason says both numbers);
``slower``: the compile is shorter but the model runs more than 5 % slower (both numbers); ``no
effect``: the compile is not shorter.
"""

from __future__ import annotations

from typing import Any

from ..frames import display_path
from ..model.result import FixedScan, ScanResult
from ..model.verdicts import Fix, FixMetrics
from ..rules.model import Switch

FIX_ID = "regional_compile"
SHORTER = 0.9  # the block's cold compile under this share of the whole model's: a saving
RUN_TIME_KEPT = 0.95  # run time at least this share of the whole model's speed: a fair trade


def plan_regional(result: ScanResult, before: FixMetrics) -> list[tuple[Fix, Switch]]:
    """The largest repeated block compiled alone, once per model (none for a program or a model
    that does not compile): the fix and the switch that compiles each block alone."""
    blocks = getattr(result, "repeated_blocks", None) or []
    if not blocks or getattr(result, "kind", "") == "program" or \
            getattr(result, "compile_error", None) is not None:
        return []
    block = blocks[0]
    instances = f"{block.instances} instance(s), " if block.instances != block.calls else ""
    setting = (f"for block in model.modules():\n    if isinstance(block, {block.name}):\n"
               "        block.compile()  # and call the model itself uncompiled")
    fix = Fix(rule="compile-time", fix_id=FIX_ID, kind="switch", category="compile_time",
              title=f"compile only the repeated block {block.name} ({instances}{block.calls}× "
                    f"per call, {display_path(block.file)}:{block.line}): each one's forward "
                    "compiled, one compiled code reused, the rest of the model eager",
              setting=setting, file=block.file or None, line=block.line or None, before=before)
    return [(fix, Switch(compile_only=f"@{block.name}.forward"))]


def cold_compiles(original: Any, fixed: Any, options: Any, sets: list[Any] | None = None,
                  dynamic: bool | None = None) -> tuple[float, float]:
    """(the original's cold compile, the fixed model's), the compiled frames' seconds over the
    same input sets, in this process, the fixed model first: the block alone against the whole
    model (regional_compile), or ``dynamic=True`` against the scan's setting (the recompiles
    it saves)."""
    from ..pipeline.call import model_call
    from ..pipeline.compile_time import first_inductor_use, measure_compile_time

    mode = options.timing.mode if options.timing else None
    first_inductor_use(mode)  # neither side pays Inductor's one-time costs
    changed = options.but(dynamic=True) if dynamic else options
    after = measure_compile_time(model_call(fixed, changed), mode, sets, warm=False)
    before = measure_compile_time(model_call(original, options), mode, sets, warm=False)
    return before.cold.frames_s, after.cold.frames_s


def record_compile(fix: Fix, fixed: FixedScan) -> None:
    """A fix whose child measured the cold compile (``dynamic``: the recompiles it saves):
    both figures on its numbers, its status as its graphs and recompiles decide."""
    if fixed.cold_compile_s is not None and fix.before is not None and fix.after is not None:
        fix.before.cold_compile_s, fix.after.cold_compile_s = fixed.cold_compile_s


def judge_regional(fix: Fix, fixed: FixedScan, outputs_reason: str | None) -> None:
    """The status of a regional compile, from its cold compile and its run time."""
    if fixed.cold_compile_s is None or fix.before is None or fix.after is None or \
            fix.status == "breaks compilation":
        return
    whole, regional = fixed.cold_compile_s
    record_compile(fix, fixed)
    compile_text = f"cold compile {whole:.2f} s -> {regional:.2f} s"
    ab = fixed.ab
    run_text = "run time not timed" if ab is None else f"run time {ab.said()}"
    if outputs_reason is not None:
        fix.status, fix.reason = "changes outputs", f"{outputs_reason} ({compile_text})"
    elif regional >= whole * SHORTER:
        fix.status = "no effect"
        fix.reason = f"no effect: {compile_text}, not measurably shorter ({run_text})"
    elif ab is not None and ab.verdict == "slower" and (
            ab.speedup is None or ab.speedup.value < RUN_TIME_KEPT):
        fix.status = "slower"
        fix.reason = (f"slower: {compile_text} ({whole / regional:.1f}x shorter), but the "
                      f"compiled model runs slower: {run_text}; apply it where compile time "
                      "matters more than run time")
    else:
        fix.status = "verified"
        kept = " (within 5 %: the cost of calling each compiled block)" if ab is not None and \
            ab.verdict == "slower" else ""
        fix.reason = f"{compile_text} ({whole / regional:.1f}x shorter); {run_text}{kept}"
    fix.verified = fix.status == "verified"
