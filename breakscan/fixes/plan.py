"""Planning ``--fix``: for each break, the fixes worth trying, each with what the child applies.

A break gets the settings of its rule and those Dynamo's hints name, a rewrite of the user's
source when one applies (refused ones kept, with their reason), a fix at the user's own call
into a library it breaks in, and the switches of the library (the fix registry's, ``rules.FIXES``)
or on the break's path (``switches.py``). Nothing is verified here: ``verify.py`` runs each plan
in its own child process. The planner never imports torch.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..analysis.roots import random_draws_used
from ..files import read_source
from ..frames import display_path
from ..model.jobs import FixRequest
from ..model.result import ScanResult
from ..model.verdicts import CANDIDATE, Fix, FixMetrics
from ..options import ScanOptions
from ..rules.bs012_tensor_constant import RULE as TENSOR_CONSTANT, constant_patch
from ..rules.bs015_rng import RULE as RNG
from ..rules.catalogue import (FIXES, Chain, fixes_for, library_switches, rule_for, rule_for_fix,
                               rule_id)
from ..rules.model import Switch
from ..rules.recompiles import SHAPE_BRANCH
from ..sources import source_tree, target_file
from .judge import TRAINING_SEMANTICS, metrics
from .library_patch import plan_library_patches
from .regional import plan_regional
from .settings import dynamo_config, hinted_settings

# Source fixes tried only when no other source fix rewrote the break's line, refused quietly.
_FALLBACKS = frozenset({"disable_region"})


@dataclass
class FixPlan:
    """A fix to verify: the record to fill in plus what the child must apply."""

    fix: Fix
    config: dict[str, Any]
    dynamic: bool | None = None
    new_source: str | None = None
    switch: Switch | None = None  # a library switch (rules.FIXES) or one on the path
    constants: dict[str, list[str]] | None = None  # class -> attributes made Python values

    def request(self, target: str, options: ScanOptions) -> FixRequest:
        """What the verifying child is asked to apply to ``target``."""
        return FixRequest(target, options, kind=self.fix.kind, fix_id=self.fix.fix_id,
                          config=tuple(self.config.items()), dynamic=self.dynamic,
                          file=self.fix.file, new_source=self.new_source, switch=self.switch,
                          constants=tuple((c, tuple(a)) for c, a in (self.constants or {}).items()),
                          before=self.fix.before, changes=self.fix.changes)


def plan_fixes(target: str, result: ScanResult) -> list[FixPlan]:
    """Every fix worth trying for this result, refused ones included (with their reason)."""
    plans: list[FixPlan] = []
    seen: set[tuple[str, str | None, int | None]] = set()
    own_file = target_file(target)
    before = metrics(result)
    in_force = getattr(result, "dynamo_settings", None) or {}
    for brk in result.breaks:
        category = brk.root_category
        _plan_settings(plans, seen, brk, before, in_force)
        if category == TENSOR_CONSTANT.category:
            _plan_constants(plans, brk, own_file, before)
            continue
        if brk.owner == "user":
            _plan_user_sources(plans, seen, brk, own_file, before)
        else:  # a break inside an installed library: the rewrite on a patched copy
            for fix, patched, around in plan_library_patches(brk, before, seen):
                plans.append(FixPlan(fix, {}, new_source=patched,
                                     switch=Switch(around=around) if around else None))
        if brk.owner != "user" and brk.user_frame is not None:
            # A break inside a library: act at the user's own call into it, without editing
            # the library (run that call eagerly; or hand it Python numbers from a loop).
            callee = _callee_after(brk)
            if callee:
                _plan_source(plans, seen, "disable_call", category, brk.user_frame.file,
                             brk.user_frame.line, callee, own_file, before,
                             only_matched=True)  # silent when the line calls it otherwise
            _plan_source(plans, seen, "tolist_loop", category, brk.user_frame.file,
                         brk.user_frame.line, None, own_file, before, quiet=True)
    for finding in result.kernel_findings:  # --kernels: a kernel rule's rewrite at its line
        for spec in fixes_for(finding.category, "source"):
            if finding.file and finding.line:
                _plan_source(plans, seen, spec.id, finding.category, finding.file, finding.line,
                             None, own_file, before)
    for more in (_library_switches, _warm_up, _path_switches, _input_forms):
        plans.extend(more(result, before))
    plans.extend(FixPlan(fix, {}, switch=switch) for fix, switch in plan_regional(result, before))
    if result.recompiles is not None and result.recompiles.recompiles and result.recompiles.\
            dynamic_helps is not False and not result.compile_settings.get("dynamic"):
        setting = FIXES["dynamic"].setting
        plans.append(FixPlan(Fix(rule=FIXES["dynamic"].rule, fix_id="dynamic", kind="setting",
                                 title=f"compile with {setting}", category=SHAPE_BRANCH.category,
                                 setting=setting, before=before), {}, dynamic=True))
    return plans


def _plan_user_sources(plans: list[FixPlan], seen: set, brk: Any, own_file: Path | None,
                       before: FixMetrics) -> None:
    """Every source fix of the break's family at its line, each its own plan. A rule's own
    fix keeps its refusal as today; a fix tried on many families (rule None) speaks only when
    its pattern is on the line (``Rewrite.matched``); the fallback ``disable_region`` only
    when no other fix rewrote the line, and never with a refusal. A rewrite equal to one
    already planned (the side-effect guard of a print) is not planned twice."""
    category = brk.root_category
    specs = list({s.id: s for s in fixes_for(category, "source")}.values())
    start = len(plans)
    for spec in specs:
        if spec.id in _FALLBACKS:
            continue
        _plan_source(plans, seen, spec.id, category, brk.file, brk.line, None, own_file,
                     before, only_matched=spec.rule is None)
    # A break moved to where its value came from (a check inside torch.testing.assert_close
    # reported at the line computing what it checks): the statement that ran it is guarded.
    for site in getattr(brk, "sites", None) or []:
        if site.file == brk.file and site.line != brk.line and \
                any(s.id == "guard_side_effect" for s in specs):
            _plan_source(plans, seen, "guard_side_effect", category, brk.file, site.line, None,
                         own_file, before, only_matched=True)
    if category == RNG.category:  # torch 2.14 breaks where the number is used: rewrite its draw
        for draw, _ in random_draws_used(brk.file, brk.line, getattr(brk, "code", "")):
            _plan_source(plans, seen, "torch_rng", category, brk.file, draw, None, own_file,
                         before, only_matched=True)
    _drop_repeats(plans, start)
    if not any(p.new_source is not None for p in plans[start:]):
        for spec in specs:
            if spec.id in _FALLBACKS:
                _plan_source(plans, seen, spec.id, category, brk.file, brk.line, None,
                             own_file, before, quiet=True)
        _drop_repeats(plans, start)  # two breaks in one region: one helper


def _drop_repeats(plans: list[FixPlan], start: int) -> None:
    """Plans from ``start`` repeating an earlier plan's rewrite and judgement, removed."""
    def key(p: FixPlan) -> tuple:
        return p.new_source, p.switch.around if p.switch else None, p.fix.changes
    found = {key(p) for p in plans[:start]}
    keep = plans[:start]
    for plan in plans[start:]:
        if plan.new_source is None or key(plan) not in found:
            found.add(key(plan))
            keep.append(plan)
    plans[:] = keep


