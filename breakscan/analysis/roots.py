"""Root-cause breaks keyed by source location: the collection every analysis step adds to.

One break in the source can reach breakscan as several log records, explain reasons and
metrics rows; :class:`Roots` keeps one :class:`RootBreak` per location (and per category on one
line), and :func:`break_at` says which break a line belongs to.
"""

from __future__ import annotations

import ast
import re

from ..frames import Frame, acting_frame, model_stack, module_ast, owner_of, source_line
from ..model.records import BreakRecord, RootBreak
from ..rules import categories, registry
from ..rules.bs009_other import RULE as OTHER

# A NumPy function Dynamo cannot trace (GB0294), as its explanation names it.
NUMPY_FUNCTION = re.compile(r"numpy function <function (?P<name>\w+) at ")


def source_text(file: str, line: int, fallback: str = "") -> str:
    """The stripped text of ``file:line``, or ``fallback`` when it cannot be read."""
    text = source_line(file, line).strip()
    return text or fallback


_WITH = re.compile(r"\s*(async\s+)?with\b")


def is_with(code: str | None) -> bool:
    """Is this source line a ``with`` statement's header?"""
    return bool(_WITH.match(code or ""))


class Roots:
    """Root-cause breaks keyed by source location, in first-seen order."""

    def __init__(self) -> None:
        self.items: list[RootBreak] = []

    def find(self, file: str, line: int, category: str | None = None,
             gb_id: str | None = None, via: tuple[str, str] | None = None) -> RootBreak | None:
        """The root at ``file:line``; given a record's ``category``, another category on the
        same line is a different break (``.item()`` and ``.tolist()`` in one expression), unless
        it has the same registry id (explain's reason lacks the context that narrowed it), or
        both break inside the one function this line calls (``via``: its file and name; with
        nested graph breaks Dynamo goes on inside ``logging.getLogger`` and breaks again)."""
        for item in self.items:
            if via is not None and item.file == file and item.line == line and \
                    called_from(item.call_chain, file, line) == via:
                return item
        for item in self.items:
            if item.file == file and item.line == line and (
                    _WITH.match(item.code or "")  # one `with`, one construct (GB0208 + GB0142)
                    or category in (None, OTHER.category)
                    or (gb_id is not None and item.gb_id == gb_id)
                    or (item.cause_category or item.category) in (category, OTHER.category)):
                return item
        if any(item.file == file and item.line == line for item in self.items):
            return None
        for item in self.items:  # a frame further up the chain (duplicate/short records)
            if any(f.file == file and f.line == line for f in item.call_chain):
                return item
        return None

    def add(self, *, chain: list[Frame], gb_id: str | None, gb_type: str, explanation: str,
            hints: list[str], context: str, source: str, file: str, line: int,
            function: str, code: str) -> RootBreak:
        gb_id = gb_id or registry.id_of(gb_type)  # metrics give only the title
        category = category_at(chain, gb_id, gb_type, explanation, context, file, line, code)
        owner = owner_of(file)
        item = RootBreak(
            owner=owner, category=category, gb_id=gb_id, gb_type=gb_type,
            file=file, line=line, code=source_text(file, line, code), function=function,
            call_chain=chain, explanation=explanation, hints=list(hints),
            suggestion=categories.CATEGORIES[category].suggestion,
            doc_url=categories.registry_url(gb_id), records=0, explain_reasons=0,
            resume_functions=[], sources=[source])
        entry = registry.entry(gb_id)
        item.registry_title = entry.title if entry else None
        item.hint_classes = registry.classes_of(hints) or list(entry.hint_classes if entry
                                                                else ())
        item.new_in_torch = categories.is_new(gb_id, category)
        self.items.append(item)
        return item


    def rename(self, item: RootBreak, record: BreakRecord, category: str) -> None:
        """The root at a ``with`` line named after the manager Dynamo cannot enter (GB0142)
        rather than the call that made it (GB0208 "torch.* op returned non-Tensor"): one
        construct, one root cause, the other record its context."""
        gb_id = record.gb_id or registry.id_of(record.gb_type)
        item.gb_id, item.gb_type, item.explanation = gb_id, record.gb_type, record.explanation
        item.hints = list(record.hints)
        recategorise(item, category)
        item.new_in_torch = categories.is_new(gb_id, item.root_category)
        item.doc_url = categories.registry_url(gb_id)
        entry = registry.entry(gb_id)
        item.registry_title = entry.title if entry else None
        item.hint_classes = registry.classes_of(record.hints) or list(
            entry.hint_classes if entry else ())


def recategorise(item: RootBreak, category: str) -> None:
    """Give a root its family: its cause's when it made Dynamo skip a frame, else its own."""
    if item.frame_skipped or item.cause_category:
        item.cause_category = category
    else:
        item.category = category
    item.suggestion = categories.CATEGORIES[category].suggestion
    if category != categories.OTHER:
        item.new_in_torch = False


def called_from(chain: list[Frame], file: str, line: int) -> tuple[str, str] | None:
    """The function ``file:line`` calls on the way to the break (file, name), if the chain goes
    on past it."""
    for here, nxt in zip(chain, chain[1:]):
        if (here.file, here.line) == (file, line):
            return (nxt.file, nxt.function)
    return None


