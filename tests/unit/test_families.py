"""Issue 34: every id of the installed torch's graph-break registry belongs to one family, each
family is one catalogue entry, the registry and hint classes are read as data, and advice and
ranking use them (no process, no Dynamo run; the live scans are in tests/scan/)."""

from __future__ import annotations

import json

import pytest

from breakscan.analysis import advice as advice_mod, ranking
from breakscan.rules import categories, registry
from breakscan.frames import Frame
from breakscan.model.records import RootBreak
from breakscan.rules.catalogue import CATALOGUE, RULES_BY_CATEGORY, fixes_for, settings_of

from conftest import TORCH_213_IDS, TORCH_214_IDS, TORCH_215_IDS


def test_every_registry_id_has_exactly_one_family():
    installed = registry.entries()
    assert len(installed) >= 500  # torch 2.13 has 517
    owners: dict[str, list[str]] = {}
    for rule in CATALOGUE:
        for gb in rule.ids.split():
            owners.setdefault(gb, []).append(rule.category)
    for gb in installed:
        assert categories.categorize(gb, "", "", "", "") != "other", gb
    doubled = {gb: cats for gb, cats in owners.items() if len(cats) > 1}
    assert doubled == {}
    # The table covers 2.13.0's, 2.14.1's and 2.15.0's registries (each adds ids, 2.15.0 with
    # random four-digit ids, and drops some): whichever is installed, nothing else is in it.
    assert set(installed) <= set(categories.FAMILY_OF)
    extra = set(categories.FAMILY_OF) - set(installed)
    known = TORCH_213_IDS | TORCH_214_IDS | TORCH_215_IDS
    assert extra <= known, sorted(extra - known)
    assert categories.categorize("GB9999999", "made up") == "other"
    assert categories.is_new("GB9999999", "other") and not categories.is_new("GB0007", "other")


def test_a_renumbered_id_keeps_its_family_by_its_title():
    """Ids move between releases (GB0007 "marked as skipped" for time.perf_counter became
    GB9193 "Call to a time function" on 2.15; new ids are random): an id no family lists is
    matched by its title, every title the families' ids had on 2.13-2.15 shipped with
    breakscan, so each installed id given under another number keeps its family."""
    titles = categories.family_titles()
    assert len(titles) >= 600
    for gb_id, history in registry.entries().items():
        family = categories.FAMILY_OF[gb_id]
        for entry in history:
            title = " ".join(str(entry.get("Gb_type", "")).split())
            assert titles[title] == family, (gb_id, title)
            assert categories.categorize("GB99999", title) == family, (gb_id, title)
    # Unknown title and id: matched on the families' text, else other (and new)
    assert categories.categorize("GB99999", "Something about print") == "print"
    assert categories.categorize("GB99999", "A wholly new kind of break") == "other"


def test_every_break_family_is_one_entry_with_ids_advice_and_example():
    families = [r for r in CATALOGUE if r.kind == "break" and r.category not in
                ("other", "tensor_constant")]
    assert len(families) >= 34  # BS013–BS036 and the first ten; a new family adds one
    for rule in families:
        assert rule.gb_ids, rule.id
        assert rule.title and rule.why and rule.suggestion and rule.before and rule.after
        for gb, text in rule.advice_by_id:
            assert gb in rule.gb_ids and text != rule.suggestion, (rule.id, gb)


@pytest.mark.parametrize("gb_id, text, code, chain, family", [
    ("GB0033", "", "vals = h.tolist()", "", "tolist_numpy"),
    ("GB0033", "", "s = np.random.rand()", "", "rng"),
    ("GB0033", "", "v = np.random.rand(3).tolist()", "", "rng"),  # a draw first, not a list
    ("GB0033", "", "y = scale(x)", "/t/torch/_library/custom_ops.py:fake: ...", "custom_op"),
    ("GB0033", "", "n = int(h.sum())", "", "item"),
    ("GB0007", "module: torch.random, qualname: manual_seed, skip reason: x", "torch.manual_seed(0)",
     "", "rng"),
    ("GB0007", "module: _thread, qualname: allocate_lock", "with threading.Lock():", "",
     "context_manager"),
    ("GB0007", "module: time, qualname: perf_counter", "t0 = time.perf_counter()", "",
     "unsupported_call"),
    ("GB0007", "qualname: torch._VariableFunctionsClass.sparse_coo_tensor", "s = f()", "",
     "sparse_nested_tensor"),
    ("GB0067", "HOP: Unsafe side effect | Higher Order Operator: torch.utils.checkpoint.checkpoint",
     "STATS.append(1)", "", "side_effect"),
    ("GB0067", "HOP: Unsafe side effect", "GRADS.append(g)",
     "m.py:forward: y.register_hook(self._record)", "hook"),
    ("GB0055", "", "y = torch.rand(4, generator=g)", "", "rng"),
    ("GB5976", "", "", "", "object_identity"),
    ("GB0207", "", "", "", "data_dependent_value"),
    ("GB8977", "", "", "", "python_object"),
    ("GB9186", "", "", "", "autograd"),
    ("GB0142", "", "", "", "context_manager"),
    ("GB0811", "", "", "", "iteration"),
    ("GB0087", "", "", "", "custom_op"),
    ("GB0033", "", "return scale(y) + 1", "m.py:forward: x\ncustom_op: scale", "custom_op"),
    ("GB4315", "", "", "/t/torch/_library/custom_ops.py:: return fn(*args)", "custom_op"),
    ("GB4315", "", "return y @ w", "m.py:: return y @ w", "user_error"),
])
def test_an_id_is_narrowed_by_its_line_chain_or_text(gb_id, text, code, chain, family):
    assert categories.categorize(gb_id, "", text, "", code, chain) == family


