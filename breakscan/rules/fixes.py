"""The fixes that belong to no one family: source fixes tried on the breaks of several families
(each is the rule of the break it is tried on, ``also_for`` says which), and the library
switches, offered when a break's call chain passes where the switch acts.
"""

from __future__ import annotations

import os

from .model import Chain, FixSpec, Switch


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


def _planned_elsewhere(chain: Chain) -> bool:
    """Never by a call chain alone: ``input_form`` needs the model's inputs
    (``fixes/input_forms.py``)."""
    return False


def _first_call_only(chain: Chain) -> bool:
    """Never by a call chain: ``warm_up`` is offered for a break only the first call takes
    (``fixes/plan.py``), whatever its chain."""
    return False


_ATTENTION = ("a break inside transformers whose call chain passes through an attention "
              "function or module")
_EXPERTS = "a break inside transformers whose call chain passes through mixture-of-experts code"

FIXES: tuple[FixSpec, ...] = (
    FixSpec("disable_call", "source", None,
            title="run `{call}(...)` eagerly: wrap it in torch.compiler.disable",
            rewrite="rewrite"),
    FixSpec("tolist_loop", "source", None,
            title="iterate over Python numbers: `.tolist()` on the tensor the loop walks",
            rewrite="rewrite"),
    # Issue 34's source fixes (fixes/effects.py, region.py, torch_ops.py, loops.py): each
    # belongs to the rule of the break it is tried on (rule None).
    FixSpec("remove_graph_break", "source", None, also_for=("explicit_break",),
            title="remove the torch._dynamo.graph_break() call",
            rewrite="torch_ops"),
    FixSpec("while_loop", "source", None, also_for=("data_dependent_branch",),
            title="the tensor `while` as torch._higher_order_ops.while_loop",
            rewrite="loops"),
    FixSpec("sorted_stack", "source", None, also_for=("data_dependent_value",),
            title="sort tensors with torch instead of Python's sorted",
            rewrite="torch_ops"),
    FixSpec("torch_rng", "source", None, also_for=("rng",),
            title="draw the random number from torch's generator",
            rewrite="torch_ops"),
    FixSpec("guard_side_effect", "source", None,
            also_for=("unsupported_call", "rng", "print", "side_effect", "object_identity",
                      "data_dependent_branch", "item", "tolist_numpy", "dynamo_limitation"),
            title="run a side effect only eagerly: guard it with torch.compiler.is_compiling()",
            rewrite="effects"),
    # Host code done by torch ops (fixes/host_equivalents.py): a math call, a storage size or
    # apply_ on a tensor; a Python container indexed by a tensor's value.
    FixSpec("torch_equivalent", "source", None,
            also_for=("item", "unsupported_call", "dynamo_limitation", "data_dependent_branch",
                      "data_dependent_value"),
            title="compute it with the torch equivalent of the host call",
            rewrite="host_equivalents"),
    FixSpec("tensor_lookup", "source", None,
            also_for=("item", "data_dependent_value", "data_dependent_branch"),
            title="look the container up by a tensor index instead of a Python number",
            rewrite="host_equivalents"),
    # An untraceable helper of the user's file made one opaque op (fixes/escape.py: custom_op,
    # leaf_function, nonstrict_trace or opaque_function, as the installed torch offers).
    FixSpec("escape_hatch", "source", None,
            also_for=("unsupported_call", "tolist_numpy", "rng", "item", "data_dependent_branch",
                      "print", "side_effect", "frame_skipped"),
            title="run the helper as one opaque op (escape hatch)",
            rewrite="escape"),
    # The fallback: the loop/with/try around a break run eagerly (plan.py: only when no other
    # source fix rewrote the line; gain.py: never verified when graphs are lost).
    FixSpec("disable_region", "source", None,
            also_for=("frame_skipped", "unsupported_call", "print", "rng", "side_effect",
                      "object_identity", "context_manager", "exception", "data_dependent_branch",
                      "data_dependent_value", "tolist_numpy", "dynamic_shape_op", "iteration",
                      "python_object", "opaque_object", "disabled_call", "other",
                      "dynamo_limitation"),
            title="run the loop/with/try around the break eagerly (@torch.compiler.disable helper)",
            rewrite="region"),
    FixSpec("attn_implementation=eager", "switch", None,
            'model.set_attn_implementation("eager")',
            switch=Switch(call=("set_attn_implementation", "eager")),
            applies=_through_attention, offered=_ATTENTION),
    FixSpec("attn_implementation=sdpa", "switch", None, 'model.set_attn_implementation("sdpa")',
            switch=Switch(call=("set_attn_implementation", "sdpa")), applies=_through_attention,
            offered=_ATTENTION),
    FixSpec("experts_implementation=eager", "switch", None,
            'model.set_experts_implementation("eager")',
            switch=Switch(call=("set_experts_implementation", "eager")),
            applies=_through_experts, offered=_EXPERTS),
    FixSpec("experts_implementation=batched_mm", "switch", None,
            'model.set_experts_implementation("batched_mm")',
            switch=Switch(call=("set_experts_implementation", "batched_mm")),
            applies=_through_experts, offered=_EXPERTS),
    FixSpec("use_cache=False", "switch", None, "model(..., use_cache=False)",
            switch=Switch(kwargs=(("use_cache", False),)), applies=_through_cache,
            offered="a break inside transformers whose call chain passes through "
                    "cache_utils.py (the KV cache)"),
    # A first-access construct (a table built on the first call, a functools.cached_property
    # taking a lock, a warning issued once): call the model once before compiling it.
    FixSpec("warm_up", "switch", None,
            "model(*example_inputs)  # once, eagerly, before the first compiled call",
            switch=Switch(warm_up=True), applies=_first_call_only,
            offered="a break that only the first call takes (a table built on first access, a "
                    "one-time warning); once per model"),
    # An input the library also takes as a Python list (LLaVA-NeXT's image_sizes): passed so,
    # every .tolist() on it disappears (fixes/input_forms.py).
    FixSpec("input_form", "switch", None, "model(..., image_sizes=image_sizes.tolist())",
            switch=Switch(as_list=("image_sizes",)), applies=_planned_elsewhere,
            offered="a .tolist() break in a library function that also takes a list there "
                    "(it tests isinstance(x, (list, tuple)) or isinstance(x, torch.Tensor)), "
                    "on a call chain through a parameter named like an integer tensor input of "
                    "the model"),
    FixSpec("compile_forward", "switch", None,
            "model.forward = torch.compile(model.forward); model.generate(...) (not all of "
            "generate)", switch=Switch(compile_only="forward"), applies=_through_generation,
            offered="a break inside transformers' generation code (generate() called in the "
                    "compiled forward: the inner model's forward is compiled instead)"),
    # Compiling less (issue 47): the largest nn.Module class a call runs twice or more
    # compiled alone, judged on the cold compile time (fixes/regional.py); planned from the
    # scan's repeated blocks, never by a call chain.
    FixSpec("regional_compile", "switch", None,
            "block.compile()  # each instance of the repeated block; the model itself eager",
            switch=Switch(compile_only="@Block.forward"), applies=_planned_elsewhere,
            offered="an nn.Module class one call runs twice or more (transformer layers, UNet "
                    "blocks; the scan's repeated blocks): judged on the cold compile time"),
)
