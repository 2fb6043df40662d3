"""The rule registry: one rule per break category and per recompile cause, all a rule knows.

Like ruff's rules, each has a stable id, a name, why it hurts, the Dynamo registry ids it covers
(``matches``, read by ``categories.categorize``; ``type_pattern`` for a torch whose breaks carry
no id), a generic before/after and the fixes breakscan can offer and verify (``fixes/``), the
library switches among them. ``breakscan rules`` lists them, ``breakscan rules BS001`` explains
one. A break no rule knows (``other``) still carries Dynamo's own hints and its registry link.

The advice is checked against torch 2.13 (see ../shared/DYNAMO_NOTES.md and the sample models).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable

from .families import FAMILY_RULES
from .kernels import KERNEL_RULES
from .model import Match, Rule

BREAK_RULES: tuple[Rule, ...] = (
    Rule("BS001", "item", "tensor-item", "Tensor converted to a Python number",
         why="`.item()` (also `float(t)`, `int(t)`) needs the value on the host: a device sync, "
             "and Dynamo ends the graph there and resumes in a new one, so nothing fuses across "
             "it and Python runs between the two graphs.",
         suggestion="Keep the value as a 0-d tensor (e.g. `s = y.sum()` and use `s` in tensor "
                    "math), or return it and call .item() outside the compiled region.",
         before="h = self.fc(x)\nself.last_mean = h.mean().item()\nreturn h",
         after="h = self.fc(x)\nreturn h, h.mean()  # log mean.item() after the call",
         fixes=("capture_scalar_outputs",),
         matches=(Match("GB0124"),  # Tensor.item(), float(t), int(t)
                  Match("GB0033")),  # data-dependent operator (aten._local_scalar_dense…)
         type_pattern=r"\.item\(\)|capture_scalar_outputs"),
    Rule("BS002", "data_dependent_branch", "tensor-branch",
         "Python control flow on a tensor value",
         why="`if` (or `while`, `and`/`or`, `assert`) on a tensor value needs the value on the "
             "host to pick a side: a sync and a graph break; each side is compiled lazily as its "
             "own resume function, only when taken.",
         suggestion="Make it branchless: `torch.where(cond, a, b)` when both branches are "
                    "tensors, `torch.cond(pred, true_fn, false_fn, operands)` for real control "
                    "flow, or always apply the transform (clamp, nan_to_num) instead of testing "
                    "for it.",
         before="if h.sum() > 0:\n    h = h * 2\nelse:\n    h = h - 1",
         after="h = torch.where(h.sum() > 0, h * 2, h - 1)  # both sides computed, no branch",
         fixes=("torch_where",),
         matches=(Match("GB0170"),  # if/while on a tensor
                  Match("GB0035"),  # non-constant __bool__
                  Match("GB0034")),  # data-dependent assert
         type_pattern=r"[Dd]ata-dependent branching|generic_jump"),
    Rule("BS003", "print", "print-in-forward", "print or logging call inside the compiled region",
         why="Dynamo cannot put I/O in a graph: the graph ends before the call and resumes after "
             "it, and printing a tensor also syncs to fetch its values.",
         suggestion="Guard it with `if not torch.compiler.is_compiling(): ...`, move it out of "
                    "forward, or add the function to "
                    "`torch._dynamo.config.ignore_logging_functions`.",
         before='h = self.fc(x)\nprint("norm", h.norm())\nreturn h',
         after='h = self.fc(x)\nif not torch.compiler.is_compiling():\n'
               '    print("norm", h.norm())  # eager runs only\nreturn h',
         fixes=("print_guard",),
         matches=(Match("GB0059", r"builtin operator `print`"),
                  Match("GB0291"),  # logging.Logger methods
                  # logging.getLogger(__name__).info(...) written inline
                  Match("GB6215", r"LoggingLoggerVariable"),
                  Match("GB0007", r"`[\w.]*(print|logging|warn)\b")),
         type_pattern=r"\bprint\b|logging",
         ids="GB0296 GB0569"),
    Rule("BS004", "tolist_numpy", "tensor-to-python", "Tensor turned into a Python list or NumPy "
         "array",
         why="`.tolist()` of a float tensor breaks the graph (GB0109) and syncs; "
             "`capture_scalar_outputs` does not help here on torch 2.13. (`t.numpy()` followed by "
             "NumPy ops is traced through torch._numpy and does not break.)",
         suggestion="Keep the data as tensors (index, `torch.unbind`, tensor ops) instead of "
                    ".tolist()/.numpy(); do the conversion outside forward.",
         before="scores = h.softmax(-1).tolist()\nreturn torch.tensor([max(r) for r in scores])",
         after="return h.softmax(-1).amax(-1)",
         matches=(Match("GB0109"),  # Tensor.tolist() non-integer
                  Match("GB0105"),  # Tensor.numpy() without trace_numpy
                  *(Match(i) for i in ("GB0106", "GB0185", "GB0231", "GB0290", "GB0293",
                                       "GB0294"))),
         type_pattern=r"tolist|numpy",
         # a NumPy random draw turned into a list is an RNG break first (rng, BS015)
         code_matches=(Match("GB0033", r"^(?!.*\b(np|numpy)\.random\.).*\.tolist\(\)"),),
         ids="GB0157 GB0158 GB0159 GB0232 GB0250 GB0300"),
    Rule("BS005", "dynamic_shape_op", "data-dependent-shape",
         "Operator whose output shape depends on the data",
         why="`nonzero`, boolean masks (`x[x > 0]`), `unique`… have a size known only after "
             "running: by default Dynamo breaks before them.",
         suggestion="Use a static-shape formulation (`torch.where(mask, x, 0)` instead of "
                    "`x[mask]`, masked sums instead of nonzero).",
         before="picked = h[h > 0]\nreturn picked.sum()",
         after="return torch.where(h > 0, h, 0).sum()  # same value, static shape",
         fixes=("capture_dynamic_output_shape_ops",),
         matches=(Match("GB0036"),  # nonzero, boolean mask, unique…
                  Match("GB0037"),
                  Match("GB0246")),  # one_hot with data-dependent shape
         type_pattern=r"[Dd]ynamic shape operator|nonzero"),
    Rule("BS006", "unsupported_call", "untraceable-call", "Call Dynamo cannot trace",
         why="`time`, `threading`, C extensions and other skipped functions run in Python: the "
             "graph ends before the call. A call before any tensor op is invisible to "
             "`torch._dynamo.explain` (no prefix graph), breakscan still reports it.",
         suggestion="If no tensor computation uses its result, guard it with `if not "
                    "torch.compiler.is_compiling():` or move it out of forward; otherwise use a "
                    "torch equivalent, wrap it (`torch.library.custom_op`, "
                    "`torch._dynamo.nonstrict_trace`, `torch.compiler.allow_in_graph`), or move "
                    "just that call into a small helper decorated with "
                    "`torch.compiler.disable` so the rest of forward still compiles.",
         before="t0 = time.perf_counter()\ny = self.fc(x)",
         after="if not torch.compiler.is_compiling():\n    t0 = time.perf_counter()  # eager only"
               "\ny = self.fc(x)",
         matches=(Match("GB0007"),  # function marked as skipped (random, time, C ext)
                  *(Match(i) for i in ("GB0008", "GB0009", "GB0059", "GB0147", "GB0148",
                                       "GB0156"))),
         type_pattern=r"marked as skipped|Unsupported function call",
         ids="GB0005 GB0022 GB0060 GB0069 GB0146 GB0150 GB0151 GB0177 GB0187 GB0208 GB0213 "
             "GB0230 GB0270 GB0359 GB6025 GB6270 GB7489 GB9198"),
    Rule("BS007", "explicit_break", "explicit-break", "Explicit graph break",
         why="`torch._dynamo.graph_break()` (or a `torch.compiler.disable`d function) splits the "
             "graph on purpose; left in by accident it costs a resume function and lost fusion.",
         suggestion="Remove the `torch._dynamo.graph_break()` call unless the split is intended.",
         before="h = self.fc1(x)\ntorch._dynamo.graph_break()\nreturn self.fc2(h)",
         after="h = self.fc1(x)\nreturn self.fc2(h)",
         matches=(Match("GB0025"),),  # torch._dynamo.graph_break()
         type_pattern=r"graph_break\(\)",
         ids="GB0030 GB0269 GB0275 GB0284 GB4636"),
    Rule("BS010", "disabled_call", "disabled-function", "Call into a `torch.compiler.disable`d "
         "function",
         why="A function decorated with `torch.compiler.disable` (or `torch._dynamo.disable`) "
             "runs eagerly by design: the graph ends before the call and resumes after it.",
         suggestion="It runs eagerly by design: narrow the decorator to the part that cannot be "
                    "traced, or remove it.",
         before="@torch.compiler.disable\ndef scale(h):\n    return h * 2\n\n"
                "h = scale(self.fc(x))",
         after="def scale(h):  # traceable: no decorator needed\n    return h * 2\n\n"
               "h = scale(self.fc(x))",
         matches=(Match("GB0098"),  # calling a torch.compiler.disable'd function
                  Match("GB0099")),  # inlining one
         ids="GB0376 GB0377",  # torch 2.14: calling torch.compiler.disable() itself in forward
         type_pattern=r"torch\.compiler\.disable"),
    Rule("BS011", "tensor_deepcopy", "tensor-deepcopy", "`copy.deepcopy` of a tensor",
         why="Dynamo does not trace `copy.deepcopy()` of a tensor: the graph ends before it.",
         suggestion="Use `t.clone()` (add `.detach()` when the copy must not carry autograd "
                    "history, as `deepcopy` of a leaf does).",
         before="h = self.fc(x)\nsnapshot = copy.deepcopy(h)",
         after="h = self.fc(x)\nsnapshot = h.clone()",
         fixes=("clone",),
         matches=(Match("GB4198"),),
         type_pattern=r"copy\.deepcopy",
         ids="GB0179"),
    Rule("BS008", "frame_skipped", "break-in-loop-or-try", "Whole frame fell back to eager",
         why="A break Dynamo cannot resume from — inside a `for`/`while` loop (GB7000), inside a "
             "`try`/`with` block, or with nothing resumable before it — makes it skip the whole "
             "function, which then runs entirely in eager (explain shows 0 graphs for it). The "
             "report says which of these Dynamo gave as the cause.",
         suggestion="Move the breaking call out of the loop or try/with block, or fix the break "
                    "itself (see its cause), so the rest of the function compiles again.",
         before="for layer in self.layers:\n    x = layer(x)\n    print(x.norm())",
         after="for layer in self.layers:\n    x = layer(x)\nreturn x  # report norms outside",
         matches=(Match("GB4297"),  # torch._dynamo.skip_frame()
                  Match("GB7000")),
         ids="GB0052 GB0065 GB0096 GB9741"),
    Rule("BS009", "other", "other-break", "Other graph break",
         why="Dynamo could not trace this construct; see its explanation, hints and registry page.",
         suggestion="See Dynamo's explanation and hints below and the registry page for this id.",
         before="", after=""),
    Rule("BS012", "tensor_constant", "constant-in-tensor", "A constant kept in a tensor",
         why="A kernel size, stride or padding stored as a 0-d tensor buffer (`nn.Buffer("
             "torch.tensor(stride))`) is data to Dynamo: every `if`, pad amount or slice that "
             "uses it needs its value on the host, a break at each use, in every layer.",
         suggestion="Store the constant as a Python int/float attribute (`self.stride = "
                    "stride`) instead of a tensor; for library code, replace the attributes on "
                    "the built model (breakscan prints the loop).",
         before="self.stride = nn.Buffer(torch.tensor(stride), persistent=False)\n"
                "...\nif length % self.stride:\n    x = F.pad(x, (0, self.stride))",
         after="self.stride = stride  # a Python int: Dynamo specialises on it\n"
               "...\nif length % self.stride:\n    x = F.pad(x, (0, self.stride))",
         fixes=("python_constants", "constant_source")),
    Rule("BS101", "shape_branch", "shape-branch", "Branch on a tensor's shape", kind="recompile",
         why="Not a break: Dynamo guards on the shape and compiles one graph per value it sees "
             "(automatic dynamic shapes help only after the first recompile); past "
             "`recompile_limit` (8) the frame silently runs eagerly.",
         suggestion="Compile with `dynamic=True` (or `torch._dynamo.mark_dynamic(x, dim)` when "
                    "the branch does not depend on that dimension), or make the branch a tensor "
                    "op on the shape.",
         before="if x.shape[0] > 8:\n    x = x * 0.5",
         after="model = torch.compile(model, dynamic=True)  # one graph for every batch size",
         fixes=("dynamic",)),
    Rule("BS102", "global_mutation", "global-state", "Mutating global state in forward",
         kind="recompile",
         why="Not a break: `STATS['calls'] += 1` or `SEEN.append(...)` changes a guarded value, so "
             "every call recompiles; after 8 calls the frame falls back to eager for good.",
         suggestion="Keep counters and caches out of forward (in the caller), or in module "
                    "buffers updated with tensor ops.",
         before="CALLS['n'] += 1\nreturn self.fc(x)",
         after="return self.fc(x)  # count calls in the training loop"),
    Rule("BS103", "shape_loop", "loop-over-shape", "Python loop over a tensor's size",
         kind="recompile",
         why="Not a break: Dynamo unrolls Python loops. A loop over a constant `range(5)` just "
             "makes a larger graph (more ops, longer compile); a loop over `range(x.shape[0])` "
             "is unrolled for that size and recompiles for every new size.",
         suggestion="Vectorise the loop body over the dimension (one op for the whole batch), or "
                    "keep the trip count constant.",
         before="rows = [self.fc(x[i]) for i in range(x.shape[0])]\nreturn torch.stack(rows)",
         after="return self.fc(x)  # one op for the whole batch"),
)



Chain = list[tuple[str, str]]  # (file, function) of each frame of a break, outermost first


@dataclass(frozen=True)
class FixSpec:
    """A fix breakscan can apply and verify (``fixes/plan.py`` plans it, ``fixes/verify.py``
    verifies it)."""

    id: str
    kind: str  # setting (a Dynamo config value) | source (a rewrite) | dynamic | switch |
    # constants (module attributes replaced on the built model)
    rule: str | None  # the rule it belongs to; None: the rule of the break it is tried on
    setting: str = ""  # how users write a setting (or a library switch)
    config: tuple[tuple[str, Any], ...] = ()  # the Dynamo config values a setting sets
    also_for: tuple[str, ...] = ()  # other break categories it is tried on
    # A library switch: what it changes on the loaded target (``fixes.fix_job.apply_switch``)
    # and when it is offered: a break's call chain passes where it acts.
    switch: dict[str, Any] | None = field(default=None, hash=False)
    applies: Callable[[Chain], bool] | None = None


# Library switches: the same library, configured or called differently, no file edited. Each is
# offered when a break's call chain passes where the switch acts, and verified like any fix.
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


FIXES: dict[str, FixSpec] = {f.id: f for f in (
    FixSpec("capture_scalar_outputs", "setting", "BS001",
            "torch._dynamo.config.capture_scalar_outputs = True",
            (("capture_scalar_outputs", True),)),
    FixSpec("torch_where", "source", "BS002"),
    # An .item() whose value is only printed or logged: guard the print.
    FixSpec("print_guard", "source", "BS003", also_for=("item",)),
    FixSpec("capture_dynamic_output_shape_ops", "setting", "BS005",
            "torch._dynamo.config.capture_dynamic_output_shape_ops = True",
            (("capture_dynamic_output_shape_ops", True),)),
    FixSpec("dynamic", "dynamic", "BS101", "torch.compile(model, dynamic=True)"),
    # A break inside a library, acted on at the user's own call into it.
    FixSpec("clone", "source", "BS011"),
    # Constants kept in tensors, as Python values: on the built model, or where they are made.
    FixSpec("python_constants", "constants", "BS012"),
    FixSpec("constant_source", "source", "BS012"),
    # A kernel rule's rewrite: a dtype round trip in one expression dropped.
    FixSpec("drop_round_trip", "source", "BS202"),
    FixSpec("disable_call", "source", None),
    FixSpec("tolist_loop", "source", None),
    # Issue 34's source fixes (fixes/effects.py, region.py, torch_ops.py, loops.py): each
    # belongs to the rule of the break it is tried on (rule None).
    FixSpec("remove_graph_break", "source", None, also_for=("explicit_break",)),
    FixSpec("while_loop", "source", None, also_for=("data_dependent_branch",)),
    FixSpec("sorted_stack", "source", None, also_for=("data_dependent_value",)),
    FixSpec("torch_rng", "source", None, also_for=("rng",)),
    FixSpec("guard_side_effect", "source", None,
            also_for=("unsupported_call", "rng", "print", "side_effect", "object_identity")),
    # An untraceable helper of the user's file made one opaque op (fixes/escape.py: custom_op,
    # leaf_function, nonstrict_trace or opaque_function, as the installed torch offers).
    FixSpec("escape_hatch", "source", None,
            also_for=("unsupported_call", "tolist_numpy", "rng", "item", "data_dependent_branch",
                      "print", "side_effect", "frame_skipped")),
    # The fallback: the loop/with/try around a break run eagerly (plan.py: only when no other
    # source fix rewrote the line; gain.py: never verified when graphs are lost).
    FixSpec("disable_region", "source", None,
            also_for=("frame_skipped", "unsupported_call", "print", "rng", "side_effect",
                      "object_identity", "context_manager", "exception", "data_dependent_branch",
                      "data_dependent_value", "tolist_numpy", "dynamic_shape_op", "iteration",
                      "python_object", "opaque_object", "disabled_call", "other",
                      "dynamo_limitation")),
    FixSpec("attn_implementation=eager", "switch", None,
            'model.set_attn_implementation("eager")',
            switch={"call": ["set_attn_implementation", "eager"]}, applies=_through_attention),
    FixSpec("attn_implementation=sdpa", "switch", None, 'model.set_attn_implementation("sdpa")',
            switch={"call": ["set_attn_implementation", "sdpa"]}, applies=_through_attention),
    FixSpec("experts_implementation=eager", "switch", None,
            'model.set_experts_implementation("eager")',
            switch={"call": ["set_experts_implementation", "eager"]}, applies=_through_experts),
    FixSpec("experts_implementation=batched_mm", "switch", None,
            'model.set_experts_implementation("batched_mm")',
            switch={"call": ["set_experts_implementation", "batched_mm"]},
            applies=_through_experts),
    FixSpec("use_cache=False", "switch", None, "model(..., use_cache=False)",
            switch={"kwargs": {"use_cache": False}}, applies=_through_cache),
    FixSpec("compile_forward", "switch", None,
            "model.forward = torch.compile(model.forward); model.generate(...) (not all of "
            "generate)", switch={"compile_only": "forward"}, applies=_through_generation),
)}

# What counts as a logging call (BS003), for the lint (ast) and the rewrite (libcst) alike.
LOG_METHODS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical",
                         "fatal", "log"})

# In id order: the break families (BS0xx), the recompile causes (BS1xx), the kernel rules (BS2xx).
CATALOGUE: tuple[Rule, ...] = tuple(sorted(BREAK_RULES + FAMILY_RULES + KERNEL_RULES,
                                           key=lambda r: r.id))
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in CATALOGUE}
RULES_BY_CATEGORY: dict[str, Rule] = {r.category: r for r in CATALOGUE}
RULE_IDS: dict[str, str] = {r.category: r.id for r in CATALOGUE}


def rule_id(category: str) -> str:
    return RULE_IDS.get(category, RULE_IDS["other"])


def rule_for(category: str) -> Rule:
    return RULES_BY_CATEGORY.get(category, RULES_BY_CATEGORY["other"])


def rule_for_fix(fix_id: str, category: str) -> str:
    """The rule a fix belongs to: the one whose registry entry offers it (the print guard is
    BS003 even when the break it removes is an `.item()` inside a print), else the break's."""
    spec = FIXES.get(fix_id)
    return spec.rule if spec is not None and spec.rule else rule_id(category)


