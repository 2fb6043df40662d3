"""Switches on the path to a break: what a person flips so the call goes elsewhere.

A break inside a library often sits behind a condition on the model's state: BART's layer drop
breaks on ``if dropout_probability < self.layerdrop`` inside ``if self.training and
self.layerdrop > 0.0:``; wav2vec2 carries it in a variable first (``skip_the_layer = …``); a
diffusers scheduler breaks behind ``if self.begin_index is None:``, which its public
``set_begin_index(0)`` sets; transformers' checks return early under
``TRANSFORMERS_DISABLE_TORCH_CHECK=1``. For each line on the break's path (its own line, its
sites, every frame of its call chain, and the assignments that feed the names its test reads),
:mod:`.guards` reads the tests that lead there; this module turns what they read into
candidates — an attribute of ``self``/``self.config``, a public setter method, an environment
variable — each verified like any fix in its own child (:func:`set_switch`). The generic
search complements the hand-written library switches of ``rules.FIXES`` (kind ``switch``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from ..frames import is_torch_file, module_ast
from ..rules.model import PathSetting, Switch
from .guards import (argument_for, assignments_feeding, class_and_function, env_settings,
                     falsifying, followed, guards, negated, not_none_attr, passed_inputs,
                     returned_names, setters, truthy_attrs)

# Attributes whose switch also changes what training does (not just how it is compiled).
# A switch that changes what training does (randomness, or which weights learn: wav2vec2's
# `_requires_grad` freezes its feature encoder), not only how it is compiled.
_TRAINING_SEMANTICS = re.compile(r"drop|mask_time|mask_feature|augment|noise|jitter|_prob\b|"
                                 r"requires_grad|freez|frozen", re.IGNORECASE)
_NEVER = {"training"}  # the scan's own mode: --train decides it
MAX_SWITCHES = 4  # candidates verified per scan, the ones covering the most breaks first


@dataclass
class PathSwitch:
    """Set ``attr`` (on ``config`` or on objects of ``classes``) to ``value``; with ``kind``
    "method", call the public method ``attr(value)`` that sets what the test reads; with
    "env", set the environment variable ``attr`` to ``value``."""

    attr: str
    value: Any  # a Python constant, or "flip" (the negation of the current value)
    on_config: bool
    classes: list[str] = field(default_factory=list)  # objects whose method tests it
    tests: list[str] = field(default_factory=list)  # "file:line `test`" where it is read
    breaks: int = 0  # how many breaks it may remove
    sites: list[tuple[str, int]] = field(default_factory=list)  # those breaks' file:line
    kind: str = "attribute"  # attribute | method | env | input
    # kind "input": the function whose result the caller passes precomputed (file, first line,
    # name); the verifying child records what it returns in an eager call.
    computed_by: tuple[str, int, str] | None = None
    # How far its guard is from the break: 0 encloses (or exits before) the break's own line,
    # 1 guards an assignment feeding it, 2 a caller's line or a site. Searched nearest first.
    depth: int = 3

    @property
    def training_semantics(self) -> bool:
        return bool(_TRAINING_SEMANTICS.search(self.attr))

    @property
    def key(self) -> tuple[str, str, bool, str]:
        return (self.kind, self.attr, self.on_config, repr(self.value))

    def code(self) -> str:
        """How the user applies it, after building the model."""
        value = "not ..." if self.value == "flip" else repr(self.value)
        if self.kind == "input":
            return (f"{self.attr} = {self.computed_by[2]}(...)  # once, outside the compiled call\n"
                    f"model(..., {self.attr}={self.attr})")
        if self.kind == "env":
            return (f"os.environ[{self.attr!r}] = {value}  # or `export {self.attr}="
                    f"{self.value}` before running")
        if self.kind == "method":
            return (f"obj.{self.attr}({value})  # obj: the model's "
                    f"{' / '.join(self.classes)}, before calling the model")
        if self.on_config:
            flipped = f"not model.config.{self.attr}" if self.value == "flip" else value
            return f"model.config.{self.attr} = {flipped}  # before the first call"
        names = ", ".join(repr(c) for c in self.classes) + ("," if len(self.classes) == 1 else "")
        flipped = f"not module.{self.attr}" if self.value == "flip" else value
        return (f"for module in model.modules():\n    if type(module).__name__ in ({names}):\n"
                f"        module.{self.attr} = {flipped}")

    @property
    def fix_id(self) -> str:
        value = "not current" if self.value == "flip" else repr(self.value)
        if self.kind == "input":
            return f"switch:input:{self.attr}"
        if self.kind == "env":
            return f"switch:env:{self.attr}={self.value}"
        if self.kind == "method":
            return f"switch:{self.attr}({value})"
        return f"switch:{self.attr}={value}"

    def describe(self) -> str:
        """'config.layerdrop = 0.0', 'DPMSolverMultistepScheduler.set_begin_index(0)',
        'environment TRANSFORMERS_DISABLE_TORCH_CHECK=1'."""
        value = "not current" if self.value == "flip" else repr(self.value)
        if self.kind == "input":
            return (f"pass {self.attr}= precomputed (what {self.computed_by[2]}() computes "
                    "from the inputs, once, outside the compiled call)")
        if self.kind == "env":
            return f"environment {self.attr}={self.value}"
        where = "config" if self.on_config else "/".join(self.classes)
        if self.kind == "method":
            return f"{where}.{self.attr}({value})"
        return f"{where}.{self.attr} = {value}"

    def request(self) -> Switch:
        """The switch as the verifying child applies it."""
        return Switch(path=PathSetting(self.attr, self.value, self.kind, self.on_config,
                                       tuple(self.classes), self.computed_by))


def _candidates(test: ast.AST, cls: ast.ClassDef | None, fn: Any, file: str,
                returned: set[str]) -> list[PathSwitch]:
    """The switches that make this (followed) guard send the call elsewhere; ``returned``: the
    names an early exit there returns."""
    inner = negated(test)
    if inner is not None:  # an else branch / early exit: the test must become true
        found = [PathSwitch(name, value, False, kind="env") for name, value in env_settings(inner)]
        found += [PathSwitch(name, None, False, kind="input",
                         computed_by=(file, fn.lineno, fn.name))
                  for name in passed_inputs(inner, fn, returned)]
        if cls is not None:
            found += [PathSwitch(a, "flip", c) for a, c, _ in truthy_attrs(inner)]
        return found
    if cls is None:
        return []
    found = [PathSwitch(a, v, c) for a, c, v in falsifying(test) if a not in _NEVER]
    attr = not_none_attr(test)
    if attr is not None:
        found += [PathSwitch(name, value, False, kind="method")
                  for name, value in setters(cls, attr)]
    return found


def switches_for(brk: Any) -> list[PathSwitch]:
    """The switch candidates on this break's path (see the module docstring)."""
    places = [(brk.file, brk.line)] + [(s.file, s.line) for s in brk.sites] + \
        [(f.file, f.line) for f in brk.call_chain]
    found: dict[tuple[str, str, bool, str], PathSwitch] = {}
    chain = [(f.file, f.line) for f in brk.call_chain]
    callers = dict(zip(chain[1:], chain))  # a frame -> the frame that called it
    if (brk.file, brk.line) not in callers and chain and chain[-1] != (brk.file, brk.line):
        callers[(brk.file, brk.line)] = chain[-1]
    for file, line in dict.fromkeys(places):
        if not file or is_torch_file(file):
            continue
        tree = module_ast(file)
        if tree is None:
            continue
        cls, fn = class_and_function(tree, line)
        if fn is None:
            continue
        own = (file, line) == (brk.file, brk.line)
        on_path = {g: (0 if own and at_line == line else 1 if own else 2)
                   for at_line in reversed([line, *assignments_feeding(fn, line)])
                   for g in guards(fn, at_line)}  # a guard at the break's line: depth 0
        for (written, at), depth in on_path.items():
            returned = returned_names(fn, negated(written)) if negated(written) else set()
            test, reader = followed(written, fn, at), (cls, fn, file)
            passed = _passed_in(test, fn, callers.get((file, line)))
            if passed is not None:  # `if drop:` on a parameter: what the caller passed
                test, reader = passed
            for candidate in _candidates(test, *reader, returned):
                if candidate.attr in _NEVER:
                    continue
                switch = found.setdefault(candidate.key, candidate)
                switch.depth = min(switch.depth, depth)
                owner = reader[0]
                if owner is not None and switch.kind in ("attribute", "method") and \
                        not switch.on_config and owner.name not in switch.classes:
                    switch.classes.append(owner.name)
                text = ast.get_source_segment(_source_of(file), negated(written) or
                                              written) or ""
                where = f"{file}:{at} `{text}`"
                if where not in switch.tests:
                    switch.tests.append(where)
    return list(found.values())


