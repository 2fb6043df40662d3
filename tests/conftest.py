"""Shared helpers: where the sample models live and how their docstrings state expectations."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_models"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# A fix that proved a gain in graphs, graph calls or returns to Python with the same outputs:
# "verified", or "slower" when the same-process timing says the model got slower (a timing:
# tests assert the proof, never the speed).
GAINED = ("verified", "slower")
FIX_STATUSES = ("verified: changes semantics", "verified", "slower", "no effect", "makes it worse", "breaks compilation",
                "changes outputs", "not applicable", "not tried")


def split_fix(text: str) -> tuple[str, str]:
    """A docstring's `fix:` value -> (fix id, status); a switch's id may hold a space
    (`switch:_hooked=not current verified`); `none` has no status."""
    for status in FIX_STATUSES:
        if text.endswith(" " + status):
            return text[: -len(status) - 1], status
    return text, ""


# The installed torch's release ("2.14.1"): a docstring's `graphs@2.14: 0` applies on it only,
# `graphs@2.14+: 0` on it and every later release.
TORCH_RELEASE = version("torch").split("+")[0]
_EXPECT_LINE = re.compile(r"^\s*(compile_error|exception|sites|follow_on|graphs|breaks|records|category|cause|break_at|frames_skipped|twin_of|same_outputs|calls|later_breaks|"
                          r"explain_breaks|ops|graph_calls_per_call|eager_gaps_per_call|"
                          r"frames_run_eagerly_per_call|fires_per_call|gb_id|advice_contains|"
                          r"consequences|fix)(?:@([\d.]+\+?))?:\s*(.+?)\s*$")


@dataclass
class Expectation:
    file: Path
    name: str
    facts: dict[str, str] = field(default_factory=dict)  # for the installed torch
    base: dict[str, str] = field(default_factory=dict)  # without `key@VERSION` lines: lint's

    @property
    def target(self) -> str:
        return f"{self.file}:{self.name}"

    def __str__(self) -> str:
        return f"{self.file.name}:{self.name}"


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split(".") if part.isdigit())


def _applies(version: str) -> bool:
    """`2.14` on torch 2.14.x; `2.14+` on 2.14 and every later release."""
    if version.endswith("+"):
        return _release(TORCH_RELEASE)[:2] >= _release(version[:-1])
    return f"{TORCH_RELEASE}.".startswith(f"{version}.")


# Public (tests/unit/conftest.py re-exports public names only): a test's per-release facts.
on_torch = _applies


def sample_expectations() -> list[Expectation]:
    """Every sample class whose docstring has an 'Expected scan' block."""
    found = []
    for path in sorted(SAMPLES.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            doc = ast.get_docstring(node) or ""
            if "Expected scan" not in doc:
                continue
            facts: dict[str, str] = {}
            versioned: list[tuple[tuple[int, ...], int, str, str]] = []
            for line in doc.split("Expected scan", 1)[1].splitlines():
                m = _EXPECT_LINE.match(line)
                if m and m.group(2) is None:
                    facts[m.group(1)] = m.group(3)
                elif m and _applies(m.group(2)):
                    exact = not m.group(2).endswith("+")
                    versioned.append((_release(m.group(2).rstrip("+")), exact, m.group(1),
                                      m.group(3)))
            # `key@2.14+: v` from 2.14 on, a later `key@2.15+` over it, `key@2.14: v` (2.14.x
            # only) over both
            ordered = {key: value for _, _, key, value in sorted(versioned)}
            found.append(Expectation(path, node.name, {**facts, **ordered}, facts))
    return found


_RUN_LINE = re.compile(r"^\s*([a-z_]+):\s*(.+?)\s*$")


def program_expectations() -> list[tuple[Path, dict[str, str]]]:
    """Every sample program whose module docstring has an 'Expected run' block."""
    found = []
    for path in sorted(SAMPLES.glob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text())) or ""
        if "Expected run" in doc:
            head, *lines = doc.split("Expected run", 1)[1].splitlines()
            facts = {m.group(1): m.group(2) for m in map(_RUN_LINE.match, lines) if m}
            # "Expected run (--capture-only --epochs 1):": the program's own arguments
            facts["args"] = head.strip(" ():").replace("--capture-only", "").strip()
            found.append((path, facts))
    return found


def shown(path: Path | str) -> str:
    """A path as the CLI prints it, run from ROOT (``run_cli``'s working directory): relative
    when under it, else absolute."""
    path = Path(path)
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def locate(break_at: str, default_file: Path) -> tuple[Path, int]:
    """'[file.py: ]source text' -> (file, line number of that unique source line)."""
    file = default_file
    m = re.match(r"^([\w./-]+\.py):\s*(.+)$", break_at)
    if m:
        file, break_at = default_file.parent / m.group(1), m.group(2)
    hits = [i for i, text in enumerate(file.read_text().splitlines(), 1)
            if text.strip() == break_at]
    assert len(hits) == 1, f"break_at {break_at!r} must match one line of {file}, got {hits}"
    return file, hits[0]


# For tests that need timings to exist, not to be precise: each timed variant runs 0.1 s at most.
QUICK = ("--backend", "eager", "--max-run-time", "0.1")


def fixes_in_process(target: str, shape: str | None = "8,16", **fields: object) -> list[dict]:
    """``--fix`` QUICK's JSON ``fixes`` (``fields``: more ScanOptions, e.g. ``train=True``),
    with each fix's job run in this process (``verify_fixes(isolate=False)``: the same
    planning, job and judgement, without a ~3 s torch import per fix)."""
    import json

    from breakscan import Limits, ScanOptions, TimingOptions, scan
    from breakscan.fixes.verify import verify_fixes

    options = ScanOptions(input_shapes=(shape,) if shape else (),
                          timing=TimingOptions(backend="eager", max_run_time=0.1), **fields)
    result = scan(target, options)
    result.fixes = verify_fixes(target, options, result, Limits(), isolate=False)
    return json.loads(json.dumps(result.to_dict()))["fixes"]


def run_cli(*args: str, cwd: Path | str = ROOT, env: dict | None = None,
            timeout: int = 300, input: str | None = None) -> subprocess.CompletedProcess:
    """The real CLI in a subprocess, as a user or CI script runs it."""
    # Not the test runner's terminal: pytest-xdist workers set COLUMNS=80, which would narrow
    # the report to 80 columns (a user's pipe gets 100).
    full_env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS",
                                                                 "LINES")}
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "breakscan", *args], cwd=cwd, env=full_env,
                          capture_output=True, text=True, timeout=timeout,
                          input="" if input is None else input)


def ctrl_c_reaches_it() -> None:
    """``preexec_fn`` for a CLI a test sends SIGINT to: a test run started in the background of
    a non-interactive shell (``pytest … &``) inherits SIGINT ignored, and so would the CLI."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_on_terminal(*args: str, cwd: Path | str = ROOT, timeout: int = 300) -> str:
    """The real CLI on a pseudo-terminal (util-linux ``script``), 200 columns wide and with a
    real TERM (rich draws no live line under TERM=dumb); returns the screen, escapes removed.
    Skips when ``script`` is missing."""
    import shlex
    import shutil
    import tempfile

    if shutil.which("script") is None:
        pytest.skip("util-linux `script` (a pseudo-terminal) is not installed")
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS")}
    env["TERM"] = "xterm-256color"
    command = "stty cols 200; " + shlex.join([sys.executable, "-m", "breakscan", *args])
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "screen"
        subprocess.run(["script", "-qec", command, str(log)], stdout=subprocess.DEVNULL,
                       cwd=cwd, env=env, timeout=timeout)
        screen = log.read_text(errors="replace")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen)


