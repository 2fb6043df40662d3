"""Verified fixes: for each break, a setting or a rewrite of the user's source, then proof.

A fix is only called verified when a fresh child process (``isolate.run_isolated`` with a fix)
has applied it — a Dynamo config value, ``dynamic=True``, or the rewritten module loaded from a
temporary copy of the target's folder or package — rescanned, run eager and compiled, matched
the original model's outputs (same weights, same inputs), and shown a real gain (:func:`gained`);
then it is timed against the original in that process. The user's files are only touched by
:func:`write_fixes` (``--fix --write``), which keeps a backup.

The parent side (planning, verifying, writing) never imports torch; ``scan_with_fix`` is what
the child runs.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable

from ..files import content_hash, read_source, write_source_in_place
from ..options import Limits, ScanOptions, TimingOptions
from ..frames import display_path
from ..sources import source_tree, target_file
from ..result import Fix, FixedScan, FixMetrics, ScanResult, whole
from ..rules import FIXES, fixes_for, rule_for_fix, rule_id

# fix id -> (break category, the setting as users write it, the torch._dynamo.config patch)
# The fixes themselves (ids, kinds, settings, the rule each belongs to) are in the rule
# registry: rules.FIXES. The rewriter's category for a break category (an .item() inside a print is a print to guard).
_REWRITE_AS = {"item": "print"}
# A Dynamo setting named in a break's hints, e.g. "Set torch._dynamo.config.allow_rnn=True".
_HINTED_SETTING = re.compile(r"torch\._dynamo\.config\.(?P<name>\w+)\s*=\s*(?P<value>True|False|\d+)")


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
    for text in texts:
        for m in _HINTED_SETTING.finditer(text or ""):
            raw = m.group("value")
            value: Any = raw == "True" if raw in ("True", "False") else int(raw)
            if (m.group("name"), value) not in found:
                found.append((m.group("name"), value))
    if any(_HINTED_SET.search(t or "") for t in texts):
        # The explanation names the function this break calls; a hint's may be an example.
        names = [m.group("fn") for t in [brk.explanation, *brk.hints]
                 for m in _LOGGING_FN.finditer(t or "") if "torch._dynamo" not in m.group("fn")]
        if names:
            for setting in LOGGING_SETTINGS:
                found.append((setting, {"functions": [names[0]]}))
    return found


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


@dataclass
class FixPlan:
    """A fix to verify: the record to fill in plus what the child must apply."""

    fix: Fix
    config: dict[str, Any]
    dynamic: bool | None = None
    new_source: str | None = None
    switch: dict[str, Any] | None = None  # see LIBRARY_SWITCHES
    constants: dict[str, list[str]] | None = None  # class -> attributes made Python values

    def request(self) -> dict[str, Any]:
        before = asdict(self.fix.before) if self.fix.before is not None else None
        return {"kind": self.fix.kind, "fix_id": self.fix.fix_id, "file": self.fix.file,
                "config": self.config, "dynamic": self.dynamic, "new_source": self.new_source,
                "switch": self.switch, "constants": self.constants, "before": before}


def metrics(result: ScanResult, *, dynamic: bool = False) -> FixMetrics:
    t = result.timings
    recompiles = None
    if result.recompiles is not None:
        recompiles = (result.recompiles.dynamic_recompile_count if dynamic
                      else len(result.recompiles.recompiles))
    return FixMetrics(graph_count=result.summary.graph_count,
                      breaks=result.summary.graph_break_count, recompiles=recompiles,
                      compiled_s=t.compiled.median_s if t and t.compiled else None,
                      speedup=t.speedup if t else None,
                      graph_calls_per_call=result.summary.graph_calls_per_call,
                      eager_gaps_per_call=result.summary.eager_gaps_per_call,
                      frames_run_eagerly_per_call=result.summary.frames_run_eagerly_per_call)


def gained(before: FixMetrics, after: FixMetrics) -> bool:
    """A real gain: fewer graphs; per model call, fewer graph calls, returns to Python or frames
    run eagerly; or fewer recompiles. Fewer break sites alone is not one (a break that only
    moved a line down still splits the graph and still returns to Python)."""
    def fewer(b: float | None, a: float | None) -> bool:
        return b is not None and a is not None and a < b

    return (after.graph_count < before.graph_count
            or fewer(before.graph_calls_per_call, after.graph_calls_per_call)
            or fewer(before.eager_gaps_per_call, after.eager_gaps_per_call)
            or fewer(before.frames_run_eagerly_per_call, after.frames_run_eagerly_per_call)
            or fewer(before.recompiles, after.recompiles))


def plan_fixes(target: str, result: ScanResult) -> list[FixPlan]:
    """Every fix worth trying for this result, refused ones included (with their reason)."""
    plans: list[FixPlan] = []
    seen: set[tuple[str, str | None, int | None]] = set()
    own_file = target_file(target)
    before = metrics(result)
    for brk in result.breaks:
        category = brk.root_category
        settings = [(spec.id, spec.setting, dict(spec.config))
                    for spec in fixes_for(category, "setting")]
        for name, value in hinted_settings(brk):  # what Dynamo's own hints name
            if not any(name in config for _, _, config in settings) and \
                    hasattr(_dynamo_config(), name):
                how = (f"torch._dynamo.config.{name}.add({value['functions'][0]})"
                       if isinstance(value, dict) else f"torch._dynamo.config.{name} = {value!r}")
                settings.append((name, how, {name: value}))
        for fix_id, setting, config in settings:
            if (fix_id, None, None) not in seen:
                seen.add((fix_id, None, None))
                plans.append(FixPlan(Fix(rule=rule_for_fix(fix_id, category), fix_id=fix_id,
                                         kind="setting",
                                         title=f"set {setting}", category=category,
                                         setting=setting, file=brk.file, line=brk.line,
                                         before=before), config))
        if category == "tensor_constant":
            _plan_constants(plans, brk, own_file, before)
            continue
        source_fixes = fixes_for(category, "source")
        fix_id = source_fixes[0].id if source_fixes else None
        if fix_id is not None and brk.owner == "user":
            _plan_source(plans, seen, fix_id, category, brk.file, brk.line, None, own_file,
                         before)
        elif brk.owner != "user" and brk.user_frame is not None:
            # A break inside a library: act at the user's own call into it, without editing
            # the library (run that call eagerly; or hand it Python numbers from a loop).
            callee = _callee_after(brk)
            if callee:
                _plan_source(plans, seen, "disable_call", category, brk.user_frame.file,
                             brk.user_frame.line, callee, own_file, before)
            _plan_source(plans, seen, "tolist_loop", category, brk.user_frame.file,
                         brk.user_frame.line, None, own_file, before, quiet=True)
    plans.extend(_library_switches(result, before))
    plans.extend(_path_switches(result, before))
    if result.recompiles is not None and result.recompiles.recompiles and \
            result.recompiles.dynamic_helps is not False and \
            not result.compile_settings.get("dynamic"):  # not what the scan showed useless
        setting = FIXES["dynamic"].setting
        plans.append(FixPlan(Fix(rule=FIXES["dynamic"].rule, fix_id="dynamic", kind="setting",
                                 title=f"compile with {setting}", category="shape_branch",
                                 setting=setting, before=before), {}, dynamic=True))
    return plans


# Library switches: the same library, configured or called differently, no file edited. Each is
# offered when a break's call chain passes where the switch acts, and verified like any fix.
Chain = list[tuple[str, str]]  # (file, function) of each frame, outermost first


def _through_attention(chain: Chain) -> bool:
    return any("attention" in fn.lower() or "attention" in os.path.basename(path)
               for path, fn in chain)


def _through_experts(chain: Chain) -> bool:
    return any("expert" in fn.lower() or path.endswith("integrations/moe.py")
               for path, fn in chain)


def _through_cache(chain: Chain) -> bool:
    return any(path.endswith("cache_utils.py") for path, _ in chain)


def _through_generation(chain: Chain) -> bool:
    return any("/generation/" in path or "generation_" in os.path.basename(path)
               for path, _ in chain)


# (fix id, what it changes, how users write it, when it applies)
LIBRARY_SWITCHES: tuple[tuple[str, dict[str, Any], str, Callable[[Chain], bool]], ...] = (
    ("attn_implementation=eager", {"call": ["set_attn_implementation", "eager"]},
     'model.set_attn_implementation("eager")', _through_attention),
    ("attn_implementation=sdpa", {"call": ["set_attn_implementation", "sdpa"]},
     'model.set_attn_implementation("sdpa")', _through_attention),
    ("experts_implementation=eager", {"call": ["set_experts_implementation", "eager"]},
     'model.set_experts_implementation("eager")', _through_experts),
    ("experts_implementation=batched_mm", {"call": ["set_experts_implementation", "batched_mm"]},
     'model.set_experts_implementation("batched_mm")', _through_experts),
    ("use_cache=False", {"kwargs": {"use_cache": False}}, "model(..., use_cache=False)",
     _through_cache),
    ("compile_forward", {"compile_only": "forward"},
     "model.forward = torch.compile(model.forward); model.generate(...) (not all of generate)",
     _through_generation),
)


def _library_switches(result: ScanResult, before: FixMetrics) -> list[FixPlan]:
    """The switches of the library (transformers) that the breaks sit in."""
    plans = []
    for fix_id, switch, how, applies in LIBRARY_SWITCHES:
        if switch.get("compile_only") and result.method == "forward":
            continue  # forward is what is compiled already
        hits = [b for b in result.breaks if b.owner != "user" and any(
            "/transformers/" in p for p, _ in _chain(b)) and applies(_chain(b))]
        if hits:
            brk = hits[0]
            category = brk.root_category
            plans.append(FixPlan(Fix(rule=rule_id(category), fix_id=fix_id, kind="switch",
                                     title=f"library switch: {how}", category=category,
                                     setting=how, file=brk.file, line=brk.line, before=before),
                                 {}, switch=switch))
    return plans


def _path_switches(result: ScanResult, before: FixMetrics) -> list[FixPlan]:
    """The module and config attributes tested on the way to the breaks (``switches.py``),
    each a candidate verified in its own child."""
    from .switches import search

    plans = []
    for switch in search(result.breaks):
        value = "not current" if switch.value == "flip" else repr(switch.value)
        fix_id = switch_id(switch)
        semantics = " (changes training semantics)" if switch.training_semantics else ""
        where = "config" if switch.on_config else "/".join(switch.classes)
        title = (f"switch on the path: {where}.{switch.attr} = {value}{semantics}, read at "
                 + "; ".join(switch.tests[:2]).replace(" `", " `", 1))
        brk = next(b for b in result.breaks if (b.file, b.line) in switch.sites)
        plans.append(FixPlan(Fix(rule=rule_id(brk.root_category),
                                 fix_id=fix_id, kind="switch",
                                 title=title, category=brk.root_category, setting=switch.code(),
                                 file=brk.file, line=brk.line, before=before), {},
                             switch={"path": switch.request()}))
    return plans


def _chain(brk: Any) -> Chain:
    return [(f.file, f.function) for f in brk.call_chain] + [(brk.file, brk.function)]


def _callee_after(brk: Any) -> str | None:
    """The function the user's line calls into on the way to the break (the next frame)."""
    chain = brk.call_chain
    for idx, frame in enumerate(chain[:-1]):
        if frame is brk.user_frame or (frame.file, frame.line) == (brk.user_frame.file,
                                                                   brk.user_frame.line):
            return chain[idx + 1].function or None
    return None