def _passed_in(test: ast.AST, fn: Any, caller: tuple[str, int] | None) -> tuple | None:
    """A test on a parameter of ``fn`` as the caller's argument, with the caller's (class,
    function, file) that reads it; None when the test is not one or no caller passed it."""
    if caller is None or is_torch_file(caller[0]):
        return None
    tree = module_ast(caller[0])
    cls, outer = class_and_function(tree, caller[1]) if tree is not None else (None, None)
    value = argument_for(test, fn, outer, caller[1]) if outer is not None else None
    return None if value is None else (followed(value, outer, caller[1]), (cls, outer,
                                                                           caller[0]))


def _source_of(file: str) -> str:
    try:
        with open(file, encoding="utf-8") as fh:
            return fh.read()
    except OSError:
        return ""


def search(breaks: list[Any]) -> list[PathSwitch]:
    """Every break's switches, merged (one switch may clear breaks in several classes), the ones
    covering the most breaks first, at most :data:`MAX_SWITCHES`."""
    merged: dict[tuple[str, str, bool, str], PathSwitch] = {}
    for brk in breaks:
        for switch in switches_for(brk):
            have = merged.get(switch.key)
            if have is None:
                merged[switch.key] = switch
                have = switch
            else:
                have.classes += [c for c in switch.classes if c not in have.classes]
                have.tests += [t for t in switch.tests if t not in have.tests]
                have.depth = min(have.depth, switch.depth)
            have.breaks += 1
            have.sites.append((brk.file, brk.line))
    ranked = sorted(merged.values(), key=lambda s: (-s.breaks, s.depth, s.training_semantics,
                                                    s.attr))
    return ranked[:MAX_SWITCHES]


