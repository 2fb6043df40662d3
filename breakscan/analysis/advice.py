"""What the reader can do about each break, in words: the advice text, assembled from what the
break's rule reads from the break itself (``Rule.advise``, asked with the
``torch.compiler.disable``d function a break calls), the advice for its line, its family's
text and settings, and how to act when the code is not the user's.

Advice never points at text that is not there: a break with no rule gets Dynamo's own hint or
explanation, a break in a library how to keep it out of the compiled region without editing it.
"""

from __future__ import annotations

import ast
import os
import re

from ..frames import Frame, inner_site, is_torch_file, module_ast, switched_helper
from ..model.records import RootBreak
from ..rules import categories, registry
from ..rules.bs009_other import RULE as OTHER
from ..rules.catalogue import rule_for, settings_of
from .loops import iteration_at
from .roots import NUMPY_FUNCTION, source_text
from .skipped import enclosing_block

_GENERIC_HINTS = ("report an issue", "file an issue", "unlikely that Dynamo will ever",
                  "graph break is fundamental", "Dynamo bug")
# Text addressed to Dynamo's developers, never passed on ("Add tp_iternext_impl to this
# VariableTracker subclass").
_DEVELOPER_TEXT = re.compile(r"VariableTracker|\w+_impl\b|override to \w+|No handler implemented|"
                             r"as_proxy\(\)|reconstruction (rules|support)|Dynamo developers")


def useful_hints(item: RootBreak) -> list[str]:
    """Dynamo's hints that are about this break: no hint-class boilerplate, nothing meant for
    Dynamo's developers, no "report an issue"."""
    return [h for h in item.hints if h.strip() and not registry.is_class_hint(h)
            and not _DEVELOPER_TEXT.search(h) and not any(g in h for g in _GENERIC_HINTS)]


_DISABLED_FN = re.compile(r"function `?<function (?P<name>[\w.<>]+) at")