def rewrite_for(fix_id: str, category: str, source: str, line: int, call: str | None) -> Any:
    """The source rewrite behind a source fix id (also used again by ``--write``)."""
    from .rewrite import propose_disable, propose_rewrite, propose_tolist_loop

    if fix_id == "disable_call":
        return propose_disable(source, line, call or "")
    if fix_id == "tolist_loop":
        return propose_tolist_loop(source, line)
    if fix_id == "constant_source":
        from .rewrite import propose_constants

        return propose_constants(source, [int(n) for n in (call or str(line)).split(",")])
    return propose_rewrite(source, line, _REWRITE_AS.get(category, category))


def _plan_source(plans: list[FixPlan], seen: set, fix_id: str, category: str, file: str,
                 line: int, call: str | None, target_file: Path | None, before: FixMetrics,
                 quiet: bool = False) -> None:
    """Plan one source fix at ``file:line``; a refusal is kept with its reason unless quiet."""
    if (fix_id, file, line) in seen:
        return
    seen.add((fix_id, file, line))
    rule = rule_for_fix(fix_id, category)
    fix = Fix(rule=rule, fix_id=fix_id, kind="source", title=fix_id, category=category,
              file=file, line=line, before=before, call=call)
    drop = quiet or category in _REWRITE_AS
    sources = source_tree(target_file) if target_file is not None else None
    tree = sources.tree if sources is not None else None
    # A lone file's copy holds its folder's .py files, not subfolders: a file down there
    # could not be verified from the copy.
    lone_sub = sources is not None and sources.package_dir is None and \
        Path(file).resolve().parent != tree
    if tree is None or not Path(file).resolve().is_relative_to(tree) or lone_sub:
        if not drop:
            where = f" ({display_path(str(tree))})" if tree else ""
            fix.reason = ("refused: source fixes rewrite only files of the target's own folder "
                          f"or package{where}; this break is in another file")
            plans.append(FixPlan(fix, {}))
        return
    try:
        source, original = read_source(file)
    except (OSError, UnicodeDecodeError) as exc:
        fix.reason = f"refused: cannot read {file}: {getattr(exc, 'strerror', None) or exc}"
        plans.append(FixPlan(fix, {}))
        return
    fix.source_sha256 = hashlib.sha256(original).hexdigest()
    from .rewrite import unified_diff

    rewrite = rewrite_for(fix_id, category, source, line, call)
    fix.title = rewrite.title
    if rewrite.new_source is None:
        if not drop:  # an .item() whose value is used, not only logged: the setting is the fix
            fix.reason = f"refused: {rewrite.refused}"
            plans.append(FixPlan(fix, {}))
        return
    fix.diff = unified_diff(source, rewrite.new_source, display_path(file))
    plans.append(FixPlan(fix, {}, new_source=rewrite.new_source))