def test_registry_titles_and_hint_classes_come_from_the_installed_torch():
    entry = registry.entry("GB7000")
    assert entry is not None and entry.title == "graph break in loop"
    assert entry.hint_classes == ("CAUSED_BY_EARLIER_GRAPH_BREAK",)
    classes = registry.hint_classes()
    assert {"USER_ERROR", "FUNDAMENTAL", "SUPPORTABLE", "DYNAMO_BUG",
            "CAUSED_BY_EARLIER_GRAPH_BREAK"} <= set(classes.values())
    fundamental = next(t for t, n in classes.items() if n == "FUNDAMENTAL")
    # Runtime hints are one line per hint with Dynamo's own line breaks: matched on words.
    assert registry.classes_of(["Use a list.", fundamental.replace(" - ", " -\n  ")]) == \
        ["FUNDAMENTAL"]
    assert registry.entry("GB9999999") is None


def test_the_registry_files_are_data_never_run(tmp_path, monkeypatch):
    """A hints file with code in it is read with ast, never executed; broken files give {}."""
    folder = tmp_path / "_dynamo"
    folder.mkdir()
    marker = tmp_path / "ran"
    (folder / "graph_break_hints.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\n"
        "MY_CLASS = [\n    'Some words '\n    'joined.',\n]\n")
    (folder / "graph_break_registry.json").write_text(json.dumps(
        {"GB0001": [{"Gb_type": "t", "Hints": ["Some words joined."]}], "GB0002": "junk"}))
    monkeypatch.setattr(registry, "_dynamo_dir", lambda: str(folder))
    registry.hint_classes.cache_clear()
    registry.entries.cache_clear()
    try:
        assert registry.hint_classes() == {"Some words joined.": "MY_CLASS"}
        assert registry.entry("GB0001").hint_classes == ("MY_CLASS",)
        assert registry.entry("GB0002") is None
        assert not marker.exists()
        (folder / "graph_break_registry.json").write_text("{not json")
        (folder / "graph_break_hints.py").write_text("def (:\n")
        registry.hint_classes.cache_clear()
        registry.entries.cache_clear()
        assert registry.entries() == {} and registry.hint_classes() == {}
    finally:
        registry.hint_classes.cache_clear()
        registry.entries.cache_clear()


def _brk(category: str, gb_id: str | None, hints=(), file="/w/m.py", line=10, owner="user",
         function="forward", code="y = f(x)") -> RootBreak:
    return RootBreak(owner=owner, category=category, gb_id=gb_id, gb_type="t", file=file,
                     line=line, code=code, function=function,
                     call_chain=[Frame(file, line, function, code)], explanation="",
                     hints=list(hints), suggestion="", doc_url=None, records=1,
                     explain_reasons=0, resume_functions=[],
                     hint_classes=registry.classes_of(list(hints)))


def test_advice_never_passes_on_developer_hints_or_class_boilerplate():
    fundamental = next(t for t, n in registry.hint_classes().items() if n == "FUNDAMENTAL")
    brk = _brk("other", "GB9999999", hints=[
        "Add tp_iternext_impl to this VariableTracker subclass.", fundamental,
        "Please report an issue to PyTorch."])
    text = advice_mod.advice(brk)
    assert "VariableTracker" not in text and "fundamental" not in text.lower()
    assert "report an issue" not in text


def test_no_advice_disables_the_whole_forward():
    """'Decorate forward() with torch.compiler.disable' leaves the model with no graph: the
    advice names the statement's smallest region instead."""
    for category in ("other", "dynamo_limitation", "python_object", "iteration"):
        text = advice_mod.advice(_brk(category, None, line=42))
        assert "m.py:42 into a small helper decorated with `torch.compiler.disable`" in text
        assert "decorate forward()" not in text.lower()


