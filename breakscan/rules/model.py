"""A rule of the catalogue, as data: its id, name, why, example and fixes; a fix it can try.

A break rule is a *family* of Dynamo's registry ids (``ids``: every id of the installed
``graph_break_registry.json`` belongs to one family, checked by tests/unit/test_families.py),
optionally narrowed where one id means different things (``matches``, ``code_matches``,
``chain_matches``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

Chain = list[tuple[str, str]]  # (file, function) of each frame of a break, outermost first


@dataclass(frozen=True)
class PathSetting:
    """One value on a break's path (``fixes/switches.py`` finds it): an attribute of the
    model's modules or config, a public setter method, an environment variable, or an input
    passed precomputed (``computed_by``: the file, first line and name of the function whose
    result the caller passes)."""

    attribute: str
    value: Any  # a Python constant, or "flip" (the negation of the current value)
    kind: str = "attribute"  # attribute | method | env | input
    on_config: bool = False
    classes: tuple[str, ...] = ()
    computed_by: tuple[str, int, str] | None = None


@dataclass(frozen=True)
class Switch:
    """What a switch changes on the loaded target, the same type for the library's switches
    (``rules/fixes.py``) and those found on a break's path; the verifying child applies it
    (``fixes.fix_job.switch_target``). Each field set is one change."""

    call: tuple[str, Any] | None = None  # model.<setter>(value), e.g. set_attn_implementation
    kwargs: tuple[tuple[str, Any], ...] = ()  # passed to every call, e.g. use_cache=False
    compile_only: str | None = None  # compile this method only, the caller's loop eager
    path: PathSetting | None = None
    warm_up: bool = False  # call the model once, eagerly, before compiling it
    as_list: tuple[str, ...] = ()  # inputs passed as Python lists (``tensor.tolist()``)
    around: str = ""  # a global torch setting entered around every call (fixes/hoist.py)

    def to_json(self) -> dict[str, Any]:
        path = self.path
        return {"call": list(self.call) if self.call else None, "kwargs": dict(self.kwargs),
                "compile_only": self.compile_only, "warm_up": self.warm_up,
                "as_list": list(self.as_list), "around": self.around,
                "path": None if path is None else {
                    "attribute": path.attribute, "value": path.value, "kind": path.kind,
                    "on_config": path.on_config, "classes": list(path.classes),
                    "computed_by": list(path.computed_by) if path.computed_by else None}}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Switch":
        path = data.get("path")
        call = data.get("call")
        return cls(call=(str(call[0]), call[1]) if call else None,
                   kwargs=tuple((str(k), v) for k, v in (data.get("kwargs") or {}).items()),
                   compile_only=data.get("compile_only"), warm_up=bool(data.get("warm_up")),
                   as_list=tuple(map(str, data.get("as_list") or ())),
                   around=str(data.get("around") or ""),
                   path=None if path is None else PathSetting(
                       str(path["attribute"]), path["value"], str(path["kind"]),
                       bool(path["on_config"]), tuple(map(str, path["classes"])),
                       (str(path["computed_by"][0]), int(path["computed_by"][1]),
                        str(path["computed_by"][2])) if path.get("computed_by") else None))


class AdviceContext(Protocol):
    """What a rule's ``advise`` may ask of the analysis (rules/ imports nothing above it)."""

    def is_torch_file(self, path: str) -> bool: ...

    def inner_site(self, brk: Any) -> Any:
        """Where a break shown at the user's line was taken, when deeper outside torch (a
        frame with ``file``, ``line``, ``function`` and ``code``), or None."""

    def disabled_function(self, brk: Any) -> Any:
        """The ``torch.compiler.disable``d function a break calls, as a frame with ``file``,
        ``line`` and ``function`` (``file`` "" when its definition was not found), or None."""


@dataclass(frozen=True)
class Match:
    """A Dynamo registry id, narrowed by a regex over "gb_type | explanation | context" (GB0059
    "Failed to trace builtin operator" is a print only when the builtin is ``print``)."""

    gb_id: str
    pattern: str | None = None