def _plan_constants(plans: list[FixPlan], brk: Any, target_file: Path | None,
                    before: FixMetrics) -> None:
    """A constant kept in a tensor: replace it on the built model (works for library code:
    the printed loop is what the user runs), and where it is created in the user's own file,
    create it as a Python value (a source rewrite)."""
    from ..analysis.analyse import constant_patch

    spec = {}
    for const in brk.constants:
        spec.setdefault(const.cls, []).append(const.attr)
    patch = constant_patch(brk)
    plans.append(FixPlan(Fix(rule="BS012", fix_id="python_constants", kind="constants",
                             title="the constants as Python values on the built model",
                             category="tensor_constant", setting=patch, file=brk.file,
                             line=brk.line, before=before), {}, constants=spec))
    by_file: dict[str, list[int]] = {}
    for const in brk.constants:
        if const.line:
            by_file.setdefault(const.file, []).append(const.line)
    tree = source_tree(target_file).tree if target_file is not None else None
    for file, lines in by_file.items():
        if brk.owner != "user" or tree is None or not Path(file).resolve().is_relative_to(tree):
            continue
        from .rewrite import propose_constants, unified_diff

        source, original = read_source(file)
        rewrite = propose_constants(source, sorted(set(lines)))
        fix = Fix(rule="BS012", fix_id="constant_source", kind="source", title=rewrite.title,
                  category="tensor_constant", file=file, line=min(lines), before=before,
                  call=",".join(map(str, sorted(set(lines)))),
                  source_sha256=hashlib.sha256(original).hexdigest())
        if rewrite.new_source is None:
            fix.reason = f"refused: {rewrite.refused}"
            plans.append(FixPlan(fix, {}))
            continue
        fix.diff = unified_diff(source, rewrite.new_source, display_path(file))
        plans.append(FixPlan(fix, {}, new_source=rewrite.new_source, constants=spec))