@pytest.fixture(scope="session")
def samples() -> Path:
    return SAMPLES


def tensor_branch_project(tmp_path: Path) -> Path:
    """A user's project: tensor_branch.py and a [tool.breakscan] target (TensorIf, max-breaks 0)
    that ``breakscan check`` fails."""
    import shutil
    import textwrap

    shutil.copy(SAMPLES / "tensor_branch.py", tmp_path / "tensor_branch.py")
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent("""
        [tool.breakscan]
        [[tool.breakscan.targets]]
        target = "tensor_branch.py:TensorIf"
        input-shape = ["8,16"]
        max-breaks = 0
    """))
    return tmp_path


def assert_the_twin_wins(doc: dict, good: Expectation) -> None:
    """A compare document of a broken sample (A) and its fixed twin (B): B is better where the
    pair says, and the in-process A/B interval is well formed."""
    if doc["a"]["result"]["compile_error"]:  # A does not compile at all: B does
        assert doc["b"]["result"]["compile_error"] is None and doc["ab"] is None
        assert doc["b"]["result"]["summary"]["graph_count"] >= 1
        return
    a, b = doc["a"]["result"]["summary"], doc["b"]["result"]["summary"]
    assert (b["graph_break_count"] < a["graph_break_count"]
            or (b["recompile_count"] or 0) < (a["recompile_count"] or 0)
            or b["op_count"] < a["op_count"]), (a, b)  # breaks, recompiles, or unrolled ops
    assert b["graph_break_count"] == 0
    assert doc["weights_shared"]
    assert doc["outputs"]["match"] is (good.facts.get("same_outputs") != "no")
    for side in ("a", "b"):
        timings = doc[side]["result"]["timings"]
        assert timings["eager"]["median_s"] > 0 and timings["compiled"]["median_s"] > 0
    ab = doc["ab"]  # A and B compiled and timed in one process: the only speed comparison
    assert ab["blocks"] >= 10
    for side in ("original", "fixed"):
        assert ab[side]["low"] <= ab[side]["value"] <= ab[side]["high"]
    if ab["speedup"] is None:  # a side's blocks spread beyond their median (a loaded machine)
        assert ab["verdict"] == "not measured" and ab["unmeasured"]
        return
    assert ab["speedup"]["low"] <= ab["speedup"]["value"] <= ab["speedup"]["high"]
    assert ab["verdict"] in ("faster", "slower", "no measurable difference")


