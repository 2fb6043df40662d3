"""Switches on the path to a break: module or config attributes whose value leads there.

A break inside a library often sits behind a condition on the module's state: BART's layer drop
breaks on ``if dropout_probability < self.layerdrop`` inside ``if self.training and
self.layerdrop > 0.0:``. This module reads (with ``ast``, no torch) the ``if``/``while``/ternary
tests that enclose each line on the break's path (its own line, its sites, every frame of its
call chain) and the early-return guards just above them, keeps the operands that read
``self.<attr>`` or ``self.config.<attr>``, and proposes the value that makes the path not be
taken. Each candidate is verified like any fix, in its own child (:func:`apply_switch` sets the
value on the built model); the generic search complements the hand-written library switches of
the fix registry (``rules.FIXES``, kind ``switch``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from ..frames import is_torch_file, module_ast

# Attributes whose switch also changes what training does (not just how it is compiled).
_TRAINING_SEMANTICS = re.compile(r"drop|mask_time|mask_feature|augment|noise|jitter|_prob\b",
                                 re.IGNORECASE)
_NEVER = {"training"}  # the scan's own mode: --train decides it
MAX_SWITCHES = 4  # candidates verified per scan, the ones covering the most breaks first
EARLY_EXIT_WINDOW = 12  # lines above a line where a guard that returns still counts


@dataclass
class Switch:
    """Set ``attr`` (on ``config`` or on modules of ``classes``) to ``value``."""

    attr: str
    value: Any  # a Python constant, or "flip" (the negation of the current value)
    on_config: bool
    classes: list[str] = field(default_factory=list)  # modules whose method tests it
    tests: list[str] = field(default_factory=list)  # "file:line `test`" where it is read
    breaks: int = 0  # how many breaks it may remove
    sites: list[tuple[str, int]] = field(default_factory=list)  # those breaks' file:line

    @property
    def training_semantics(self) -> bool:
        return bool(_TRAINING_SEMANTICS.search(self.attr))

    def code(self) -> str:
        """How the user applies it, after building the model."""
        value = "not ..." if self.value == "flip" else repr(self.value)
        if self.on_config:
            return f"model.config.{self.attr} = {value}  # before the first call"
        names = ", ".join(repr(c) for c in self.classes) + ("," if len(self.classes) == 1 else "")
        return (f"for module in model.modules():\n    if type(module).__name__ in ({names}):\n"
                f"        module.{self.attr} = {value}")

    def request(self) -> dict[str, Any]:
        return {"attribute": self.attr, "value": self.value, "on_config": self.on_config,
                "classes": self.classes}


def _self_attr(node: ast.AST) -> tuple[str, bool] | None:
    """``self.x`` -> ("x", False); ``self.config.x`` -> ("x", True)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
            node.value.id == "self":
        return node.attr, False
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and \
            node.value.attr == "config" and isinstance(node.value.value, ast.Name) and \
            node.value.value.id == "self":
        return node.attr, True
    return None