def apply_constants(model: Any, spec: dict[str, list[str]]) -> int:
    """Replace each named constant tensor attribute with its Python value, on every module of
    the named classes; returns how many were replaced."""
    replaced = 0
    for module in model.modules():
        names = spec.get(type(module).__qualname__, ())
        for name in names:
            value = getattr(module, name, None)
            if value is None or not hasattr(value, "tolist"):
                continue
            python = value.tolist()
            delattr(module, name)
            setattr(module, name, python)
            replaced += 1
    return replaced


def _dynamo_config() -> Any:
    """torch._dynamo.config, imported only when a hint names a setting (the parent stays light)."""
    import torch._dynamo.config as config

    return config


def unfixed(result: ScanResult, fixes: list[Fix]) -> list[str]:
    """``no fix proposed for #N: <why>`` for every break no fix was even tried for."""
    out = []
    for rank, brk in enumerate(result.breaks, 1):
        places = {(brk.file, brk.line)} | ({(brk.user_frame.file, brk.user_frame.line)}
                                           if brk.user_frame else set())
        if any((f.file, f.line) in places for f in fixes) or any(
                f.kind == "switch" and applies(_chain(brk))
                for f in fixes for fix_id, _, _, applies in LIBRARY_SWITCHES
                if fix_id == f.fix_id) or _switched(brk, fixes):
            continue
        category = brk.root_category
        if category in ("other", "unsupported_call", "explicit_break", "tolist_numpy"):
            why = (f"breakscan has no automatic fix for this {category.replace('_', ' ')} break "
                   "and Dynamo's hints name no setting; follow the advice above")
        elif brk.owner != "user":
            why = ("the break is in library code, which breakscan does not rewrite, and no "
                   "setting applies; follow the advice above")
        else:
            why = "no rewrite applies to this line; follow the advice above"
        out.append(f"no fix proposed for #{rank} ({brk.category} at "
                   f"{display_path(brk.file)}:{brk.line}): {why}")
    return out


