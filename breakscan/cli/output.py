"""Where a command's report goes: the console, stdout, ``-o FILE``, ``--html`` and the baseline.

Every command writes through these helpers, so a file format, an output path that is a folder or
one of the user's own source files, and the live status line behave the same in all of them.
A write the system refuses is the output's error (exit 2), on stdout (``> /dev/full``) as for
``-o``; a reader that left the pipe stays a BrokenPipeError (exit 141, see cli/exits.py).
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import time
from pathlib import Path
from typing import Any, Iterator, Optional

from rich.console import Console

from ..errors import UsageError
from ..report.literal import printable
from ..report.terminal import console as literal_console
from .exits import discard_stdout, say
from .flags import OutputFormat


class RefusedWrites:
    """A text stream whose refused writes and flushes (a full disk, ``> /dev/full``) become a
    one-line UsageError, as for ``-o``, and are remembered: the command ends with exit 2 even
    where a library swallows the error (click's help does); a closed pipe leaves as it came.
    Anything else is the stream's own."""

    def __init__(self, stream: Any):
        self._stream = stream
        self.refused: str | None = None

    def write(self, text: str) -> int:
        with self._refused():
            return self._stream.write(text)

    def flush(self) -> None:
        with self._refused():
            self._stream.flush()

    @contextlib.contextmanager
    def _refused(self) -> Iterator[None]:
        try:
            yield
        except BrokenPipeError:
            raise
        except OSError as exc:
            discard_stdout()  # the rest of the report is not written either
            self.refused = f"cannot write the report to stdout: {exc.strerror or exc}"
            raise UsageError(self.refused) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_stdout() -> Iterator[RefusedWrites]:
    """While a command runs, every write to stdout (a report, click's help, ``typer.echo``)
    goes through :class:`RefusedWrites`; flushed at the end, so a refused write is an error
    line here, not a complaint at Python's exit. The caller reads ``refused`` to end a command
    that caught the error and went on (click's help) with exit 2."""
    real = sys.stdout
    guard = sys.stdout = RefusedWrites(real)
    try:
        yield guard
        guard.flush()
    finally:
        sys.stdout = real


def make_console() -> Console:
    """A TTY gets its real size; a pipe or CI log gets 100 columns (rich's default is 80), or
    ``COLUMNS``. There its size and rich's own verdict on colour are fixed once, so rich does
    not ask the OS and the environment again on every print (a 500-target zoo: 10,000 prints)."""
    if sys.stdout.isatty():
        return literal_console()
    columns, lines = os.environ.get("COLUMNS", ""), os.environ.get("LINES", "")
    size = dict(width=int(columns) if columns.isdigit() and int(columns) else 100,
                height=int(lines) if lines.isdigit() and int(lines) else 25)
    return literal_console(**size, force_terminal=literal_console(**size).is_terminal)


def emit(runs, fmt: OutputFormat, output: Optional[Path], *, quiet: bool, verbose: bool,
         single: bool) -> None:
    """Write the chosen format (stdout, or -o FILE plus the terminal summary)."""
    from ..files import write_atomic
    from ..report import render_file_format, terminal

    console = make_console()
    if fmt is OutputFormat.terminal:
        terminal.render_runs(runs, console, quiet=quiet, verbose=verbose)
        return
    text = render_file_format(runs, fmt.value, single=single)
    if output is None:
        sys.stdout.write(text)
        return
    try:
        write_atomic(output, text)
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror}") from None
    terminal.render_runs(runs, console, quiet=True, verbose=False)
    console.print(f"wrote {printable(str(output))}", highlight=False)


def check_output(output: Optional[Path], fmt: OutputFormat) -> None:
    """An ``-o`` that cannot be written fails before any scan runs."""
    if output is not None and fmt is OutputFormat.terminal:
        raise UsageError("--output needs a file format: add --format json (or html, junit, "
                         "sarif, github, markdown)")
    if output is not None and output.is_dir():
        raise UsageError(f"--output {output} is a directory; name a file")
    if output is not None and not output.parent.is_dir():  # known before any scan runs
        raise UsageError(f"cannot write {output}: No such file or directory")