def _plan_settings(plans: list[FixPlan], seen: set, brk: Any, before: FixMetrics,
                   in_force: dict[str, Any] | None = None) -> None:
    """The Dynamo settings of the break's rule, then those its hints name, each planned once;
    a setting the scanned process already had (``ScanResult.dynamo_settings``) is not."""
    category = brk.root_category
    settings = [(spec.id, spec.setting, dict(spec.config))
                for spec in fixes_for(category, "setting")]
    for name, value in hinted_settings(brk):  # what Dynamo's own hints name
        if not any(name in config for _, _, config in settings) and \
                hasattr(dynamo_config(), name):
            how = (f"torch._dynamo.config.{name}.add({value['functions'][0]})"
                   if isinstance(value, dict) else f"torch._dynamo.config.{name} = {value!r}")
            settings.append((name, how, {name: value}))
    in_force = in_force or {}
    for fix_id, setting, config in settings:
        if config and all(name in in_force and in_force[name] == value
                          for name, value in config.items()):
            continue  # already so in the scanned model: nothing to try
        if (fix_id, None, None) not in seen:
            seen.add((fix_id, None, None))
            plans.append(FixPlan(Fix(rule=rule_for_fix(fix_id, category), fix_id=fix_id,
                                     kind="setting",
                                     title=f"set {setting}", category=category,
                                     setting=setting, file=brk.file, line=brk.line,
                                     before=before), config))