def _switched(brk: Any, fixes: list[Fix]) -> bool:
    """A switch on this break's path was tried (``switches.py``)."""
    from .switches import switches_for

    tried = {f.fix_id for f in fixes if f.kind == "switch"}
    return any(switch_id(s) in tried for s in switches_for(brk))


def switch_id(switch: Any) -> str:
    value = "not current" if switch.value == "flip" else repr(switch.value)
    return f"switch:{switch.attr}={value}"


def judge(fix: Fix, fixed: FixedScan, *, dynamic: bool) -> None:
    """Fill in ``after`` and the verdict: same outputs and a real gain, or not verified."""
    fix.after = metrics(fixed.result, dynamic=dynamic)
    fix.after.speedup = None  # no eager-relative number from another process: see fix.ab
    compiled = fixed.compiled_outputs
    same = fixed.same_outputs
    fix.outputs_match = same.match and (compiled is None or compiled.match)
    fix.max_abs_error = same.max_abs_error
    before, after = fix.before, fix.after
    failed = fixed.compile_error or (fixed.result.compile_error.message
                                     if fixed.result.compile_error else None)
    if failed:
        fix.status = "breaks compilation"
        fix.reason = f"breaks compilation: torch.compile fails with it: {failed}"
        fix.after = None  # no graph was made: "22 -> 0 graphs" would read as a gain
    elif not same.match:
        fix.status = "changes outputs"
        fix.reason = f"outputs differ from the original model: {same.message}"
        if "(changes training semantics)" in fix.title:  # expected of such a switch
            fix.reason = ("changes training semantics, so the outputs differ (expected when "
                          f"this switch is off): {fix_numbers_text(before, after)}")
    elif compiled is not None and not compiled.match:
        fix.status = "changes outputs"
        fix.reason = f"compiled outputs differ from eager with the fix: {compiled.message}"
    elif not gained(before, after):
        fix.status = "makes it worse" if worse(before, after) else "no effect"
        fix.reason = (f"{fix.status}: graphs {before.graph_count} -> {after.graph_count}; per "
                      f"call, graph calls {whole(before.graph_calls_per_call)} -> "
                      f"{whole(after.graph_calls_per_call)}, returns to Python "
                      f"{whole(before.eager_gaps_per_call)} -> "
                      f"{whole(after.eager_gaps_per_call)}"
                      + (f"; recompiles {before.recompiles} -> {after.recompiles}"
                         if before.recompiles is not None or after.recompiles is not None
                         else "")
                      + f" (breaks {before.breaks} -> {after.breaks}: fewer break sites alone "
                        "is no gain)")
    else:
        fix.status = "verified"
    if fix.after is None:  # nothing compiled with it: no numbers, no timing
        pass
    elif fixed.ab is not None:  # both latencies from one process, never one from each
        fix.ab = fixed.ab
        fix.before = replace(before, compiled_s=fixed.ab.original.value)
        fix.after.compiled_s = fixed.ab.fixed.value
        if fix.status == "verified" and fixed.ab.verdict == "slower":
            fix.status = "slower"
            what = "removes the break" if after.breaks < before.breaks else \
                "fewer graphs or returns to Python"
            fix.reason = f"{what} · {1 / fixed.ab.speedup.value:.2f}× slower: no gain"
    else:
        fix.after.compiled_s = None
    fix.verified = fix.status == "verified"