def disabled_function(item: RootBreak) -> Frame | None:
    """The ``torch.compiler.disable``d function a break calls, where it is defined: Dynamo names
    it in the explanation; its definition is looked up in the files on the break's path."""
    m = _DISABLED_FN.search(item.explanation or "")
    if m is None:
        return None
    qualname = m.group("name")
    path = [p for p in qualname.split(".") if p != "<locals>"]
    files = dict.fromkeys([item.file] + [f.file for f in reversed(item.call_chain)])
    for exact in (True, False):  # Block.forward, not the first `forward` of the file
        for file in files:
            tree = module_ast(file)
            node = _defined(tree, path) if exact and tree is not None else None
            if not exact and tree is not None:
                node = next((n for n in ast.walk(tree) if isinstance(
                    n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == path[-1]), None)
            if node is not None:
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                return Frame(file, first, qualname, source_text(file, first))
    return Frame("", 0, qualname)


def _defined(scope: ast.AST, path: list[str]) -> ast.AST | None:
    """The class or function ``a.b.c`` defined in ``scope`` (nested functions skipped over)."""
    if not path:
        return scope
    for node in ast.walk(scope):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.name == path[0] and node is not scope:
            found = _defined(node, path[1:])
            if found is not None:
                return found
    return None


class _Context:
    """What a rule's ``advise`` hook may ask (rules.model.AdviceContext)."""

    is_torch_file = staticmethod(is_torch_file)
    inner_site = staticmethod(inner_site)
    disabled_function = staticmethod(lambda brk: disabled_function(brk))


_CONTEXT = _Context()


def _rule_advice(item: RootBreak) -> str:
    """The advice the break's rule reads from the break itself ("" when it has none)."""
    rule = rule_for(item.root_category)
    return rule.advise(item, _CONTEXT) if rule.advise else ""


def advice(item: RootBreak, in_force: dict | None = None) -> str:
    """What the reader can do about this break: never a pointer to text that is not there.
    ``in_force``: the Dynamo settings the scanned process had changed (never advised again)."""
    category = item.root_category
    skipped = _caused_advice(item) + _skipped_advice(item)
    specific = _rule_advice(item)
    if specific and rule_for(category).advice_first:
        return " ".join(skipped + [specific])
    line_advice = _helper_advice(item) or _iteration_advice(item)
    if line_advice:  # what to do at this line, instead of the rule's generic advice
        return " ".join(skipped + [line_advice] + _owner_advice(item, category))
    return " ".join(_sites_advice(item) + skipped + [specific or _category_advice(item)] +
                    _settings_advice(category, in_force or {}) +
                    _owner_advice(item, category))


def _settings_advice(category: str, in_force: dict) -> list[str]:
    """The family's settings: to try, or already in force in this run (so not the fix)."""
    out = []
    for name, value in settings_of(category):
        if name in in_force and in_force[name] == value:
            out.append(f"`torch._dynamo.config.{name}` is already {value!r} in this run, so "
                       "it is not the fix here.")
        else:
            out.append(f"Setting to try: `torch._dynamo.config.{name} = {value!r}` "
                       "(`--fix` verifies whether it removes the break).")
    return out


def _caused_advice(item: RootBreak) -> list[str]:
    if item.caused_by is None:
        return []
    where = os.path.basename(item.caused_by)
    if registry.EARLIER_BREAK in item.hint_classes:
        return [f"Dynamo says an earlier break may cause this one: fix the break at {where} "
                "first, and this one may go with it."]
    return [f"It uses what the break at {where} creates: fix that one first, and this one "
            "goes with it."]


def _helper_advice(item: RootBreak) -> str:
    """A break inside a library helper that a switch turns off: name the switch."""
    found = switched_helper(item.call_chain)
    if found is None or (found[0].file, found[0].line) == (item.file, item.line):
        return ""
    frame, helper = found
    return (f"The break is inside the library's `{frame.function}()` "
            f"({os.path.basename(frame.file)}:{frame.line}), which this line calls: "
            f"{helper.what}. Set `{helper.switch}` in the environment before the model runs: "
            f"{helper.off} (no file edited), and the graph no longer breaks here.")


def _iteration_advice(item: RootBreak) -> str:
    """Sizes taken from iterating a tensor: make them Python ints once, before the loop."""
    loop = iteration_at(item.file, item.line) if item.sites and \
        rule_for(item.root_category).needs_host_value else None
    if loop is None:
        return ""
    names = ", ".join(loop.names)
    uses = ", ".join(f"{os.path.basename(s.file)}:{s.line}" for s in item.sites)
    return (f"`{names}` come from iterating the tensor `{loop.iterable}` at "
            f"{os.path.basename(item.file)}:{item.line}: each step hands out 0-d tensors, and "
            f"using them as sizes or indices ({uses}) needs their values on the host, a break "
            "on every step. Turn the sizes into Python ints once: pass them in as Python ints "
            "(no break), or loop over "
            f"`{loop.iterable}.tolist()` (one conversion before the loop, not one per use).")


def _skipped_advice(item: RootBreak) -> list[str]:
    """For a break that made Dynamo skip the function: what lets it compile again."""
    if not item.frame_skipped:
        return []
    block = enclosing_block(item.file, item.line) if item.skip_kind == "whole_frame" else None
    if item.skip_kind == "loop":
        return ["Move the breaking call out of the loop (or fix it, below) so the function "
                "compiles again."]
    if block:
        return [f"Move the breaking call out of the {block} block (or fix it, below) so the "
                "function compiles again."]
    return ["Fix the break itself (below) so Dynamo can trace the function again."]


def _category_advice(item: RootBreak) -> str:
    """The advice of the break's family (a NumPy function Dynamo cannot trace named), or what
    Dynamo says when no family covers it."""
    category = item.root_category
    numpy_fn = NUMPY_FUNCTION.search(item.explanation or "")
    if numpy_fn is not None:
        return (f"Dynamo traces NumPy through torch._numpy, which has no `{numpy_fn['name']}`: "
                "the call runs in Python between two graphs. Compute it once outside the "
                "compiled region (in `__init__`, or pass the result in) when it does not depend "
                "on the inputs, or write it with torch ops.")
    if category != OTHER.category:
        return categories.CATEGORIES[category].advice_for(item.gb_id)
    return _dynamo_advice(item)


def _dynamo_advice(item: RootBreak) -> str:
    """A break no family covers: Dynamo's own hint or explanation, else what it did."""
    if item.new_in_torch:
        return _new_break_advice(item)
    useful = useful_hints(item)
    if useful:
        return f"Dynamo's hint: {useful[0].rstrip('.')}."
    if item.explanation and not _DEVELOPER_TEXT.search(item.explanation):
        return f"Dynamo: {item.explanation.splitlines()[0].rstrip('.')}."
    if item.gb_type == "step_unsupported":
        # explain's reason when Dynamo restarted after a failure further on and ended the
        # graph at the last instruction it can resume from (symbolic_convert.step).
        return (f"Dynamo ended the graph at {os.path.basename(item.file)}:{item.line} "
                f"`{item.code}`, the last point in {item.function}() it can resume "
                "from, because tracing further on failed (for a `with` statement: a "
                "break inside its block); the break that failed is listed separately "
                "when Dynamo logged one.")
    return (f"Dynamo gives no reason beyond `{item.gb_type}`: it could not step "
            f"the instruction at {os.path.basename(item.file)}:{item.line} "
            f"`{item.code}` and ended the graph it was building there.")


def _new_break_advice(item: RootBreak) -> str:
    """A break type new in this torch: no family's advice, Dynamo's own words in full."""
    title = item.registry_title or item.gb_type
    said = [f"New in this torch ({torch_release()}): {item.gb_id} \"{title}\" is a break type "
            f"breakscan has no family for yet."]
    if item.explanation:
        said.append(f"Dynamo: {item.explanation.splitlines()[0].rstrip('.')}.")
    hints = [h for h in item.hints if h.strip() and not registry.is_class_hint(h)]
    if hints:
        said.append("Dynamo's hints: " + " ".join(h.strip() for h in hints))
    return " ".join(said)


def torch_release() -> str:
    """The installed torch's version, read from its metadata (never importing torch)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return "torch " + version("torch")
    except PackageNotFoundError:
        return "torch"


def _sites_advice(item: RootBreak) -> list[str]:
    """For branches merged at the line that computed their value: make it a Python value."""
    if item.sites and re.search(r"\b(np|numpy)\.", item.code):
        return [f"The tested value comes from NumPy at {os.path.basename(item.file)}:"
                f"{item.line}, which Dynamo traces as a tensor: compute it with plain "
                "Python (e.g. the `math` module) when it does not depend on tensor data."]
    if item.sites:
        return [f"All {len(item.sites)} branch(es) test the value computed at "
                f"{os.path.basename(item.file)}:{item.line}: make it a Python value "
                "there if it does not depend on tensor data, or keep the branches as "
                "tensor ops."]
    return []


def _owner_advice(item: RootBreak, category: str) -> list[str]:
    """Not the user's code: how to keep it out without editing it; a break with no rule in the
    user's code: how to make it one explicit break."""
    if item.owner != "user":
        if item.user_frame is not None:
            f = item.user_frame
            return [f"Not your code: without editing the library, wrap your call at "
                    f"{os.path.basename(f.file)}:{f.line} (`{f.code}`) with "
                    "`torch.compiler.disable` (one explicit break instead of this one), "
                    "or change how you call it."]
        return ["Not your code, and no line of yours calls it: the settings and the library's "
                "switches act without editing it (`--fix` verifies them); else report the break "
                "to the library."]
    if rule_for(category).smallest_region:
        return [smallest_region(item)]
    return []


def smallest_region(item: RootBreak) -> str:
    """The smallest region to run eagerly: the statement, never the whole function (a disabled
    ``forward()`` leaves the model with no graph at all)."""
    where = f"{os.path.basename(item.file)}:{item.line}"
    return (f"If it cannot change, move just the statement at {where} into a small helper "
            "decorated with `torch.compiler.disable` and call that, so the rest of "
            f"{item.function or 'the function'}() still compiles (not the whole "
            f"{item.function or 'function'}(): that would run it with no graph).")