def switch_candidates(result: ScanResult) -> list[Fix]:
    """Without --fix: the switches found on the breaks' paths (and the library's own), named
    as untried candidates (status ``not tried``)."""
    before = metrics(result)
    fixes = [plan.fix for plan in _library_switches(result, before)
             + _path_switches(result, before) + _input_forms(result, before)]
    for fix in fixes:
        fix.reason, fix.before = CANDIDATE, None
    return fixes


# Library switches: the same library, configured or called differently, no file edited. Each is
# offered when a break's call chain passes where the switch acts, and verified like any fix.
def _library_switches(result: ScanResult, before: FixMetrics) -> list[FixPlan]:
    """The switches of the library (transformers) that the breaks sit in."""
    plans = []
    for spec in library_switches():
        switch, how, applies = spec.switch, spec.setting, spec.applies
        hits = [b for b in result.breaks if b.owner != "user" and any(
            "/transformers/" in p for p, _ in _chain(b)) and applies(_chain(b))]
        if hits and switch.compile_only and result.method == "forward":
            # forward is compiled already: the driver loop (``self.lm.generate(...)``) is in
            # it, so compile the inner model's forward and keep the loop eager
            called = _inner_model_called(hits[0])
            if called is None:
                continue
            inner, driver = called
            switch = Switch(compile_only=f"{inner}.{switch.compile_only}")
            how = (f"model.{inner}.forward = torch.compile(model.{inner}.forward)  # forward "
                   f"itself not compiled: the {inner}.{driver}() loop in it stays eager")
        if hits:
            brk = hits[0]
            category = brk.root_category
            plans.append(FixPlan(Fix(rule=rule_id(category), fix_id=spec.id, kind="switch",
                                     title=f"library switch: {how}", category=category,
                                     setting=how, file=brk.file, line=brk.line, before=before),
                                 {}, switch=switch))
    return plans


_INNER_CALL = re.compile(r"\bself\.([A-Za-z_][\w.]*)\.(\w+)\(")


def _inner_model_called(brk: Any) -> tuple[str, str] | None:
    """The attribute path of the model the user's own frame calls into on the break's chain
    and the method called (``("lm", "generate")`` for ``self.lm.generate(...)``), read from
    that line; None when it is not one."""
    frame = brk.user_frame
    if frame is None or not frame.code:
        return None
    match = _INNER_CALL.search(frame.code)
    return (match.group(1), match.group(2)) if match else None


def _shown_test(test: str) -> str:
    """A switch's "file:line `test`" with the file as every report shows it."""
    file, sep, rest = test.partition(" `")
    path, _, line = file.rpartition(":")
    return f"{display_path(path)}:{line}{sep}{rest}" if path and line.isdigit() else test


def _path_switches(result: ScanResult, before: FixMetrics) -> list[FixPlan]:
    """The module and config attributes tested on the way to the breaks (``switches.py``),
    each a candidate verified in its own child."""
    from .switches import search

    plans = []
    for switch in search(result.breaks):
        fix_id = switch.fix_id
        semantics = f" {TRAINING_SEMANTICS}" if switch.training_semantics else ""
        title = (f"switch on the path: {switch.describe()}{semantics}, read at "
                 + "; ".join(_shown_test(t) for t in switch.tests[:2]))
        brk = next(b for b in result.breaks if (b.file, b.line) in switch.sites)
        plans.append(FixPlan(Fix(rule=rule_id(brk.root_category),
                                 fix_id=fix_id, kind="switch",
                                 title=title, category=brk.root_category, setting=switch.code(),
                                 file=brk.file, line=brk.line, before=before), {},
                             switch=switch.request()))
    return plans


def _warm_up(result: ScanResult, before: FixMetrics) -> list[FixPlan]:
    """One eager call before compiling, for breaks only the first call takes (a lazy table, a
    one-time warning): once per model, at the first such break."""
    first = [b for b in result.breaks if getattr(b, "calls", None) == "first_only"]
    if not first:
        return []
    spec = FIXES["warm_up"]
    brk = first[0]
    lines = ", ".join(f"{display_path(b.file)}:{b.line}" for b in first[:3])
    return [FixPlan(Fix(rule=rule_id(brk.root_category), fix_id=spec.id, kind="switch",
                        title=f"warm up: call the model once, eagerly, before compiling it "
                              f"(the first call alone breaks at {lines})",
                        category=brk.root_category, setting=spec.setting, file=brk.file,
                        line=brk.line, before=before), {}, switch=spec.switch)]