def test_a_setting_in_force_is_not_advised_again():
    brk = _brk("autograd", "GB9186")
    assert "Setting to try: `torch._dynamo.config.trace_autograd_ops = True`" in \
        advice_mod.advice(brk)
    text = advice_mod.advice(brk, {"trace_autograd_ops": True})
    assert "Setting to try" not in text and "already True in this run" in text
    assert ("trace_autograd_ops", True) in settings_of("autograd")
    assert [f.id for f in fixes_for("autograd", "setting")] == ["trace_autograd_ops"]
    assert "`torch.autograd.grad` inside forward" in advice_mod.advice(brk)  # its own id


def test_a_break_dynamo_says_an_earlier_break_causes_is_ranked_after_it():
    earlier_text = next(t for t, n in registry.hint_classes().items()
                        if n == "CAUSED_BY_EARLIER_GRAPH_BREAK")
    first = _brk("print", "GB0059", line=5)
    other_file = _brk("item", "GB0124", file="/w/other.py", line=1)
    caused = _brk("dynamo_limitation", "GB0092", hints=[earlier_text], line=9)
    ranking.mark_caused([first, other_file, caused])
    assert caused.caused_by == "/w/m.py:5" and first.caused_by is None
    assert ranking.after_causes([caused, other_file, first]) == [other_file, first, caused]
    assert "fix the break at m.py:5 first" in advice_mod.advice(caused)
    lone = _brk("dynamo_limitation", "GB0092", hints=[earlier_text], line=3)
    ranking.mark_caused([first, lone])  # nothing above it in its file: no cause named
    assert lone.caused_by is None


def test_rules_by_category_has_every_family():
    assert {"object_identity", "rng", "autograd", "hook", "side_effect"} <= set(RULES_BY_CATEGORY)


def test_a_title_alone_finds_its_registry_id():
    """Compilation metrics give a break's title, not its id."""
    assert registry.id_of("RuntimeError when making fake tensor call") == "GB4315"
    assert registry.id_of("graph break in loop") == "GB7000"
    assert registry.id_of("no such title") is None


def test_a_call_of_a_custom_op_defined_in_the_file_is_seen(tmp_path):
    from breakscan.analysis.roots import custom_ops_called

    model = tmp_path / "ops.py"
    model.write_text("import torch\n\n@torch.library.custom_op('ns::scale', mutates_args=())\n"
                     "def scale(x: torch.Tensor) -> torch.Tensor:\n    return x * 2\n\n"
                     "def rescale(x):\n    return x\n")
    assert custom_ops_called(str(model), "return scale(y) + rescale(y)") == ["scale"]
    assert custom_ops_called(str(model), "return rescale(y)") == []


def test_a_break_on_an_object_an_earlier_break_created_follows_it():
    """torch.Generator() made in forward (GB0363), then used as generator= (GB0055): one cause."""
    made = _brk("rng", "GB0363", line=35, code="g = torch.Generator().manual_seed(0)")
    used = _brk("rng", "GB0055", line=36, code="return y + torch.rand(4, generator=g)")
    other = _brk("item", "GB0124", line=37, code="n = y.sum().item()")
    ranking.mark_caused([made, used, other])
    assert (made.caused_by, used.caused_by, other.caused_by) == (None, "/w/m.py:35", None)
    assert "uses what the break at m.py:35 creates" in advice_mod.advice(used)
    unrelated = _brk("rng", "GB0055", line=40, code="return torch.rand(4, generator=h)")
    ranking.mark_caused([made, unrelated])
    assert unrelated.caused_by is None


def test_a_baseline_from_before_the_families_still_knows_its_breaks():
    """A zoo's baseline written when a break was `other` must not call it new when this
    catalogue names it `rng`; a really new break on another line still fails."""
    from types import SimpleNamespace

    from breakscan.runs.gate import _baseline_checks
    from breakscan.options import GateOptions

    seed = _brk("rng", "GB0007", line=5, code="torch.manual_seed(0)")
    fresh = _brk("item", "GB0124", line=9, code="n = y.sum().item()")
    base = {"breaks": [{"category": "other", "file": "/w/m.py", "code": "torch.manual_seed(0)"},
                       {"category": "print", "file": "/w/m.py", "code": "print(y)"}]}
    result = SimpleNamespace(breaks=[seed, fresh],
                             summary=SimpleNamespace(graph_count=2, recompile_count=0))
    notes: list[str] = []
    (check,) = _baseline_checks(result, GateOptions(baseline=base), notes)
    assert (check.actual, check.passed) == (1, False) and "n = y.sum().item()" in check.detail
    assert "torch.manual_seed" not in check.detail
    assert notes == ["same break, now rng (the baseline says other) at /w/m.py "
                     "`torch.manual_seed(0)`", "fixed: print at /w/m.py `print(y)`"]
