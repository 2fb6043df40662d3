"""An escape hatch's fake read off the eager run, in the verifying child.

For a helper whose result's shape its source does not show (``np.digitize``, a C extension),
fixes/escape.py writes the fake as a placeholder that raises. Before the rewritten copy is
loaded, the child calls the original model once, eagerly (from its state as built, as every
compared call), with the helper wrapped; the input the result is shaped like on every call, and
its dtype, give ``torch.empty_like(x[, dtype=torch.T])``, which replaces the placeholder. Only
what was observed is claimed: the title says on how many calls. A result that is not one fresh
tensor, or is shaped like none of the inputs, makes the fix not applicable, with what was seen.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import sys
from pathlib import Path
from typing import Any

from ..model.jobs import FixRequest

_PLACEHOLDER = re.compile(r"raise RuntimeError\(['\"]breakscan --fix: the shape of "
                          r"`(\w+)`'s result, from its eager run['\"]\)")


def with_observed_fake(fix: FixRequest, original: Any) -> tuple[FixRequest, str | None]:
    """The request with its placeholder fake filled in from the eager run, and that fake; the
    request as it is (and None) when it has no placeholder."""
    found = _PLACEHOLDER.search(fix.new_source or "") if fix.kind == "source" else None
    if found is None or fix.file is None:
        return fix, None
    fake = observed_fake(original, fix.file, found.group(1))
    filled = fix.new_source.replace(found.group(0), f"return {expression(fake)}", 1)
    return dataclasses.replace(fix, new_source=filled), fake


def expression(fake: str) -> str:
    """The fake's expression, without what it rests on."""
    return fake.split(" (shaped like ", 1)[0]


def observed_fake(original: Any, file: str, name: str) -> str:
    """``torch.empty_like(param[, dtype=torch.T]) (shaped like `param` on N call(s))``, read off
    one eager call of ``original`` with ``name`` (a function of ``file``) wrapped."""
    from ..errors import ModelError, UsageError
    from ..pipeline.outputs import eager_reference

    # Every module loaded from the file (a file loaded twice in one process is two modules):
    # the model calls the helper through the globals of the one it was built from.
    found = {id(m): m for m in list(sys.modules.values()) if _is_file_of(m, file)
             and inspect.isfunction(getattr(m, name, None))}
    if not found:
        raise UsageError(f"not applicable: `{name}` is not a function of the loaded "
                         f"{Path(file).name}")
    calls: list[tuple[dict[str, Any], Any]] = []
    functions = {key: getattr(module, name) for key, module in found.items()}

    def recording(function: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            out = function(*args, **kwargs)
            calls.append((dict(inspect.signature(function).bind(*args, **kwargs).arguments),
                          out))
            return out
        return call

    for key, module in found.items():
        setattr(module, name, recording(functions[key]))
    try:
        eager_reference(original)
    except ModelError as exc:
        raise UsageError(f"not applicable: the eager call that shows `{name}`'s result "
                         f"failed: {exc}") from None
    finally:
        for key, module in found.items():
            setattr(module, name, functions[key])
    return _fake_from(name, calls)


def _is_file_of(module: Any, file: str) -> bool:
    where = getattr(module, "__file__", None)
    try:
        return bool(where) and Path(where).resolve() == Path(file).resolve()
    except (OSError, ValueError):
        return False


def _fake_from(name: str, calls: list[tuple[dict[str, Any], Any]]) -> str:
    """The input every call's result is shaped like, and the dtype; UsageError otherwise."""
    import torch

    from ..errors import UsageError

    if not calls:
        raise UsageError(f"not applicable: the eager run never called `{name}`, so the shape "
                         "of its result is unknown: write its fake (register_fake) by hand")
    outs = [out for _, out in calls]
    if not all(isinstance(out, torch.Tensor) for out in outs):
        kinds = sorted({type(out).__name__ for out in outs})
        raise UsageError(f"not applicable: on the eager run `{name}` returned {', '.join(kinds)}"
                         ", not one tensor (a custom_op's fake makes one tensor)")
    tensors = [{k: v for k, v in args.items() if isinstance(v, torch.Tensor)}
               for args, _ in calls]
    for out, ins in zip(outs, tensors):
        if any(out.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()
               for t in ins.values()):
            raise UsageError(f"not applicable: on the eager run `{name}`'s result shares "
                             "memory with its input (a custom_op returns a fresh tensor)")
    for param in tensors[0]:
        if all(param in ins and ins[param].shape == out.shape for out, ins in zip(outs, tensors)):
            same = all(out.dtype == ins[param].dtype for out, ins in zip(outs, tensors))
            dtypes = {out.dtype for out in outs}
            if not same and len(dtypes) > 1:
                continue
            dtype = "" if same else f", dtype={dtypes.pop()}"  # torch.float32
            return (f"torch.empty_like({param}{dtype}) (shaped like `{param}` on the eager "
                    f"run's {len(calls)} call(s))")
    shapes = sorted({str(list(out.shape)) for out in outs})
    raise UsageError(f"not applicable: on the eager run `{name}`'s result (shape "
                     f"{', '.join(shapes[:3])}) is shaped like none of its tensor inputs: write "
                     "its fake (register_fake) by hand")