def settings_of(category: str) -> list[tuple[str, Any]]:
    """The Dynamo settings worth trying for a break of ``category``: its rule's setting fixes,
    then the family's own settings (``Rule.settings``)."""
    found = [pair for spec in fixes_for(category, "setting") for pair in spec.config]
    return found + [pair for pair in rule_for(category).settings if pair not in found]


def family_setting_fixes(category: str) -> list[FixSpec]:
    """The family's own settings as setting fixes (one entry in the catalogue, no FIXES row)."""
    rule = rule_for(category)
    return [FixSpec(name, "setting", rule.id, f"torch._dynamo.config.{name} = {value!r}",
                    ((name, value),)) for name, value in rule.settings if name not in FIXES]


def fixes_for(category: str, kind: str) -> list[FixSpec]:
    """The fixes of this kind tried on a break of ``category``: its rule's, then those that
    also apply to it (the print guard for an ``.item()`` that is only printed), then the
    family's own settings."""
    own = [FIXES[i] for i in rule_for(category).fixes if FIXES[i].kind == kind]
    if kind == "setting":
        own += family_setting_fixes(category)
    return own + [f for f in FIXES.values() if category in f.also_for and f.kind == kind]


def library_switches() -> list[FixSpec]:
    """The library switches (transformers), in the order they are offered."""
    return [f for f in FIXES.values() if f.switch is not None]


