"""The libcst tree a source rewrite works on, and how a rewrite refuses.

libcst keeps a concrete syntax tree, so every byte outside the rewritten statement survives.
:class:`Tree` adds what each rewrite needs: the line a node covers, its parents, and replacing
statements by others. A rewrite that cannot be exact raises :class:`Refuse` with its reason;
one whose pattern is not on the line at all raises :class:`NotHere` (a fix tried on another
family's break stays quiet then). Shared by every rewrite module, with what counts as a print
or logging call and which names a statement reads and binds (``reads``/``binds``).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m
from libcst.metadata import (ExpressionContext, ExpressionContextProvider, MetadataWrapper,
                             ParentNodeProvider, PositionProvider)

from ..rules.bs003_print import LOG_METHODS


class Refuse(Exception):
    """Raised inside a handler: the message is the one-line reason."""


class NotHere(Refuse):
    """The rewrite's pattern is not on the line (nothing to refuse, nothing to say)."""


class Tree:
    """A module parsed once, with the positions and parents of its nodes."""

    def __init__(self, source: str):
        wrapper = MetadataWrapper(cst.parse_module(source))
        self.module = wrapper.module  # metadata is keyed on this copy's nodes
        self.pos = wrapper.resolve(PositionProvider)
        self.parent = wrapper.resolve(ParentNodeProvider)
        self.context = wrapper.resolve(ExpressionContextProvider)

    def covers(self, node: cst.CSTNode, line: int) -> bool:
        r = self.pos.get(node)
        return r is not None and r.start.line <= line <= r.end.line

    def depth(self, node: cst.CSTNode) -> int:
        d = 0
        while node in self.parent:
            node, d = self.parent[node], d + 1
        return d

    def innermost(self, kinds: tuple[type, ...], line: int) -> cst.CSTNode | None:
        hits = [n for n in self.pos if isinstance(n, kinds) and self.covers(n, line)]
        return max(hits, key=self.depth, default=None)

    def ancestors(self, node: cst.CSTNode):
        while node in self.parent:
            node = self.parent[node]
            yield node

    def function_of(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The innermost function around ``node``."""
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def line(self, node: cst.CSTNode) -> int:
        return self.pos[node].start.line

    def reads(self, node: cst.CSTNode) -> list[str]:
        """Names and ``self.attr`` chains ``node`` loads, in order (nested scopes included)."""
        out = []
        for n in m.findall(node, m.Name() | m.Attribute()):
            if self.context.get(n) is ExpressionContext.LOAD or (
                    isinstance(n, cst.Attribute) and self.context.get(n) is None):
                text = _dotted(n)
                if text and (isinstance(n, cst.Name) or text.startswith("self.")):
                    out.append(text)
        return list(dict.fromkeys(out))

    def binds(self, node: cst.CSTNode) -> list[str]:
        """Names (and ``self.attr``) ``node`` assigns in its own scope, in order."""
        out = []
        for n in m.findall(node, m.Name() | m.Attribute()):
            if self.context.get(n) is ExpressionContext.STORE and not any(
                    isinstance(a, (cst.CompFor, cst.Lambda, cst.FunctionDef, cst.ClassDef))
                    for a in self._up_to(n, node)):
                text = _dotted(n)
                if text and (isinstance(n, cst.Name) or text.startswith("self.")):
                    out.append(text)
        return list(dict.fromkeys(out))

    def _up_to(self, node: cst.CSTNode, top: cst.CSTNode):
        for a in self.ancestors(node):
            if a is top:
                return
            yield a

    def snippet(self, node: cst.CSTNode) -> str:
        """The node's code on one line, shortened: for reasons and titles."""
        text = " ".join(self.module.code_for_node(node).split())
        return text if len(text) <= 60 else text[:57] + "..."

    def replace(self, edits: dict[int, list[cst.BaseStatement]]) -> cst.Module:
        """Replace statements (keyed by ``id``) by zero or more statements."""
        return self.module.visit(_Splice(edits))


def _dotted(node: cst.CSTNode) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return f"{node.value.value}.{node.attr.value}"
    return ""


class _Splice(cst.CSTTransformer):
    def __init__(self, edits: dict[int, list[cst.BaseStatement]]):
        super().__init__()
        self.edits = edits

    def on_leave(self, original_node, updated_node):
        if id(original_node) not in self.edits:
            return updated_node
        new = self.edits[id(original_node)]
        return cst.FlattenSentinel(new) if new else cst.RemoveFromParent()


def is_log_call(node: cst.CSTNode) -> bool:
    """``print(...)``, ``warnings.warn(...)`` or ``<something named *log*>.info(...)`` (logger,
    logging, self.logger, ``logging.getLogger(__name__)``)."""
    if not isinstance(node, cst.Call):
        return False
    func = node.func
    if isinstance(func, cst.Name):
        return func.value == "print"
    if m.matches(func, m.Attribute(value=m.Name("warnings"), attr=m.Name("warn"))):
        return True  # warnings.warn(...): logging Dynamo cannot trace either
    if isinstance(func, cst.Attribute) and func.attr.value in LOG_METHODS:
        receiver = func.value
        if isinstance(receiver, cst.Call):  # logging.getLogger(__name__).info(...)
            receiver = receiver.func
        name = receiver.value if isinstance(receiver, cst.Name) else (
            receiver.attr.value if isinstance(receiver, cst.Attribute) else "")
        return "log" in name.lower()
    return False