def inductors_own_kernel_count(target: str, **load: object) -> int:
    """``torch._inductor.metrics.generated_kernel_count`` of a plain ``torch.compile`` of the
    target (fresh Dynamo, the FX-graph cache off so Inductor lowers): what ``--kernels`` must
    report, summed over the graphs."""
    import torch
    import torch._inductor.config as config
    from torch._inductor import metrics

    from breakscan.pipeline.load import load_target

    loaded = load_target(target, **load)
    torch._dynamo.reset()
    metrics.reset()
    with config.patch(fx_graph_cache=False), torch.no_grad():
        torch.compile(loaded.fn)(*loaded.args, **loaded.kwargs)
    torch._dynamo.reset()
    return metrics.generated_kernel_count


def _ids(name: str) -> set[str]:
    return {line.strip() for line in (FIXTURES / name).read_text().splitlines()
            if line.strip() and not line.startswith("#")}


# Registry ids of torch 2.13.0, and those 2.14.1 and 2.15.0 add (read from each one's registry)
TORCH_213_IDS = _ids("registry_2_13_ids.txt")
TORCH_214_IDS = _ids("registry_2_14_new_ids.txt")
TORCH_215_IDS = _ids("registry_2_15_new_ids.txt")


def chromium_renders(page: str, name: str, tmp_path: Path) -> dict:
    """A report page as headless Chromium lays it out in a 1,280-pixel-wide window: its DOM,
    whether it scrolls sideways (measured on a copy with a one-line script: the report itself
    has none) and a screenshot, kept in ``$BREAKSCAN_ARTIFACTS`` (CI keeps it) or ``tmp_path``."""
    import shutil
    import subprocess as sp

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        import pytest

        pytest.skip("chromium not installed (.ci/run installs it)")
    out = Path(os.environ.get("BREAKSCAN_ARTIFACTS") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    path, probe = out / f"{name}.html", tmp_path / f"{name}.probe.html"
    path.write_text(page, encoding="utf-8")
    measuring = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)  # copy
    probe.write_text(measuring.replace("</body>", "<script>document.body.setAttribute('data-widths', "
                                  "document.documentElement.scrollWidth + ' ' + "
                                  "document.documentElement.clientWidth)</script></body>"),
                     encoding="utf-8")
    base = [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1280,2000"]
    measured = sp.run(base + ["--dump-dom", probe.resolve().as_uri()], capture_output=True,
                      text=True, timeout=120, check=True).stdout
    scroll, client = map(int, re.search(r'data-widths="(\d+) (\d+)"', measured).groups())
    dom = sp.run(base + ["--dump-dom", path.resolve().as_uri()], capture_output=True, text=True,
                 timeout=120, check=True).stdout
    shot = out / f"{name}-1280.png"
    sp.run(base + [f"--screenshot={shot}", path.resolve().as_uri()], capture_output=True,
           timeout=120, check=True)
    return {"dom": dom, "scroll_width": scroll, "client_width": client, "screenshot": shot}