def gb(category: str, gb_id: str) -> str:
    """``gb_id``, checked to be one of the rule's registry ids (for messages that name one)."""
    if gb_id not in RULES_BY_CATEGORY[category].gb_ids:
        raise ValueError(f"{gb_id} is not a registry id of the {category} rule")
    return gb_id


def finding_status(status: str, category: str) -> str:
    """What a static finding's run status means, in words (terminal and HTML share this).

    A recompile-cause rule (shape branch, global mutation, loop over a size) is never "a break
    waiting for other data": it does not break, it recompiles.
    """
    recompile = rule_for(category).kind == "recompile"
    return {
        "break": "broke here in this run",
        "ran": ("ran in this run (not a break: it recompiles when the guarded value changes)"
                if recompile else "ran in this run without breaking (the scan confirms)"),
        "not exercised": ("not exercised by these inputs" if recompile else
                          "not exercised by these inputs: a break waiting for other data"),
        "not traced": "not traced (frame skipped): Dynamo ran this function eagerly, so the "
                      "scan says nothing about this line",
    }.get(status, "")


def find_rule(text: str) -> Rule | None:
    """A rule by id (``BS001``, case-insensitive), name (``tensor-item``) or category (``item``)."""
    key = text.strip().lower()
    for rule in CATALOGUE:
        if key in (rule.id.lower(), rule.name, rule.category):
            return rule
    return None
