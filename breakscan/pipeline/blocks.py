"""Repeated blocks: the ``nn.Module`` classes one model call runs twice or more.

Transformer layers, UNet blocks and ResNet stages are one class called N times per forward;
compiling that class alone (regional compilation) compiles its code once and reuses it N times,
where compiling the whole model traces and compiles every copy. Counted with forward pre-hooks
on one eager call (the scan's eager run), removed after it. torch's own layers (``nn.Linear``,
containers) are not blocks; a class whose every instance sits inside another repeated class's
instance is not the outermost block and is left out.
"""

from __future__ import annotations

import contextlib
import inspect
from collections import Counter
from typing import Any, Iterator

from torch import nn

from ..model.compile_time import RepeatedBlock


@contextlib.contextmanager
def counting_blocks(model: nn.Module) -> Iterator[list[RepeatedBlock]]:
    """Count the calls of every submodule while the block runs; the list it yields is filled,
    outermost repeated classes first by size, when it ends."""
    found: list[RepeatedBlock] = []
    calls: Counter[int] = Counter()
    names = {id(m): name for name, m in model.named_modules() if m is not model
             and not type(m).__module__.startswith("torch.")}
    modules = {id(m): m for m in model.modules() if id(m) in names}

    def count(module: nn.Module, _args: Any) -> None:
        calls[id(module)] += 1

    hooks = [m.register_forward_pre_hook(count) for m in modules.values()]
    try:
        yield found
    finally:
        for hook in hooks:
            hook.remove()
    found.extend(repeated(calls, modules, names))


def repeated(calls: Counter[int], modules: dict[int, nn.Module],
             names: dict[int, str]) -> list[RepeatedBlock]:
    """The classes called twice or more, outermost only, the largest (parameters × calls)
    first."""
    by_class: dict[type, list[int]] = {}
    for key in calls:
        by_class.setdefault(type(modules[key]), []).append(key)
    candidates = {cls: keys for cls, keys in by_class.items() if sum(calls[k] for k in keys) >= 2}
    outer = {names[k] for keys in candidates.values() for k in keys}
    blocks = []
    for cls, keys in candidates.items():
        inside = all(any(names[k].startswith(o + ".") for o in outer) for k in keys)
        if inside:
            continue
        try:
            file, line = inspect.getsourcefile(cls) or "", inspect.getsourcelines(cls)[1]
        except (OSError, TypeError):
            file, line = "", 0
        params = sum(p.numel() for p in modules[keys[0]].parameters())
        blocks.append(RepeatedBlock(name=cls.__qualname__, file=file, line=line,
                                    instances=len(keys), calls=sum(calls[k] for k in keys),
                                    parameters=params))
    return sorted(blocks, key=lambda b: -b.parameters * b.calls)
