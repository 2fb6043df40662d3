"""GitHub Actions: workflow-command annotations (shown on the PR diff) and a Markdown summary
for ``$GITHUB_STEP_SUMMARY``."""

from __future__ import annotations

import os
from typing import Any

from ..frames import display_path, repo_path
from ..model.result import ModelRun
from ..model.result import whole as count
from ..rules.categories import CATEGORIES
from .literal import printable
from .paths import recompile_location
from .terminal_compile import cache_text, frame_label
from .wording import check_text, ms, recompile_reasons


def _escape_data(text: str) -> str:
    """A workflow command's data: %, CR and LF encoded, other control characters (ESC, NUL)
    shown as \\xNN, so a model's text can never start a command of its own."""
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def to_github(runs: list[ModelRun]) -> str:
    lines = []
    for run in runs:
        if run.error is not None:
            lines.append(f"::error title=breakscan::{_escape_data(f'{run.target}: {run.error}')}")
        if run.result is None:
            continue
        gate = run.result.gate
        level = "error" if gate is not None and not gate.passed else "warning"
        error = run.result.compile_error
        if error is not None:
            in_repo = bool(error.file) and not os.path.isabs(repo_path(error.file))
            where = f"file={_escape_property(repo_path(error.file))},line={error.line}," \
                if in_repo else ""
            at = f" at {shown_path(error.file)}:{error.line}" if error.file and not in_repo \
                else ""
            lines.append(f"::error {where}title={_escape_property('torch.compile fails')}::"
                         + _escape_data(f"{run.target}: {error.exception}: {error.message}{at}"))
        for brk in run.result.breaks:
            title = _escape_property(f"graph break: {brk.category}")
            file, line, inside = _annotated(brk)
            message = _escape_data(f"{CATEGORIES[brk.category].title} ({brk.gb_id or '-'}): "
                                   f"{inside}{brk.code}\nfix: {brk.suggestion}")
            where = f"file={_escape_property(file)},line={line}," if file else ""
            lines.append(f"::{level} {where}title={title}::{message}")
        for finding in run.result.kernel_findings:  # --kernels: at the user's line
            if finding.file and finding.line:
                title = _escape_property(f"{finding.rule} kernel: {finding.category}")
                lines.append(f"::{level} file={_escape_property(repo_path(finding.file))},"
                             f"line={finding.line},title={title}::"
                             + _escape_data(f"{finding.message} (graph {finding.graph})"))
        for check in (gate.failed() if gate else []):
            if check.name == "compiles":
                continue  # annotated above, at its line
            summary = f"{run.target}: {check_text(check)}"
            recompiles = run.result.recompiles.recompiles if check.name == "max_recompiles" \
                and run.result.recompiles else []
            for rec in recompiles:  # each recompile at the guard's line (else the function's)
                file, line = recompile_location(rec)
                reasons = recompile_reasons(rec)
                where = f"file={_escape_property(file)},line={line}," \
                    if file and file != "?" and line and line >= 1 else ""
                lines.append(f"::error {where}"
                             f"title={_escape_property('breakscan gate: recompile')}::"
                             + _escape_data(f"{summary}\n{rec.function}() recompiled: {reasons}"))
            if not recompiles:
                lines.append("::error title=breakscan gate::" + _escape_data(summary))
    return "\n".join(lines) + ("\n" if lines else "")


def _annotated(brk: Any) -> tuple[str | None, int, str]:
    """Where a break's annotation goes: its line in the repository; for one in an installed
    package, the user's line that calls into it (the package's path said in the message), or
    no file at all (GitHub cannot show a file outside the repository)."""
    if not os.path.isabs(repo_path(brk.file)):
        return repo_path(brk.file), brk.line, ""
    inside = f"in {display_path(brk.file)}:{brk.line}: "
    user = brk.user_frame
    if user is not None and not os.path.isabs(repo_path(user.file)):
        return repo_path(user.file), user.line, inside
    return None, 0, inside


def shown_path(path: str) -> str:
    """A path in a human format: relative to the repository when in it, else as reports show
    it (an installed package's from its top module)."""
    relative = repo_path(path)
    return relative if not os.path.isabs(relative) else display_path(path)


def _cell(text: str) -> str:
    """One line of a Markdown table cell: pipes escaped, control characters as \\xNN."""
    return printable(text.replace("\r", " ").replace("\n", " ")).replace("|", "\\|")


