"""The house's shape, kept by tests: no import cycles, one place per decision, a map that is true.

Read from the source with ``ast`` (nothing is imported), so a lazy import inside a function
counts as much as one at the top. The cycle check counts ``if TYPE_CHECKING:`` imports too (a
cycle hidden behind them is still two modules that need each other); the other checks leave
them out (they never run).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGE = ROOT / "breakscan"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(name: str) -> bool:
    base = ROOT.joinpath(*name.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def _type_checking_only(tree: ast.Module) -> set[int]:
    """ids of the import nodes inside ``if TYPE_CHECKING:`` blocks."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            skipped |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    return skipped


def import_graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    """Each breakscan module -> the breakscan modules it imports (anywhere in its code;
    ``type_checking``: also inside ``if TYPE_CHECKING:``)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        tree = ast.parse(path.read_text())
        skipped = set() if type_checking else _type_checking_only(tree)
        deps: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in skipped:
                continue
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.split(".")[0] == "breakscan"}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                if source.split(".")[0] != "breakscan":
                    continue
                for alias in node.names:  # `from . import pipeline` imports a module
                    sub = f"{source}.{alias.name}"
                    deps.add(sub if _is_module(sub) else source)
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan), plus self-loops."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_cycle_finder_finds_a_cycle():
    """The check itself can fail: a two-module loop and a three-module loop are found."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": set()}) == [["a", "b"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_has_no_import_cycles():
    graph = import_graph(type_checking=True)
    assert "breakscan.errors" in graph["breakscan.cli"], graph  # the graph is really read
    assert "breakscan.model.result" in graph["breakscan.runs.shard"]  # TYPE_CHECKING imports count
    assert cycles(graph) == []


# The folders from the bottom up: each imports only from its own folder and those below it.
# "base" is the top level's modules (errors, files, frames, options, …); "root" is the package's
# own ``__init__`` (the Python API) and ``__main__``.
LAYERS = ("rules", "base", "model", "lint", "dynamo", "analysis", "trace", "process", "pipeline",
          "fixes", "runs", "report", "testing", "cli", "root")
MAX_TOP_LEVEL_MODULES = 12


def layer_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__main__":
        return "root"
    return parts[1] if parts[1] in LAYERS else "base"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return [f"{m} -> {d}" for m, deps in sorted(graph.items()) for d in sorted(deps)
            if LAYERS.index(layer_of(d)) > LAYERS.index(layer_of(m))]


def test_folders_import_only_downward():
    """The order of LAYERS, lazy imports and ``if TYPE_CHECKING:`` imports included; the check
    can fail (a lint module importing the analysis is found)."""
    assert upward_imports({"breakscan.lint.checks": {"breakscan.analysis.loops"}}) == [
        "breakscan.lint.checks -> breakscan.analysis.loops"]
    graph = import_graph(type_checking=True)
    folders = {p.parent.name for p in PACKAGE.rglob("*/__init__.py")}
    assert folders <= set(LAYERS), f"a folder with no place in LAYERS: {folders - set(LAYERS)}"
    assert upward_imports(graph) == []


def test_the_top_level_holds_few_modules():
    """New concepts get a folder: the top level keeps the few modules every stage needs."""
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_isolation_knows_no_job_type():
    """The child runs a job named in its request: isolation (both sides) and the job names
    import no stage or side tool."""
    graph = import_graph()
    deps = graph["breakscan.process.isolate"] | graph["breakscan.process.child"] \
        | graph["breakscan.process.jobs"]
    assert not deps & {"breakscan.pipeline.scan", "breakscan.pipeline.program_scan",
                       "breakscan.pipeline.outputs_job", "breakscan.fixes.fix_job",
                       "breakscan.fixes.verify", "breakscan.runs.compare",
                       "breakscan.runs.check", "breakscan.runs.runner"}, deps


def test_every_module_says_what_it_owns():
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "__main__.py":
            continue
        doc = ast.get_docstring(ast.parse(path.read_text()))
        assert doc and len(doc.splitlines()[0]) > 20, f"{path.name} has no one-line docstring"


def _code_strings(tree: ast.Module) -> list[str]:
    """The string constants of a module's code (docstrings, which may show a format, left out)."""
    docs = {id(body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and (body := node.body) and isinstance(body[0], ast.Expr)}
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
            and isinstance(n.value, str) and id(n) not in docs]


def test_frames_and_paths_are_decided_in_one_module():
    """Only frames.py reads printed stacks or tells installed packages from user code."""
    stack_pattern = re.compile(r"""File \\?["'].*line""")
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "frames.py":
            continue
        strings = _code_strings(ast.parse(path.read_text()))
        assert not any("site-packages" in s for s in strings), \
            f"{path.name} decides whose file it is"
        assert not any(stack_pattern.search(s) for s in strings), \
            f"{path.name} parses a printed stack itself"
        assert "relpath" not in path.read_text(), f"{path.name} makes its own display path"
    assert any("site-packages" in s for s in _code_strings(ast.parse(
        (PACKAGE / "frames.py").read_text())))  # the test looks where the decision is


def test_the_architecture_map_names_every_module():
    """docs/architecture.md is the map: every module is on it, and nothing that is gone. The
    rule modules and the modules of their source fixes are on docs/rules.md, the page generated
    from the catalogue (so a new rule is on the map when its page is regenerated)."""
    text = (ROOT / "docs" / "architecture.md").read_text() + \
        (ROOT / "docs" / "rules.md").read_text()
    named = set(re.findall(r"`((?:\w+/)?\w+)\.py`", text))
    actual = {str(p.relative_to(PACKAGE).with_suffix("")) for p in PACKAGE.rglob("*.py")
              if p.name not in ("__init__.py", "__main__.py")}
    assert actual - named == set(), f"not on the map: {sorted(actual - named)}"
    assert named - actual == set(), f"on the map but gone: {sorted(named - actual)}"


def test_every_option_is_a_field_of_one_options_object():
    """[tool.breakscan] keys and the CLI's flags land on fields of the frozen option objects."""
    import dataclasses
    import inspect

    from breakscan import config, options
    from breakscan.cli.run import run
    from breakscan.cli.scan import scan

    def names(cls):
        return {f.name for f in dataclasses.fields(cls)}

    assert set(config.SCAN_KEYS.values()) <= names(options.ScanOptions)
    assert set(config.GATE_KEYS.values()) <= names(options.GateOptions)
    assert set(config.LIMIT_KEYS.values()) <= names(options.Limits)
    flags = set(inspect.signature(scan).parameters)
    renamed = {"input_shapes": "input_shape", "memory_limit_mb": "memory_limit",
               "compile_options": "compile_option"}
    for cls, internal in ((options.ScanOptions, {"timing"}),
                          (options.TimingOptions, {"fullgraph", "dynamic"}),
                          (options.GateOptions, {"baseline_root"}),
                          (options.Limits, {"threads"})):  # threads: set by `check -j`
        missing = {renamed.get(n, n) for n in names(cls) - internal} - flags
        assert not missing, f"{cls.__name__} fields with no flag on `breakscan scan`: {missing}"
    run_flags = set(inspect.signature(run).parameters)
    for cls, internal in ((options.ProgramOptions, {"script", "args"}),  # the `program` words
                          # a program's compile time is not measured (--compile-time: a model)
                          (options.GateOptions, {"baseline_root", "max_compile_time",
                                                 "max_compile_instructions"}),
                          (options.Limits, {"threads"})):
        missing = {renamed.get(n, n) for n in names(cls) - internal} - run_flags
        assert not missing, f"{cls.__name__} fields with no flag on `breakscan run`: {missing}"
    assert "program" in run_flags
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.ScanOptions().dtype = "int64"  # frozen: one object, passed, never edited


def _modules(*, outside: tuple[str, ...] = ()) -> list[str]:
    names = [_module_name(p) for p in sorted(PACKAGE.rglob("*.py")) if p.name != "__main__.py"]
    return [n for n in names if n.split(".")[1:2] not in ([f] for f in outside)]


def test_the_parent_process_never_imports_torch():
    """Everything outside ``pipeline/`` and ``dynamo/`` (the CLI, options, runner, gate,
    reporters, analysis, trace, lint, fixes' planning) imports no torch: only the isolated
    child pays for it."""
    import subprocess
    import sys

    modules = _modules(outside=("pipeline", "dynamo"))
    assert "breakscan.analysis.analyse" in modules and "breakscan.report.terminal" in modules
    code = f"import sys; import {', '.join(modules)}; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr


MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _is_command(node: ast.AST) -> bool:
    """A typer command: its signature (one option per parameter) is not counted."""
    return any("command" in ast.unparse(d) for d in getattr(node, "decorator_list", []))


def long_units() -> list[str]:
    """Modules over MAX_MODULE_LINES and functions over MAX_FUNCTION_LINES (a typer command's
    body only)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text()
        where = path.relative_to(PACKAGE)
        if len(text.splitlines()) > MAX_MODULE_LINES:
            found.append(f"{where}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = node.body[0].lineno if _is_command(node) else node.lineno
                if node.end_lineno - start + 1 > MAX_FUNCTION_LINES:
                    found.append(f"{where}:{node.lineno} {node.name}(): "
                                 f"{node.end_lineno - start + 1} lines")
    return found


def test_no_long_modules_or_functions():
    """A unit a reader takes in at once: modules up to ~400 lines, functions up to ~60."""
    assert long_units() == []


def test_every_folder_is_a_package_the_wheel_ships():
    """pyproject finds packages (``breakscan*``): a folder of modules without ``__init__.py``
    would be left out of a non-editable install."""
    from setuptools import find_packages

    folders = {p.parent for p in PACKAGE.rglob("*.py")}
    assert all((f / "__init__.py").exists() for f in folders), folders
    found = set(find_packages(str(ROOT), include=["breakscan*"]))
    assert found == {_module_name(f / "__init__.py") for f in folders}


# Words that are a rule's category and also mean something else (a Tensor method, a builtin, a
# kind of kernel, a Dynamo config attribute, an escape hatch, a fix id): where they may appear.
NOT_A_CATEGORY = {
    ("analysis/kernels.py", "fallback"): "a kernel's kind",
    ("pipeline/kernels.py", "fallback"): "a kernel's kind",
    ("dynamo/inductor.py", "fallback"): "a kernel's kind",
    ("report/wording.py", "fallback"): "a kernel's kind",
    ("dynamo/session.py", "recompile_limit"): "torch._dynamo.config's attribute",
    ("pipeline/measure.py", "recompile_limit"): "torch._dynamo.config's attribute",
    ("analysis/roots.py", "custom_op"): "the torch.library.custom_op decorator",
    ("fixes/escape.py", "custom_op"): "an escape hatch",
    ("fixes/escape.py", "escape_hatch"): "the fix id",
    ("fixes/escape.py", "item"): "the Tensor method",
    ("fixes/fake_shapes.py", "item"): "the Tensor method",
    ("fixes/where.py", "item"): "the Tensor method",
    ("fixes/host_equivalents.py", "item"): "the Tensor method",
    ("lint/tensors.py", "item"): "the Tensor method",
    ("fixes/escape.py", "print"): "the builtin",
    ("fixes/syntax.py", "print"): "the builtin",
    ("fixes/where.py", "print"): "the builtin",
    ("lint/tensors.py", "print"): "the builtin",
}


def category_literals() -> set[tuple[str, str]]:
    """(module, category) for every string constant outside rules/ that is a rule's category."""
    from breakscan.rules.catalogue import CATALOGUE

    categories = {r.category for r in CATALOGUE}
    found = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(PACKAGE))
        if where.startswith("rules/"):
            continue
        found |= {(where, s) for s in _code_strings(ast.parse(path.read_text()))
                  if s in categories}
    return found


def test_a_rule_is_keyed_by_its_category_only_in_its_own_module():
    """Outside rules/, a rule is named by its object (``ITEM.category``, ``rule_for(c).flag``),
    never by its category's text: renaming a category is one edit. The check can fail (a
    literal category is found) and its exceptions are real (each still occurs)."""
    found = category_literals()
    assert ("fixes/where.py", "item") in found  # the walk sees the exceptions
    assert found - set(NOT_A_CATEGORY) == set()
    assert set(NOT_A_CATEGORY) - found == set(), "an exception no longer needed"
