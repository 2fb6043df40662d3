"""Flag builders the commands share: one definition of each flag, its name and its limits.

A flag that several commands take (the gate's thresholds, the report's outputs, the way a model
is called and timed) is built here, so ``scan``, ``run``, ``trace``, ``check`` and ``compare``
spell it the same; a command passes its own help text where its meaning differs. A flag only
one command takes stays in that command's signature.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Optional

import typer

from ..options import DEFAULT_TIMEOUT_S
from ..report import FILE_FORMATS

# --format's choices: the terminal report and every file format report/ registers.
OutputFormat = Enum("OutputFormat", {name: name for name in ("terminal", *FILE_FORMATS)},
                    type=str)


# -- how the model is built, called and timed (scan, compare) ----------------------------------

def input_shape(help: Optional[str]) -> Any:
    return typer.Option(None, "--input-shape", "-s", help=help)


def dtype(help: Optional[str]) -> Any:
    return typer.Option("float32", help=help)


def device(help: Optional[str]) -> Any:
    return typer.Option("cpu", help=help)


def inputs(help: str) -> Any:
    return typer.Option(None, help=help)


def init_args(help: str) -> Any:
    return typer.Option(None, help=help)


def vary_batch(help: str) -> Any:
    return typer.Option(None, help=help)


def dynamic(help: str) -> Any:
    return typer.Option(None, metavar="true|false", help=help)


def compile_option(help: str) -> Any:
    return typer.Option(None, metavar="KEY=VALUE", help=help)


def backend(help: str) -> Any:
    return typer.Option("inductor", help=help)


def mode(help: Optional[str]) -> Any:
    return typer.Option(None, help=help)


def threads(help: Optional[str]) -> Any:
    return typer.Option(1, min=1, help=help)


def max_run_time(help: str) -> Any:
    return typer.Option(2.0, min=0.01, help=help)


# -- the gate (scan, run, trace; check reads it from the config) -------------------------------

def max_breaks() -> Any:
    return typer.Option(None, min=0, help="Gate: fail (exit 1) above this many root-cause "
                        "breaks.")


def max_graphs() -> Any:
    return typer.Option(None, min=0, help="Gate: fail above this many graphs.")


def max_recompiles(help: str) -> Any:
    return typer.Option(None, min=0, help=help)


def max_graph_calls(help: str) -> Any:
    return typer.Option(None, min=0, help=help)


def fail_on() -> Any:
    return typer.Option(None, help="Gate: fail on any break of these categories, e.g. "
                        "item,data_dependent_branch (or, with --kernels, on a kernel rule's "
                        "category, e.g. fallback).")


def kernels() -> Any:
    return typer.Option(False, "--kernels", help="Also compile each graph with Inductor once "
                        "and report its IR, kernels, fallbacks and where fusion stopped, at "
                        "your lines (BS2xx rules).")


def compile_time() -> Any:
    return typer.Option(False, "--compile-time", help="Also compile the model cold (empty "
                        "Inductor caches) and warm, and report where the compile time goes: "
                        "per compiled frame, its phases, and what breaks, restarts and "
                        "recompiles add.")


def max_compile_time() -> Any:
    return typer.Option(None, min=0.0, help="Gate: fail when the cold compile's frames take "
                        "longer than this many seconds (implies --compile-time).")


def max_compile_instructions() -> Any:
    return typer.Option(None, min=0, help="Gate: fail above this many instructions spent "
                        "compiling cold (torch's compile-time instruction counter, a count the "
                        "machine's load does not move; Linux perf events; implies "
                        "--compile-time).")


def max_kernels(help: str = "Gate: fail above this many kernels launched per model call (each "
                "graph's kernels times its calls; implies --kernels).") -> Any:
    return typer.Option(None, min=0, help=help)


def fullgraph() -> Any:
    return typer.Option(False, "--fullgraph", help="Gate: zero breaks and no skipped frames.")


def baseline() -> Any:
    return typer.Option(None, help="Gate: fail only on regressions against this baseline "
                        "file.")


def write_baseline(help: str) -> Any:
    return typer.Option(None, help=help)


# -- the report: its format, where it goes, how much of it -------------------------------------

def output_format(help: Optional[str] = None) -> Any:
    return typer.Option(OutputFormat.terminal, "--format", "-f", help=help)


def output(help: Optional[str] = "Write the report here (with a file --format).") -> Any:
    return typer.Option(None, "--output", "-o", help=help)


def html(help: str = "Also write a self-contained HTML report to this file.") -> Any:
    return typer.Option(None, "--html", help=help)


def quiet(help: str = "Print only the summary lines.") -> Any:
    return typer.Option(False, "--quiet", "-q", help=help)


def verbose(help: str) -> Any:
    return typer.Option(False, "--verbose", "-v", help=help)


def debug() -> Any:
    return typer.Option(False, "--debug", help="Show tracebacks for errors.")


# -- limits of the scan process ----------------------------------------------------------------

def timeout(help: str, default: Optional[float] = DEFAULT_TIMEOUT_S) -> Any:
    return typer.Option(default, min=0, help=help)


def memory_limit(help: str) -> Any:
    return typer.Option(None, min=1, help=help)


# -- a model zoo's expected counts (check, merge) ----------------------------------------------

def expected() -> Any:
    return typer.Option(
        None, help="The zoo's expected counts per target (JSON; default: 'expected' in "
        "[tool.breakscan]): each target PASS, FAIL, IMPROVED, NEW or MISSING; anything but "
        "PASS fails (see docs/ci.md).")


def update_expected() -> Any:
    return typer.Option(False, "--update-expected", help="Rewrite the --expected file from "
                        "this run (every target; not one shard), then gate against it.")


def allow_improvements() -> Any:
    return typer.Option(False, "--allow-improvements", help="A target whose counts went down "
                        "(IMPROVED) does not fail the run.")
