"""Command line: a thin typer layer over :func:`breakscan.scan`.

``breakscan FILE.py:NAME …`` is the scan itself (the ``scan`` subcommand is implied), so the form
users type and CI scripts call stays short. Exit codes: 0 ok, 2 usage/input error, 3 the model's
own code failed (see README).
"""

from __future__ import annotations

import os
import sys
import traceback
from enum import Enum
from pathlib import Path
from typing import List, Optional

import typer
from rich.console import Console

from . import __version__
from .errors import EXIT_USAGE, BreakscanError, UsageError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Find, explain and fix torch.compile graph breaks.",
                  context_settings={"help_option_names": ["-h", "--help"]})
SUBCOMMANDS = {"scan", "version"}


class OutputFormat(str, Enum):
    terminal = "terminal"
    json = "json"


def make_console() -> Console:
    """A TTY gets its real width; a pipe or CI log gets 100 columns (rich's default is 80)."""
    width = None if sys.stdout.isatty() else int(os.environ.get("COLUMNS") or 100)
    return Console(highlight=False, width=width)


def _fail(exc: BaseException, debug: bool) -> None:
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    if debug:
        err.print(traceback.format_exc(), markup=False)
    code = exc.exit_code if isinstance(exc, BreakscanError) else EXIT_USAGE
    err.print(f"breakscan: error: {exc}", markup=False)
    raise typer.Exit(code)


@app.command()
def scan(
    target: str = typer.Argument(..., help="FILE.py:NAME, FILE.py:NAME.method or pkg.module:NAME"),
    input_shape: Optional[List[str]] = typer.Option(
        None, "--input-shape", "-s", help="Shape of one positional input, e.g. 8,16 (repeat "
        "once per input)."),
    dtype: str = typer.Option("float32", help="dtype of the generated inputs (int64 for token "
                              "ids: values stay below the smallest embedding table)."),
    device: str = typer.Option("cpu", help="cpu, cuda or auto (cuda when available)."),
    inputs: Optional[str] = typer.Option(None, help="FILE.py:make_inputs returning a tuple, "
                                         "dict or tensor, instead of --input-shape."),
    init_args: Optional[str] = typer.Option(None, help="JSON keyword arguments for NAME(...)"),
    method: Optional[str] = typer.Option(None, help="Method to scan instead of forward."),
    train: bool = typer.Option(False, "--train", help="Scan in train() mode with autograd on "
                               "(default: eval() under torch.no_grad())."),
    vary_batch: Optional[str] = typer.Option(
        None, help="Also call the compiled model with these batch sizes (e.g. 2,4,16) and "
        "report every recompile."),
    shapes: Optional[List[str]] = typer.Option(
        None, help="Also call it with these input shapes (repeatable; one value per call, "
        "inputs separated by spaces, e.g. --shapes 8,32) and report recompiles."),
    time_it: bool = typer.Option(False, "--time", help="Also time eager vs torch.compile vs "
                                 "fullgraph=True and check compiled outputs against eager."),
    backend: str = typer.Option("inductor", help="torch.compile backend for --time."),
    mode: Optional[str] = typer.Option(None, help="torch.compile mode for --time "
                                       "(e.g. max-autotune)."),
    threads: int = typer.Option(1, min=1, help="CPU threads for --time (set before compiling; "
                                "reported)."),
    output_format: OutputFormat = typer.Option(OutputFormat.terminal, "--format", "-f"),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report here "
                                          "(with --format json)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print only the two summary lines."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Also show Dynamo's own logs "
                                 "and what the model printed."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for errors."),
) -> None:
    """Scan a model for graph breaks and report each with its cause and fix."""
    from .report import json as json_report
    from .report import terminal
    from .scan import TimingOptions
    from .scan import scan as run_scan

    try:
        if output is not None and output_format is OutputFormat.terminal:
            raise UsageError("--output needs a file format: add --format json")
        if output is not None and output.is_dir():
            raise UsageError(f"--output {output} is a directory; name a file")
        timing = TimingOptions(backend=backend, mode=mode, threads=threads) if time_it else None
        result = run_scan(target, input_shapes=input_shape, dtype=dtype, device=device,
                          inputs=inputs, init_args=init_args, method=method, train=train,
                          verbose=verbose, vary_batch=vary_batch, shapes=shapes, timing=timing)
        console = make_console()
        if output_format is OutputFormat.json:
            text = json_report.to_json(result)
            if output is None:
                sys.stdout.write(text)
                return
            try:
                json_report.write_atomic(output, text)
            except OSError as exc:
                raise UsageError(f"cannot write {output}: {exc.strerror}") from None
            terminal.render(result, console, quiet=True)
            console.print(f"wrote {output}", highlight=False)
            return
        terminal.render(result, console, quiet=quiet, verbose=verbose)
    except (BreakscanError, typer.Exit) as exc:
        if isinstance(exc, typer.Exit):
            raise
        _fail(exc, debug)


@app.command()
def version() -> None:
    """Print breakscan's and torch's versions."""
    import torch

    typer.echo(f"breakscan {__version__} (torch {torch.__version__})")


def main(argv: list[str] | None = None) -> None:
    """Entry point: ``breakscan TARGET …`` means ``breakscan scan TARGET …``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--version"], ["-V"]):
        args = ["version"]
    first = next((a for a in args if not a.startswith("-")), None)
    if first is not None and first not in SUBCOMMANDS and not {"-h", "--help"} & set(
            args[:args.index(first)]):
        args.insert(args.index(first), "scan")
    try:
        code = app(args=args, prog_name="breakscan", standalone_mode=False)
    except Exception as exc:
        # typer vendors click: match its usage errors (bad option or value) by shape.
        if not hasattr(exc, "format_message"):
            raise
        if type(exc).__name__ == "Abort":
            sys.exit(130)
        if exc.format_message():  # empty when no arguments made click print the help
            Console(stderr=True, highlight=False, soft_wrap=True).print(
                f"breakscan: error: {exc.format_message()} (see breakscan --help)", markup=False)
        sys.exit(EXIT_USAGE)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
