"""What Inductor makes of one captured graph: its kernels, fallbacks and fusion decisions.

``InductorInspection`` compiles a graph Dynamo captured with Inductor's own ``compile_fx``, as
``torch.compile`` would, and records while it does:

- the kernel count: the change of ``torch._inductor.metrics.generated_kernel_count`` (what
  Inductor itself counts; on CPU one per C++ kernel body, so a fused group may count several);
- the scheduler's nodes after fusion (``_post_fusion_custom_pass``): each one kernel, an extern
  library call or an ATen fallback, with the ATen nodes it came from (``origins``), whose
  ``from_node`` names the Dynamo graph node and whose ``stack_trace`` the user's line;
- the ``perf_hints`` log ("Using FallbackKernel: ...") and the ``fusion`` log at DEBUG ("cannot
  fuse op3 with op7: reason").

The FX-graph and AOT-autograd caches are off for these compiles only (a warm cache skips
lowering: no scheduler, no logs), so the user's cache settings are untouched elsewhere. All of
this is private to torch: ``available()`` says what is missing and the scan degrades to a note.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from typing import Any, Callable, Iterator

import torch

from ..frames import parse_stack
from ..model.records import FusionStop, Kernel, RawInductorGraph

LOGGERS = ("torch._inductor.graph.__perf_hints", "torch._inductor.scheduler.__fusion")
_FALLBACK = re.compile(r"Using FallbackKernel: (?:torch\.ops\.)?(\S+)")
_CANNOT_FUSE = re.compile(r"cannot fuse (\w+) with (\w+): (.+)")


def available() -> str | None:
    """None when every private piece is there, else what is missing (one line)."""
    try:
        import torch._functorch.config  # noqa: F401
        import torch._inductor.config as config
        from torch._inductor import metrics
        from torch._inductor.compile_fx import compile_fx  # noqa: F401
    except Exception as exc:  # pragma: no cover - another torch
        return f"Inductor is not importable here ({type(exc).__name__}: {exc})"
    missing = [name for name, ok in (
        ("torch._inductor.metrics.generated_kernel_count",
         hasattr(metrics, "generated_kernel_count")),
        ("torch._inductor.config._post_fusion_custom_pass",
         hasattr(config, "_post_fusion_custom_pass")),
        ("torch._inductor.config.fx_graph_cache", hasattr(config, "fx_graph_cache")))
        if not ok]
    return f"{', '.join(missing)} not found in torch {torch.__version__}" if missing else None


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.texts: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.texts.append(record.getMessage())
        except Exception:  # a log handler must never break the scan
            pass


@contextlib.contextmanager
def _listening(handler: logging.Handler) -> Iterator[None]:
    saved = []
    for name in LOGGERS:
        logger = logging.getLogger(name)
        saved.append((logger, logger.level, logger.propagate))
        logger.setLevel(logging.DEBUG)
        logger.propagate = False  # kept off the terminal: the report says it instead
        logger.addHandler(handler)
    try:
        yield
    finally:
        for logger, level, propagate in saved:
            logger.removeHandler(handler)
            logger.setLevel(level)
            logger.propagate = propagate


def _op_name(target: Any) -> str:
    text = str(target)
    return text[len("torch.ops."):] if text.startswith("torch.ops.") else text


def _location(node: Any) -> str | None:
    found = parse_stack(node.meta.get("stack_trace") or "")
    return found[-1].location() if found else None


def _graph_nodes(fx_node: Any) -> list[str]:
    """The Dynamo graph nodes an ATen node came from (``from_node``, outermost first)."""
    names = []
    for source in fx_node.meta.get("from_node") or ():
        while getattr(source, "from_node", None):  # follow the chain back to the Dynamo graph
            source = source.from_node[0]
        name = getattr(source, "name", None)
        if name and name not in names:
            names.append(name)
    return names


def _kind(ir_node: Any) -> tuple[str | None, str | None]:
    """(kind, op) of a post-fusion IR node; (None, None) for one that launches nothing."""
    from torch._inductor import ir

    if isinstance(ir_node, ir.FallbackKernel):
        return "fallback", _op_name(getattr(ir_node, "op_overload", None)
                                    or getattr(ir_node, "python_kernel_name", ""))
    if isinstance(ir_node, ir.MultiOutput) or type(ir_node).__name__ == "NopKernel":
        return None, None  # picks an output of a multi-output kernel / a no-op: no launch
    if isinstance(ir_node, ir.ExternKernel):
        return "extern", str(getattr(ir_node, "python_kernel_name", None)
                             or type(ir_node).__name__)
    return "fused", None


def _kernel(node: Any, phase: str) -> Kernel | None:
    """One post-fusion scheduler node as a kernel record (None: it launches nothing)."""
    subs = [s for s in node.get_nodes() if getattr(s, "node", None) is not None]
    if not subs or type(node).__name__ == "NopKernelSchedulerNode":
        return None
    kind, op = _kind(subs[0].node)
    if kind is None:
        return None
    origins = []
    for sub in subs:
        primary = getattr(sub.node, "origin_node", None) if kind != "fused" else None
        found = [primary] if primary is not None else sorted(
            sub.node.origins, key=lambda n: getattr(n, "_sort_key", n.name))
        origins.extend(o for o in found if o not in origins)
    if kind != "fused" and op:  # an extern call's origins include the ops feeding it
        packet = op.rsplit(".", 1)[0] if op.count(".") >= 2 else op  # aten.sort (any overload)
        own = [o for o in origins if _op_name(o.target).startswith(packet)]
        origins = own or origins
    graph_nodes: list[str] = []
    lines: list[str] = []
    for origin in origins:
        graph_nodes.extend(n for n in _graph_nodes(origin) if n not in graph_nodes)
        where = _location(origin)
        if where and where not in lines:
            lines.append(where)
    return Kernel(name=node.get_name(), kind=kind, op=op, phase=phase,
                     ir_nodes=[s.get_name() for s in subs],
                     aten_ops=list(dict.fromkeys(_op_name(o.target) for o in origins)),
                     graph_nodes=graph_nodes, lines=lines,
                     reductions=sum(bool(getattr(s, "is_reduction", lambda: False)())
                                    for s in subs))


class InductorInspection:
    """Compiles captured graphs with Inductor, one record per graph (see the module's text)."""

    def __init__(self) -> None:
        self._phase_nodes: list[list[Any]] = []

    @property
    def scheduled(self) -> bool:
        """Whether the last compile went through Inductor's scheduler (a backend that is not
        Inductor, or a cache hit, does not)."""
        return bool(self._phase_nodes)

    def _post_fusion(self, nodes: list[Any]) -> list[Any]:
        self._phase_nodes.append(list(nodes))
        return nodes

    def compile(self, gm: Any, example_inputs: list[Any], index: int,
                training: bool | None = False, *,
                compiler: Callable[[Any, list[Any]], Any] | None = None,
                reraise: bool = False) -> tuple[RawInductorGraph, Callable[..., Any] | None]:
        """Compile ``gm`` with Inductor (``compiler``, default ``compile_fx``): its record, and
        the compiled callable (None when the compile raised; the record then carries the error,
        and ``reraise`` raises it too). ``training`` None leaves the grad mode as it is (a
        backend inside torch.compile)."""
        import torch._functorch.config as functorch_config
        import torch._inductor.config as config
        from torch._inductor import metrics
        from torch._inductor.compile_fx import compile_fx

        self._phase_nodes = []
        handler = _Records()
        grad = contextlib.nullcontext() if training is None or training else torch.no_grad()
        before = metrics.generated_kernel_count
        start = time.perf_counter()
        compiled, error = None, None
        with _listening(handler), grad, \
                config.patch(fx_graph_cache=False, fx_graph_remote_cache=False,
                             _post_fusion_custom_pass=self._post_fusion), \
                functorch_config.patch(enable_autograd_cache=False,
                                       enable_remote_autograd_cache=False):
            try:
                compiled = (compiler or compile_fx)(gm, example_inputs)
            except Exception as exc:
                if reraise:
                    raise
                text = str(exc).strip()
                error = type(exc).__name__ + (f": {text.splitlines()[0]}" if text else "")
        seconds = time.perf_counter() - start
        kernels: list[Kernel] = []
        for number, nodes in enumerate(self._phase_nodes):
            phase = "forward" if number == 0 else "backward"
            kernels.extend(k for k in (_kernel(n, phase) for n in nodes) if k is not None)
        fallbacks = [m.group(1) for t in handler.texts for m in [_FALLBACK.search(t)] if m]
        stops = [(m.group(1), m.group(2), m.group(3).strip()) for t in handler.texts
                 for m in [_CANNOT_FUSE.search(t)] if m]
        names = _scheduler_origins(self._phase_nodes)
        return RawInductorGraph(
            index=index, kernel_count=metrics.generated_kernel_count - before,
            kernels=kernels, fallback_ops=list(dict.fromkeys(fallbacks)),
            fusion_stops=[_fusion_stop(a, b, why, names) for a, b, why in stops],
            seconds=round(seconds, 3), error=error), compiled


class InspectingInductor:
    """``torch.compile``'s own Inductor backend (its mode and options), each graph recorded as
    :class:`InductorInspection` records it: with ``--time`` and ``--kernels`` the timed compile
    is the inspected one, so each graph is compiled by Inductor once for both. Inside
    torch.compile the graph compiles in Dynamo's tracing context, as it would for the user."""

    def __init__(self, mode: str | None, options: dict[str, Any] | None,
                 dynamic: bool | None) -> None:
        self._inductor = torch._TorchCompileInductorWrapper(mode, options, dynamic)
        self._inspection = InductorInspection()
        self.graphs: list[tuple[Any, RawInductorGraph]] = []  # (graph module, its record)

    @staticmethod
    def available() -> bool:
        return available() is None and hasattr(torch, "_TorchCompileInductorWrapper")

    def __call__(self, gm: Any, example_inputs: list[Any]) -> Callable[..., Any]:
        raw, compiled = self._inspection.compile(gm, example_inputs, len(self.graphs),
                                                 training=None, compiler=self._inductor,
                                                 reraise=True)
        self.graphs.append((gm, raw))
        return compiled


def _fusion_stop(first: str, second: str, reason: str,
                 names: dict[str, tuple[list[str], list[str]]]) -> FusionStop:
    (lines_a, ops_a), (lines_b, ops_b) = names.get(first, ([], [])), names.get(second, ([], []))
    return FusionStop(first, second, reason, lines_a, lines_b, ops_a, ops_b)


def _scheduler_origins(phases: list[list[Any]]) -> dict[str, tuple[list[str], list[str]]]:
    """Each pre-fusion scheduler node's name -> (the user's lines of its ops, its ATen ops; a
    reduction's marked ``reduction``)."""
    found: dict[str, tuple[list[str], list[str]]] = {}
    for nodes in phases:
        for node in nodes:
            for sub in node.get_nodes():
                if getattr(sub, "node", None) is None:
                    continue
                lines: list[str] = []
                for origin in sub.node.origins:
                    where = _location(origin)
                    if where and where not in lines:
                        lines.append(where)
                ops = list(dict.fromkeys(_op_name(o.target) for o in sub.node.origins))
                if getattr(sub, "is_reduction", lambda: False)():
                    ops.append("reduction")
                found[sub.get_name()] = (lines, ops)
    return found