def _objects(model: Any, classes: set[str]) -> list[Any]:
    """The model's modules of ``classes``, and the objects of ``classes`` its modules hold as
    attributes (a diffusers scheduler is no module)."""
    found: dict[int, Any] = {}
    for module in model.modules():
        for value in [module, *vars(module).values()]:
            if type(value).__name__ in classes:
                found.setdefault(id(value), value)
    return list(found.values())


def _holds_tensor(value: Any) -> bool:
    """A torch.Tensor (or Parameter), told without importing torch here."""
    return any(c.__name__ == "Tensor" and c.__module__ == "torch"
               for c in type(value).__mro__)


def value_after(model: Any, setting: PathSetting) -> Any:
    """The value a flipped attribute switch left on the built model (its first holder)."""
    for module in model.modules() if setting.on_config else []:
        config = getattr(module, "config", None)
        if config is not None and hasattr(config, setting.attribute):
            return getattr(config, setting.attribute)
    for target in [] if setting.on_config else _objects(model, set(setting.classes)):
        if hasattr(target, setting.attribute):
            return getattr(target, setting.attribute)
    return None


def set_switch(model: Any, setting: PathSetting) -> int:
    """Set the switch on the built model (the child's side); returns how many objects changed.
    An environment switch changes nothing here: the child sets it around the fixed model."""
    attr, value, kind = setting.attribute, setting.value, setting.kind
    if kind in ("env", "input"):  # the child sets these around the fixed model's calls
        return 1
    if kind == "method":
        changed = 0
        for target in _objects(model, set(setting.classes)):
            method = getattr(target, attr, None)
            if callable(method):
                method(value)
                changed += 1
        return changed
    changed = 0
    targets: list[Any] = []
    if setting.on_config:
        seen: set[int] = set()
        for module in model.modules():
            config = getattr(module, "config", None)
            if config is not None and id(config) not in seen and hasattr(config, attr):
                seen.add(id(config))
                targets.append(config)
    else:
        targets = [m for m in _objects(model, set(setting.classes)) if hasattr(m, attr)]
    for target in targets:
        current = getattr(target, attr)
        if _holds_tensor(current):  # a buffer or parameter: the constants fix's, not a switch's
            from ..errors import UsageError

            raise UsageError(f"not applicable: `{attr}` of {type(target).__name__} holds a "
                             "tensor (a buffer or parameter); a path switch sets Python values "
                             "only (a tensor constant is the constants fix's)")
        new = (not current) if value == "flip" else value
        if new != current:
            setattr(target, attr, new)
            changed += 1
    return changed