def category_at(chain: list[Frame], gb_id: str | None, gb_type: str, explanation: str,
                context: str, file: str, line: int, code: str) -> str:
    """The family of a break reported at ``file:line`` with this call chain."""
    code = source_text(file, line, code)
    frames = "\n".join([f"{f.file}:{f.function}: {f.code}" for f in chain] +
                       [f"{file}:: {code}"] +
                       [f"custom_op: {name}" for name in custom_ops_called(file, code)] +
                       [f"random_value: {text}" for text in random_values_used(file, line, code)])
    return categories.categorize(gb_id, gb_type, explanation, context, code, frames)


_RANDOM_CALL = re.compile(r"\b(np|numpy)\.random\.|\brandom\.\w+\(")


def random_values_used(file: str, line: int, code: str) -> list[str]:
    """The assignments above ``line`` in its function that draw a Python random number
    (``jitter = random.random()``) and whose name ``code`` uses: torch 2.14 breaks where the
    number meets a tensor (``h * (1 + jitter)``, GB0213), 2.13 at the draw."""
    return [text for _, text in random_draws_used(file, line, code)]


def random_draws_used(file: str, line: int, code: str) -> list[tuple[int, str]]:
    """:func:`random_values_used` with each assignment's line (where ``torch_rng`` rewrites)."""
    tree = module_ast(file)
    if tree is None:
        return []
    around = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
              and n.lineno <= line <= (n.end_lineno or n.lineno)]
    if not around:
        return []
    found = []
    for node in ast.walk(max(around, key=lambda n: n.lineno)):
        if isinstance(node, ast.Assign) and node.lineno < line and \
                _RANDOM_CALL.search(ast.unparse(node.value)):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            if any(re.search(rf"\b{re.escape(n)}\b", code) for n in names):
                found.append((node.lineno, ast.unparse(node)))
    return found


def custom_ops_called(file: str, code: str) -> list[str]:
    """The functions ``code`` calls that its file defines as custom ops
    (``@torch.library.custom_op(...)``): a data-dependent break there is the op's fake."""
    tree = module_ast(file) if "(" in code else None
    if tree is None:
        return []
    ops = [n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
           and any("custom_op" in ast.unparse(d) for d in n.decorator_list)]
    return [name for name in ops if re.search(rf"\b{re.escape(name)}\(", code)]


def record_location(record: BreakRecord) -> tuple[list[Frame], Frame | None]:
    """A log record's call chain in the model and the frame to act on (its header's line when
    the stack names none)."""
    chain, root = break_frame(model_stack(record.user_stack), record.explanation)
    if root is None and record.header_file and record.header_line:
        root = Frame(record.header_file, record.header_line, "", "")
    return chain, root


def break_frame(chain: list[Frame], explanation: str) -> tuple[list[Frame], Frame | None]:
    """The frame to act on in a break's chain, at the call the break names (the chain with it).

    Dynamo's record of a NumPy function it cannot trace can name the statement after the call
    (in a resume function, after a statement that spans several lines): the call is then the
    nearest one to that function before it, in the same function.
    """
    frame = acting_frame(chain)
    m = NUMPY_FUNCTION.search(explanation or "")
    if frame is None or m is None or \
            re.search(rf"\b{m['name']}\s*\(", source_line(frame.file, frame.line)):
        return chain, frame
    line = _call_before(frame.file, frame.line, m["name"])
    if line is None:
        return chain, frame
    moved = Frame(frame.file, line, frame.function, source_text(frame.file, line))
    return [moved if f is frame else f for f in chain], moved


def _call_before(file: str, line: int, name: str) -> int | None:
    """The line of the last call to ``name`` (``np.name(…)`` or ``name(…)``) before ``line`` in
    the innermost function around it."""
    tree = module_ast(file)
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                 and n.lineno <= line <= (n.end_lineno or 0)] if tree is not None else []
    if not functions:
        return None
    scope = max(functions, key=lambda n: n.lineno)
    calls = [n.lineno for n in ast.walk(scope) if isinstance(n, ast.Call) and n.lineno < line
             and (getattr(n.func, "attr", None) == name or getattr(n.func, "id", None) == name)]
    return max(calls) if calls else None


def break_at(breaks: list[RootBreak], file: str | None, line: int | None) -> int | None:
    """The index of the break at ``file:line``: the line is the break's, a site's, or a call on
    its chain (a nested break cuts every enclosing frame). A resume function at that line
    resumes after it; a frame whose compilation failed there was skipped because of it."""
    if not file or not line:
        return None
    # A break's own line first: another break's chain may pass through it (a hook called from
    # the line of a `loss.backward()` that breaks itself).
    for where in (lambda b: [Frame(b.file, b.line, "")], lambda b: b.sites,
                  lambda b: b.follow_on, lambda b: b.call_chain):
        for idx, item in enumerate(breaks):
            if any(f.file == file and f.line == line for f in where(item)):
                return idx
    for idx, item in enumerate(breaks):  # the line Dynamo named for a call it could not trace
        m = NUMPY_FUNCTION.search(item.explanation or "")
        if m and item.file == file and item.line < line and \
                _call_before(file, line, m["name"]) == item.line:
            return idx
    return None