def _code(text: str) -> str:
    """Inside a code span: a backtick in the text would end it early."""
    return _cell(text).replace("`", "'")


def _text(text: str) -> str:
    """Prose: no HTML reaches the page."""
    return _cell(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_markdown(runs: list[ModelRun]) -> str:
    out = ["## breakscan", "", "| model | status | graphs | breaks | recompiles | failed checks |",
           "|---|---|---:|---:|---:|---|"]
    for run in runs:
        if run.error is not None:
            out.append(f"| `{_code(run.target)}` | error | | | | {_text(run.error)} |")
            continue
        s, gate = run.result.summary, run.result.gate
        status = "no gate" if gate is None else ("pass" if gate.passed else "**FAIL**")
        if run.result.compile_error is not None:
            status = "**torch.compile fails**"
        if run.cached:
            status += " (cached)"
        failed = ", ".join(f"{c.name} ({c.actual} > {c.limit})" for c in gate.failed()) \
            if gate else ""
        varied = run.result.recompiles is not None  # "-": never called with other inputs
        out.append(f"| `{_code(run.target)}` | {status} | {s.graph_count} | "
                   f"{s.graph_break_count} | {s.recompile_count if varied else '-'} | "
                   f"{_text(failed)} |")
    for run in runs:
        program = run.result.program if run.result is not None else None
        if program is not None and program.regions:
            kernels = any(r.kernels_per_call is not None for r in program.regions)
            out += ["", f"### Compiled regions of `{_code(run.target)}`", "",
                    "| region | calls | graph calls | returns to Python | frames run eagerly |"
                    + (" kernels per call |" if kernels else ""),
                    "|---|---:|---:|---:|---:|" + ("---:|" if kernels else "")]
            out += [f"| `{_code(r.name)}` | {r.calls} | {r.graph_calls} | {r.eager_gaps} | "
                    f"{r.frames_run_eagerly} |" + (
                        f" {count(r.kernels_per_call) if r.kernels_per_call is not None else '-'} |"
                        if kernels else "") for r in program.regions]
        if run.result is not None and run.result.compile_time is not None:
            out += _compile_time_table(run)
        error = run.result.compile_error if run.result is not None else None
        if run.result is None or not (run.result.breaks or error):
            continue
        out += ["", f"### `{_code(run.target)}`", ""]
        if error is not None:
            where = f"`{_code(shown_path(error.file))}:{error.line}` " if error.file else ""
            out.append(f"- **torch.compile fails** {where}`{_code(error.code or '')}` — "
                       f"{_text(error.exception)}: {_text(error.message)}")
        for brk in run.result.breaks:
            out.append(f"- **{brk.category}** `{_code(shown_path(brk.file))}:{brk.line}` "
                       f"`{_code(brk.code)}` — {_text(brk.suggestion)}")
    return "\n".join(out) + "\n"


def _compile_time_table(run: ModelRun) -> list[str]:
    """--compile-time: the cold and warm totals and every cold frame with its phases."""
    found = run.result.compile_time

    def cell(value: float | None) -> str:
        return ms(value) if value is not None else "-"

    warm = f", warm {ms(found.warm.wall_s)} ({cache_text(found.warm)})" if found.warm else ""
    out = ["", f"### Compile time of `{_code(run.target)}` (backend {_text(found.backend)})", "",
           f"Cold {ms(found.cold.wall_s)} ({cache_text(found.cold)}){warm}; of the cold "
           f"frames: breaks {ms(found.breaks_s)}, restarts {ms(found.restart_s)}, recompiles "
           f"{ms(found.recompile_s)}.", "",
           "| frame | compile | Dynamo | restarts | AOT | Inductor | codegen | ops | because of |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for f in sorted(found.cold.frames, key=lambda f: -f.total_s):
        why = ", ".join(filter(None, [
            f"break #{f.break_index + 1}" if f.break_index is not None else "",
            "recompile" if f.recompile else ""]))
        out.append(f"| `{_code(frame_label(f))}` | {ms(f.total_s)} | {cell(f.dynamo_s)} | "
                   f"{cell(f.restart_s)} | {cell(f.aot_s)} | {cell(f.inductor_s)} | "
                   f"{cell(f.codegen_s)} | {f.ops if f.ops is not None else '-'} | "
                   f"{_text(why) or '-'} |")
    return out