@dataclass(frozen=True)
class Rule:
    id: str
    category: str  # the break category (or recompile cause) this rule explains
    name: str  # a short slug, e.g. "tensor-item"
    title: str
    why: str  # what it costs: sync, lost fusion, extra Python, recompiles
    suggestion: str  # the advice shown with every break of this category
    before: str
    after: str
    fixes: tuple[str, ...] = ()  # fix ids fixes/ can apply and verify
    kind: str = "break"  # break | recompile | kernel (what Inductor made of a graph)
    matches: tuple[Match, ...] = ()  # the registry ids of this category, most common first
    type_pattern: str | None = None  # the break type's text, for breaks with no registry id
    # A registry id Dynamo uses for many things (GB0033 "data dependent operator": `.item()`,
    # `.tolist()`, `np.random`…) narrowed by what the break's *source line* shows.
    code_matches: tuple[Match, ...] = ()
    # ... or by its call chain ("path:function: code" per frame, one per line): GB0033 raised inside torch/_library/custom_ops.py is a custom op's fake failing.
    chain_matches: tuple[Match, ...] = ()
    # The family's registry ids, space-separated: an id here is this family whatever its text.
    ids: str = ""
    # Dynamo settings worth trying for every break of the family (each verified by --fix).
    settings: tuple[tuple[str, Any], ...] = ()
    # Advice for one registry id of the family (or one it narrows to this family), naming that
    # cause and its change; the family's ``suggestion`` covers the others.
    advice_by_id: tuple[tuple[str, str], ...] = ()
    # What the analysis and --fix do with the family, declared here (read where named):
    data_dependent: bool = False  # it needs a Python value of a tensor's data by design: with
    # no fix, fixes/unfixed.py says so
    needs_host_value: bool = False  # the break needs a value on the host: a loop over a tensor's
    # rows whose variables it uses becomes its root cause (analysis/loops.py)
    constant_can_cause: bool = False  # a module's tensor constant can be the value it tests
    # (analysis/origins.py merges such breaks per class)
    makes_object: bool = False  # its break creates the object a later line breaks on: fixing it
    # fixes both (analysis/ranking.py)
    smallest_region: bool = False  # no rewrite is known: the advice ends with the smallest
    # region to run eagerly (analysis/advice.py)
    setting_is_the_fix: bool = False  # its own setting is its fix: a source fix tried on it
    # that does not apply says nothing (an `.item()` whose value is used; fixes/plan.py)
    no_automatic_fix: bool = False  # --fix has no fix of its own for it: when no setting
    # applies, the report says so and points to the advice (fixes/plan.py)
    # Advice read from the break itself (its code, owner, constants, the function it calls),
    # asked before the family's text with an :class:`AdviceContext`; "" when it has nothing
    # more specific (analysis/advice.py). ``advice_first``: it also comes before the advice
    # for the break's line (a constant's fix is where it is created, whatever line uses it).
    advise: Callable[[Any, "AdviceContext"], str] | None = None
    advice_first: bool = False

    def advice_for(self, gb_id: str | None) -> str:
        """The advice for a break of this family with registry id ``gb_id``."""
        return dict(self.advice_by_id).get(gb_id or "", self.suggestion)

    def gb(self, gb_id: str) -> str:
        """``gb_id``, checked to be one of the family's registry ids (for messages that name
        one: a typo fails at import-time tests, not in a user's report)."""
        if gb_id not in self.gb_ids:
            raise ValueError(f"{gb_id} is not a registry id of the {self.category} rule")
        return gb_id

    @property
    def gb_ids(self) -> list[str]:
        """Every registry id of the family: its own, then those it claims by narrowing."""
        narrowed = self.matches + self.code_matches + self.chain_matches
        return list(dict.fromkeys(self.ids.split() + [m.gb_id for m in narrowed]))


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
    # A library switch: what it changes on the loaded target (``fixes.fix_job.switch_target``)
    # and when it is offered: a break's call chain passes where it acts.
    switch: Switch | None = None
    applies: Callable[[Chain], bool] | None = None
    # A source fix: what it does, one line (``{call}``: the call it wraps; ``{lines}``: the
    # lines it changes), and the module of ``breakscan.fixes`` whose ``propose_<id>`` makes
    # it (named, not imported: the fixes sit above the rules; fixes/source_fixes.py).
    title: str = ""
    rewrite: str = ""
    # A setting, switch or other non-source fix: when ``--fix`` tries it, one line (its
    # refusal is the opposite: no such break, or already in force). docs/rules.md lists it;
    # tests/fixtures/offers/ holds a case offered and one not, per fix.
    offered: str = ""