def _falsifying(test: ast.AST) -> list[tuple[str, bool, Any]]:
    """(attr, on_config, value) settings that make ``test`` false (when it was true)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return [found for value in test.values for found in _falsifying(value)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return [(a, c, "flip") for a, c, _ in _truthy_attrs(test.operand)]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and \
            isinstance(test.comparators[0], ast.Constant):
        found = _self_attr(test.left)
        constant = test.comparators[0].value
        op = test.ops[0]
        if found is None or isinstance(constant, str):
            return []
        if isinstance(op, (ast.Gt, ast.Lt, ast.NotEq)):
            return [(*found, constant)]  # x > c, x < c, x != c are false at x == c
        if isinstance(op, ast.IsNot) and constant is None:
            return [(*found, None)]
        return []
    return [(a, c, "flip") for a, c, _ in _truthy_attrs(test)]


def _truthy_attrs(test: ast.AST) -> list[tuple[str, bool, Any]]:
    found = _self_attr(test)
    return [(*found, "flip")] if found else []


def _class_and_function(tree: ast.Module, line: int) -> tuple[str | None, ast.AST | None]:
    """The innermost class and function holding ``line``."""
    cls = fn = None
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.lineno <= line <= (node.end_lineno or 0):
            if cls is None or node.lineno >= cls.lineno:
                cls = node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.lineno <= line <= (node.end_lineno or 0):
            if fn is None or node.lineno >= fn.lineno:
                fn = node
    return (cls.name if cls is not None else None), fn


def _guards(fn: ast.AST, line: int) -> list[tuple[ast.AST, int]]:
    """The tests on the way to ``line`` inside ``fn``: every enclosing ``if``/``while``/ternary
    whose taken side holds it, and the early-exit ``if``s a few lines above it."""
    found: list[tuple[ast.AST, int]] = []
    for node in ast.walk(fn):
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            body = node.body if isinstance(node.body, list) else [node.body]
            if body and body[0].lineno <= line <= (body[-1].end_lineno or 0):
                found.append((node.test, node.lineno))
            elif isinstance(node, ast.If) and node.orelse is not None and node.orelse and \
                    node.orelse[0].lineno <= line <= (node.orelse[-1].end_lineno or 0):
                found.append((ast.UnaryOp(op=ast.Not(), operand=node.test), node.lineno))
            elif isinstance(node, ast.If) and not node.orelse and \
                    0 < line - (node.end_lineno or 0) <= EARLY_EXIT_WINDOW and \
                    any(isinstance(s, (ast.Return, ast.Raise, ast.Continue))
                        for s in node.body):
                # `if self.fast: return ...` above the line: taking it skips the line
                found.append((ast.UnaryOp(op=ast.Not(), operand=node.test), node.lineno))
    return found


def _negated(test: ast.AST) -> ast.AST | None:
    return test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) \
        else None


def switches_for(brk: Any) -> list[Switch]:
    """The switch candidates on this break's path (see the module docstring)."""
    places = [(brk.file, brk.line)] + [(s.file, s.line) for s in brk.sites] + \
        [(f.file, f.line) for f in brk.call_chain]
    found: dict[tuple[str, bool, str], Switch] = {}
    for file, line in dict.fromkeys(places):
        if not file or is_torch_file(file):
            continue
        tree = module_ast(file)
        if tree is None:
            continue
        cls, fn = _class_and_function(tree, line)
        if fn is None or cls is None:
            continue
        for test, at in _guards(fn, line):
            inner = _negated(test)
            # An else branch / early exit: the test must become true; only a flip does that.
            settings = [(a, c, "flip") for a, c, _ in _truthy_attrs(inner)] if inner is not None \
                else _falsifying(test)
            for attr, on_config, value in settings:
                if attr in _NEVER:
                    continue
                key = (attr, on_config, repr(value))
                switch = found.setdefault(key, Switch(attr, value, on_config))
                if not on_config and cls not in switch.classes:
                    switch.classes.append(cls)
                text = ast.get_source_segment(_source_of(file), test if inner is None
                                              else inner) or ""
                where = f"{file}:{at} `{text}`"
                if where not in switch.tests:
                    switch.tests.append(where)
    return list(found.values())


def _source_of(file: str) -> str:
    try:
        with open(file, encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return ""


def search(breaks: list[Any]) -> list[Switch]:
    """Every break's switches, merged (one switch may clear breaks in several classes), the ones
    covering the most breaks first, at most :data:`MAX_SWITCHES`."""
    merged: dict[tuple[str, bool, str], Switch] = {}
    for brk in breaks:
        for switch in switches_for(brk):
            key = (switch.attr, switch.on_config, repr(switch.value))
            have = merged.get(key)
            if have is None:
                merged[key] = switch
                have = switch
            else:
                have.classes += [c for c in switch.classes if c not in have.classes]
                have.tests += [t for t in switch.tests if t not in have.tests]
            have.breaks += 1
            have.sites.append((brk.file, brk.line))
    ranked = sorted(merged.values(), key=lambda s: (-s.breaks, s.training_semantics, s.attr))
    return ranked[:MAX_SWITCHES]


def apply_switch(model: Any, request: dict[str, Any]) -> int:
    """Set the switch on the built model (the child's side); returns how many objects changed."""
    attr, value = request["attribute"], request["value"]
    changed = 0
    targets: list[Any] = []
    if request["on_config"]:
        seen: set[int] = set()
        for module in model.modules():
            config = getattr(module, "config", None)
            if config is not None and id(config) not in seen and hasattr(config, attr):
                seen.add(id(config))
                targets.append(config)
    else:
        classes = set(request["classes"])
        targets = [m for m in model.modules() if type(m).__name__ in classes and
                   hasattr(m, attr)]
    for target in targets:
        current = getattr(target, attr)
        new = (not current) if value == "flip" else value
        if new != current:
            setattr(target, attr, new)
            changed += 1
    return changed