def outputs(output: Optional[Path], html: Optional[Path] = None,
            write_baseline: Optional[Path] = None) -> list[tuple[str, Optional[Path]]]:
    """The files a command will write, each with the flag that named it."""
    return [("-o", output), ("--html", html), ("--write-baseline", write_baseline)]


def target_sources(*targets: str) -> list[str]:
    """The files a target names (its own file; a module target's file), without importing."""
    from ..sources import target_file

    found = []
    for target in targets:
        try:
            file = target_file(target)
        except Exception:  # a malformed target fails later, with its own message
            file = None
        if file is not None:
            found.append(str(file))
    return found


def result_sources(runs) -> list[str]:
    """Every user file the finished results came from."""
    from ..runs.cache import source_files

    found: list[str] = []
    for run in runs:
        if run.result is not None and not run.result.ranks and run.result.program is None:
            found += sorted(source_files(run.target, run.result))
    return found


def save_baseline(path: Path, results) -> None:
    """--write-baseline: the gate's file, or a one-line usage error."""
    from ..runs.gate import write_baseline

    try:
        write_baseline(path, results)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None


def report_one(run, output_format: OutputFormat, output: Optional[Path], html: Optional[Path],
               write_baseline: Optional[Path], *, quiet: bool, verbose: bool) -> None:
    """A single run's report (and baseline): what ``scan`` and ``run`` print and write."""
    from ..files import refuse_over_sources

    refuse_over_sources(outputs(output, html, write_baseline), result_sources([run]))

    if write_baseline is not None and run.error is None:
        save_baseline(write_baseline, [run.result])
    if run.result is not None or output_format is not OutputFormat.terminal:
        emit([run], output_format, output, quiet=quiet, verbose=verbose, single=True)
    if html is not None:
        write_html([run], html)
    if write_baseline is not None and run.error is None:
        make_console().print(f"wrote baseline {printable(str(write_baseline))}", highlight=False)


def write_html(runs, path: Path, comparison=None) -> None:
    """--html: the self-contained page, and a line on stderr saying where it went."""
    from ..files import write_atomic
    from ..report.html import to_html

    if path.is_dir():
        raise UsageError(f"--html {path} is a directory; name a file")
    try:
        write_atomic(path, to_html(runs, comparison=comparison))
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror}") from None
    say(f"breakscan: wrote HTML report {path}")


@contextlib.contextmanager
def live_status(label: str, *, enabled: bool = True):
    """A status line on stderr with the elapsed time, the current stage and the target (TTY
    only); the target comes last, so a narrow terminal cuts it rather than the stage.

    Yields the ``on_stage`` callback for :func:`breakscan.process.isolate.run_isolated`, or None when
    stderr is not a terminal or the output is a file format: nothing then reaches stderr.
    """
    err = literal_console(stderr=True)
    if not enabled or not err.is_terminal:
        yield None
        return
    class Line:  # re-rendered on every refresh, so the elapsed time ticks
        started = time.monotonic()
        stage = "starting"

        def __rich__(self) -> str:
            return f"breakscan {time.monotonic() - self.started:.0f}s · {self.stage} · {label}"

    line = Line()

    def on_stage(name: str) -> None:
        line.stage = name

    with err.status(line, spinner="dots"):
        yield on_stage


def write_reports(runs: list, output_format: OutputFormat, output: Optional[Path], *,
                  html: Optional[Path], durations: Optional[Path], quiet: bool) -> None:
    """A zoo's reports (``check``, ``merge``): the format asked, the HTML page, the durations."""
    # The runs live until the process exits: frozen, the collector no longer walks their
    # hundreds of thousands of objects while the reports are built, nor once more at exit
    # (a 500-target merge: about 0.6 s of its 3; benchmarks/zoo_shards.py).
    gc.freeze()
    emit(runs, output_format, output, quiet=quiet, verbose=False, single=False)
    if html is not None:
        write_html(runs, html)
    if durations is not None:
        from ..runs.shard import record_durations

        record_durations(durations, runs)
