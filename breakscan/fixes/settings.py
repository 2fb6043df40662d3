"""Dynamo settings tried as fixes: those a break's own hints name, and their child-side values.

Dynamo's hints often name the setting that removes a break ("Set
torch._dynamo.config.allow_rnn=True"); the planner tries those besides the rule registry's. A
set of logging functions travels to the verifying child as names and is resolved there, where
torch is imported (the parent never imports torch).
"""

from __future__ import annotations

import re
from typing import Any

# A Dynamo setting named in a break's hints, in any of Dynamo's wordings: "Set
# torch._dynamo.config.allow_rnn=True", "Change `torch._dynamo.config.trace_autograd_ops` to
# `True`" (read from hints, and from an explanation only where it says "Set …": a break's title
# shows the value in force).
_HINTED_SETTING = re.compile(r"torch\._dynamo\.config\.(?P<name>\w+)`?(?:\s*=\s*|\s+to\s+)`?"
                             r"(?P<value>True|False|\d+)\b")
# Decorators that are Dynamo settings for the function they wrap ("Apply
# `@torch._dynamo.dont_skip_tracing` to the function `manual_seed`"): tried as the setting.
_HINTED_DECORATORS = {"dont_skip_tracing": ("dont_skip_tracing", True)}
_HINTED_DECORATOR = re.compile(r"@torch\._dynamo\.(?P<name>\w+)")


# "adding it to `torch._dynamo.config.reorderable_logging_functions`" (a set of functions).
_HINTED_SET = re.compile(r"torch\._dynamo\.config\.(?P<name>\w+_logging_functions)")
# The logging function Dynamo names: "(e.g. `_warnings.warn`)", "builtin `_warnings.warn`".
_LOGGING_FN = re.compile(r"`(?P<fn>[A-Za-z_][\w.]*\.\w+)`")
LOGGING_SETTINGS = ("reorderable_logging_functions", "ignore_logging_functions")


def hinted_settings(brk: Any) -> list[tuple[str, Any]]:
    """The Dynamo config values Dynamo itself suggests for this break (its hints), in order.

    A logging function Dynamo cannot trace (``warnings.warn``) gets both sets its hint and the
    print rule name, ``reorderable_logging_functions`` and ``ignore_logging_functions``, with
    that function added (``{"functions": ["_warnings.warn"]}``, resolved in the child)."""
    found: list[tuple[str, Any]] = []
    texts = list(brk.hints) + [brk.explanation]
    for text in [*brk.hints, *_imperatives(brk.explanation)]:
        for m in _HINTED_SETTING.finditer(text or ""):
            raw = m.group("value")
            value: Any = raw == "True" if raw in ("True", "False") else int(raw)
            if (m.group("name"), value) not in found:
                found.append((m.group("name"), value))
        for m in _HINTED_DECORATOR.finditer(text or ""):
            setting = _HINTED_DECORATORS.get(m.group("name"))
            if setting is not None and setting not in found:
                found.append(setting)
    if any(_HINTED_SET.search(t or "") for t in texts):
        # The explanation names the function this break calls; a hint's may be an example.
        names = [m.group("fn") for t in [brk.explanation, *brk.hints]
                 for m in _LOGGING_FN.finditer(t or "") if "torch._dynamo" not in m.group("fn")]
        if names:
            for setting in LOGGING_SETTINGS:
                found.append((setting, {"functions": [names[0]]}))
    return found


# An explanation that tells what to set (torch 2.15's LSTM break, GB0148: "Reason: Dynamo does
# not support RNN, GRU, or LSTM. Set torch._dynamo.config.allow_rnn=True to enable ..."), unlike
# a title that shows the value in force ("... with `torch._dynamo.config.trace_autograd_ops=False`").
_IMPERATIVE = re.compile(r"\b(?:Set|Change)\s+`?torch\._dynamo\.config\.\w+`?"
                         r"(?:\s*=\s*|\s+to\s+)`?(?:True|False|\d+)\b")


def _imperatives(explanation: str | None) -> list[str]:
    """The settings an explanation tells the reader to make, as hint-like texts."""
    return [m.group(0) for m in _IMPERATIVE.finditer(explanation or "")]


def resolved_config(config: dict[str, Any]) -> dict[str, Any]:
    """A fix's Dynamo config with named functions turned into the functions themselves (a set
    setting travels to the child as ``{"functions": ["_warnings.warn"]}``), added to the set
    already in force."""
    import importlib

    import torch._dynamo.config as dynamo_config

    out = {}
    for name, value in config.items():
        if isinstance(value, dict) and "functions" in value:
            functions = set(getattr(dynamo_config, name))
            for dotted in value["functions"]:
                module, _, attr = dotted.rpartition(".")
                functions.add(getattr(importlib.import_module(module), attr))
            value = functions
        out[name] = value
    return out


def dynamo_config() -> Any:
    """torch._dynamo.config, imported only when a hint names a setting (the parent stays light)."""
    import torch._dynamo.config as config

    return config