def _input_forms(result: ScanResult, before: FixMetrics) -> list[FixPlan]:
    """An integer input the library also takes as a Python list, passed so (one plan with
    every such input): each ``.tolist()`` on it disappears."""
    from .input_forms import input_forms

    forms = input_forms(result.breaks, getattr(result, "inputs", None) or [])
    if not forms:
        return []
    spec = FIXES["input_form"]
    names = tuple(f.name for f in forms)
    sites = {site for f in forms for site in f.sites}
    brk = next(b for b in result.breaks if (b.file, b.line) in sites)
    passed = ", ".join(f"{n}={n}.tolist()" for n in names)
    return [FixPlan(Fix(rule=rule_id(brk.root_category), fix_id=spec.id, kind="switch",
                        title=f"pass {', '.join(names)} as a Python list: the library takes "
                              f"that form ({forms[0].accepts}) and skips its .tolist() at "
                              f"{len(sites)} line(s); each new list of values compiles again",
                        category=brk.root_category, setting=f"model(..., {passed})",
                        file=brk.file, line=brk.line, before=before), {},
                    switch=Switch(as_list=names))]


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


def _plan_source(plans: list[FixPlan], seen: set, fix_id: str, category: str, file: str,
                 line: int, call: str | None, target_file: Path | None, before: FixMetrics,
                 quiet: bool = False, only_matched: bool = False) -> None:
    """Plan one source fix at ``file:line``; a refusal is kept with its reason unless quiet
    (``only_matched``: unless the rewrite's pattern is not on the line)."""
    if (fix_id, file, line) in seen:
        return
    seen.add((fix_id, file, line))
    rule = rule_for_fix(fix_id, category)
    fix = Fix(rule=rule, fix_id=fix_id, kind="source", title=fix_id, category=category,
              file=file, line=line, before=before, call=call)
    drop = quiet or rule_for(category).setting_is_the_fix
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
    from .source_fixes import propose_rewrite
    rewrite = propose_rewrite(source, line, fix_id, category=category, call=call)
    fix.title = rewrite.title
    if rewrite.new_source is None:
        # an .item() whose value is used, not only logged: the setting is the fix
        if not drop and (rewrite.matched or not only_matched):
            fix.reason = f"refused: {rewrite.refused}"
            plans.append(FixPlan(fix, {}))
        return
    fix.diff = unified_diff(source, rewrite.new_source, display_path(file))
    fix.setting = "\n".join(f"torch._dynamo.config.{k} = {v!r}"  # what the rewrite needs
                            for k, v in (rewrite.config or {}).items()) or fix.setting
    fix.changes = rewrite.changes  # judge keeps it only where the fixed model draws
    plans.append(FixPlan(fix, dict(rewrite.config or {}), new_source=rewrite.new_source,
                         switch=Switch(around=rewrite.around) if rewrite.around else None))


def _plan_constants(plans: list[FixPlan], brk: Any, target_file: Path | None,
                    before: FixMetrics) -> None:
    """A constant kept in a tensor: replace it on the built model (works for library code:
    the printed loop is what the user runs), and where it is created in the user's own file,
    create it as a Python value (a source rewrite)."""
    spec = {}
    for const in brk.constants:
        spec.setdefault(const.cls, []).append(const.attr)
    patch = constant_patch(brk)
    plans.append(FixPlan(Fix(rule=TENSOR_CONSTANT.id, fix_id="python_constants", kind="constants",
                             title=FIXES["python_constants"].title,
                             category=TENSOR_CONSTANT.category, setting=patch, file=brk.file,
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
        fix = Fix(rule=TENSOR_CONSTANT.id, fix_id="constant_source", kind="source",
                  title=rewrite.title, category=TENSOR_CONSTANT.category, file=file,
                  line=min(lines), before=before,
                  call=",".join(map(str, sorted(set(lines)))),
                  source_sha256=hashlib.sha256(original).hexdigest())
        if rewrite.new_source is None:
            fix.reason = f"refused: {rewrite.refused}"
            plans.append(FixPlan(fix, {}))
            continue
        fix.diff = unified_diff(source, rewrite.new_source, display_path(file))
        plans.append(FixPlan(fix, {}, new_source=rewrite.new_source, constants=spec))