def fix_numbers_text(before: FixMetrics, after: FixMetrics) -> str:
    return (f"graphs {before.graph_count} -> {after.graph_count}, graph calls per call "
            f"{whole(before.graph_calls_per_call)} -> {whole(after.graph_calls_per_call)}")


def worse(before: FixMetrics, after: FixMetrics) -> bool:
    """More graphs, or per call more graph calls, returns to Python, frames run eagerly, or
    more recompiles (a Dynamo-hinted setting can do that: 3 -> 4 graphs was seen)."""
    def more(b: float | None, a: float | None) -> bool:
        return b is not None and a is not None and a > b

    return (after.graph_count > before.graph_count
            or more(before.graph_calls_per_call, after.graph_calls_per_call)
            or more(before.eager_gaps_per_call, after.eager_gaps_per_call)
            or more(before.frames_run_eagerly_per_call, after.frames_run_eagerly_per_call)
            or more(before.recompiles, after.recompiles))



class FixesInterrupted(Exception):
    """Ctrl-C / SIGTERM during a verification: the fixes verified so far, and the exit code."""

    def __init__(self, fixes: list[Fix], exit_code: int, error: str):
        super().__init__(error)
        self.fixes, self.exit_code, self.error = fixes, exit_code, error


FIX_JOB = "breakscan.fixes.plan:scan_with_fix"


def verify_fixes(target: str, options: ScanOptions, result: ScanResult, limits: Limits, *,
                 on_fix: Callable[[Fix], None] | None = None,
                 on_stage: Callable[[str], None] | None = None) -> list[Fix]:
    """Plan and verify every fix, each in its own child process (the scan's options and
    limits), and ``on_fix(fix)`` as each is judged.

    ``on_stage("fix 2/4: torch_where · explain")`` follows the verifications live.
    """
    from ..process.isolate import run_isolated

    fixes = []
    plans = plan_fixes(target, result)
    for number, plan in enumerate(plans, 1):
        fix = plan.fix
        if fix.reason is None:
            label = f"fix {number}/{len(plans)}: {fix.fix_id}"
            stage = (lambda name, label=label: on_stage(f"{label} · {name}")) if on_stage \
                else None
            run = run_isolated(FIX_JOB, {"target": target, "options": options.to_dict(),
                                         "fix": plan.request()},
                               target=target, limits=limits, on_stage=stage,
                               returns=FixedScan)
            if run.interrupted:
                fix.reason = f"verification {run.error}"
                fixes.append(fix)
                if on_fix:
                    on_fix(fix)
                raise FixesInterrupted(fixes, run.exit_code,
                                       f"{run.error} (verifying fix {fix.fix_id})")
            if run.error is not None:
                applicable = not run.error.startswith("not applicable")
                fix.status = "not tried" if applicable else "not applicable"
                fix.reason = f"verification did not finish: {run.error}" if applicable \
                    else run.error
            else:
                judge(fix, run.result, dynamic=bool(plan.dynamic))
        fixes.append(fix)
        if on_fix:
            on_fix(fix)
    return fixes


def write_fixes(fixes: list[Fix]) -> list[str]:
    """Apply the verified source fixes to the user's files, each file once, with a backup.

    Fixes of one file are applied from the bottom up, so each rewrite's line is still where the
    scan saw it. Returns the files written.
    """
    by_file: dict[str, list[Fix]] = {}
    for fix in fixes:
        if fix.kind == "source" and fix.verified and fix.file:
            by_file.setdefault(fix.file, []).append(fix)
    from ..errors import UsageError

    written = []
    for file, file_fixes in by_file.items():
        path = Path(file)
        if any(f.source_sha256 and content_hash(path) != f.source_sha256 for f in file_fixes):
            raise UsageError(f"refusing to write {display_path(file)}: it changed since the "
                             "scan verified the fix; run --fix again")
        if not path.stat().st_mode & 0o222 or not os.access(path, os.W_OK):  # root too
            raise UsageError(f"refusing to write {display_path(file)}: the file is read-only")
        try:
            source, original = read_source(path)
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"cannot read {display_path(file)}: {exc}") from None
        for fix in sorted(file_fixes, key=lambda f: f.line or 0, reverse=True):
            rewrite = rewrite_for(fix.fix_id, fix.category, source, fix.line or 0, fix.call)
            if rewrite.new_source is not None:
                source = rewrite.new_source
                fix.written = True
        if not any(f.written for f in file_fixes):
            continue  # nothing to change: the file stays as it is, no backup
        backup = _free_name(path.with_name(path.name + ".breakscan.bak"))
        try:
            shutil.copy2(path, backup)
            write_source_in_place(path, source, original)
        except OSError as exc:
            raise UsageError(f"cannot write {display_path(file)} or its backup: "
                             f"{exc.strerror or exc}") from None
        for fix in file_fixes:
            fix.backup = str(backup) if fix.written else None
        written.append(file)
    return written


def _free_name(path: Path) -> Path:
    candidate, number = path, 1
    while os.path.lexists(candidate):  # a dangling link is taken too: never written through
        number += 1
        candidate = path.with_name(f"{path.name}.{number}")
    return candidate


# --- the child side: apply one fix and rescan ------------------------------------------------


def _forget_modules_in(folder: Path) -> None:
    """Drop modules imported from ``folder`` (and below) so the rewritten copies are imported."""
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and Path(file).resolve().is_relative_to(folder):
            del sys.modules[name]


def _copy_tree(target_file: Path, tmp: Path) -> tuple[Path, Path]:
    """Copy the target's Python sources into ``tmp``: its whole top package (keeping the
    package's name, so its dotted imports resolve to the copy), or a lone file's siblings.
    Returns (the original tree, where it now lives)."""
    tree = source_tree(target_file)
    if tree.package_dir is None:
        for sibling in tree.tree.glob("*.py"):  # the copy imports its siblings, not originals
            shutil.copy2(sibling, tmp / sibling.name)
        return tree.tree, tmp
    dest = tmp / tree.package_dir.name
    for source in tree.package_dir.rglob("*.py"):
        if "__pycache__" in source.parts:
            continue
        copy = dest / source.relative_to(tree.package_dir)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, copy)
    return tree.package_dir, dest


def _load_rewritten(target: str, load_kwargs: dict[str, Any], file: str, new_source: str,
                    original: Any, tmp: Path, removed: frozenset[str] = frozenset()) -> Any:
    from ..errors import ModelError, UsageError
    from ..pipeline.load import load_target

    own_file = target_file(target)
    if own_file is None:
        raise UsageError(f"not applicable: the file of {target} was not found")
    tree, copy = _copy_tree(own_file, tmp)
    (copy / Path(file).resolve().relative_to(tree)).write_text(new_source, encoding="utf-8")
    _forget_modules_in(tree)
    name = target.rpartition(":")[2]
    fixed = load_target(f"{copy / own_file.relative_to(tree)}:{name}", **load_kwargs)
    try:
        state = original.model.state_dict()
        if removed:  # constants made Python values: no longer in the state dict
            state = {k: v for k, v in state.items() if k.rpartition(".")[2] not in removed}
        fixed.model.load_state_dict(state)
    except (RuntimeError, KeyError) as exc:
        raise ModelError(f"the rewritten model's parameters differ from the original's: "
                         f"{' '.join(str(exc).split())[:200]}") from exc
    fixed.args, fixed.kwargs = original.args, original.kwargs  # the very same inputs
    return fixed


def apply_switch(loaded: Any, switch: dict[str, Any]) -> None:
    """Apply a library switch to a loaded target; UsageError when it does not apply."""
    import inspect

    from ..errors import UsageError, describe

    model = loaded.model
    if "path" in switch:
        from .switches import apply_switch as set_attribute

        if not set_attribute(model, switch["path"]):
            raise UsageError(f"not applicable: nothing on the built model has "
                             f"{switch['path']['attribute']} to change")
    if "call" in switch:
        name, value = switch["call"]
        setter = getattr(model, name, None)
        if setter is None:
            raise UsageError(f"not applicable: {type(model).__name__} has no {name}()")
        current = getattr(getattr(model, "config", None), "_" + name[len("set_"):], None)
        if current == value:
            raise UsageError(f"not applicable: the model already uses {value!r}")
        try:
            setter(value)
        except Exception as exc:
            raise UsageError(f"not applicable: {name}({value!r}) failed: {describe(exc)}") \
                from None
    if "kwargs" in switch:
        params = inspect.signature(loaded.fn).parameters
        if not all(k in params for k in switch["kwargs"]) and not any(
                p.kind is p.VAR_KEYWORD for p in params.values()):
            raise UsageError(f"not applicable: {loaded.method}() takes no "
                             f"{', '.join(switch['kwargs'])}")
        loaded.kwargs = {**loaded.kwargs, **switch["kwargs"]}
    if "compile_only" in switch:
        if not callable(getattr(model, switch["compile_only"], None)):
            raise UsageError(f"not applicable: the model has no {switch['compile_only']}()")
        loaded.compile_only = switch["compile_only"]


def scan_with_fix(request: dict[str, Any], on_stage: Callable[[str, Any], None],
                  on_progress: Callable[[str], None] | None = None) -> FixedScan:
    """The isolated child's job: load the original, apply ``request["fix"]``, rescan and time;
    compare outputs."""
    import torch

    from ..errors import ModelError, UsageError
    from ..pipeline.load import load_target
    from ..pipeline.measure import Variant, compare_outputs, eager_outputs, time_interleaved
    from ..pipeline.scan import scan_loaded, shape_sets_for

    target, fix = request["target"], request["fix"]
    options = ScanOptions.from_dict(request["options"])
    load = options.load_options
    on_stage("load", None)
    original = load_target(target, **load)
    with tempfile.TemporaryDirectory(prefix="breakscan-fix-",
                                     dir=os.environ.get("BREAKSCAN_WORK")) as tmp:
        fixed = original
        if fix["kind"] == "source":
            removed = frozenset(a for attrs in (fix.get("constants") or {}).values()
                                for a in attrs)
            fixed = _load_rewritten(target, load, fix["file"], fix["new_source"], original,
                                    Path(tmp), removed)
        elif fix["kind"] == "switch":
            fixed = load_target(target, **load)  # a second copy, same seed: same weights
            apply_switch(fixed, fix["switch"])
        elif fix["kind"] == "constants":
            fixed = load_target(target, **load)
            if not apply_constants(fixed.model, fix["constants"]):
                raise UsageError("not applicable: no such attribute on the built model")
        timing = options.timing or TimingOptions()
        sets = shape_sets_for(fixed, options.vary_batch, list(options.shapes))
        config = resolved_config(fix["config"])
        try:
            with torch._dynamo.config.patch(**config):
                result = scan_loaded(fixed, options.but(timing=None), shape_sets=sets,
                                     on_stage=on_stage, on_progress=on_progress)
        except ModelError as exc:  # the change broke the model itself (eager)
            raise UsageError(f"not applicable: with it, the model fails: {exc}") from None
        # After the scan, which must capture the fixed model's first call.
        expected = eager_outputs(fixed)
        found = FixedScan(result=result,
                          same_outputs=compare_outputs(eager_outputs(original), expected))
        before = FixMetrics(**fix["before"]) if fix.get("before") else None
        after = metrics(result, dynamic=bool(fix.get("dynamic")))
        if found.same_outputs.match and before is not None and gained(before, after) and \
                result.compile_error is None:
            def variant(loaded: Any, **how: Any) -> Variant:
                only = (loaded.model, loaded.compile_only) if loaded.compile_only else None
                return Variant(loaded.fn, loaded.args, loaded.kwargs, compile_only=only, **how)

            dynamic = options.dynamic  # the user's setting, unless the fix is dynamic=True
            found.ab, found.compiled_outputs, found.compile_error = time_interleaved(
                variant(original, dynamic=dynamic),
                variant(fixed, dynamic=fix.get("dynamic") or dynamic, config=config),
                device=fixed.device, training=fixed.training, backend=timing.backend,
                mode=timing.mode, threads=timing.threads, max_run_time=timing.max_run_time,
                expected=expected, compile_options=dict(options.compile_options),
                on_stage=lambda name: on_stage(name, result), on_progress=on_progress)
    return found


__all__ = ["FixPlan", "FixedScan", "plan_fixes", "verify_fixes", "write_fixes", "judge",
           "scan_with_fix"]
