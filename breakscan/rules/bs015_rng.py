"""BS015 rng: Random-number state Dynamo cannot trace.

The rule's whole behaviour: its entry and its lint checks.
"""
from __future__ import annotations

import ast

from .checks import CALL_CHECKS, METHOD_CHECKS, NP_RANDOM_DRAWS, Scope, call_arg, register, text_of
from .model import Match, Rule

RULE = Rule(
    "BS015", "rng", "random-state",
    'Random-number state Dynamo cannot trace',
    why='Explicit `torch.Generator` objects, `torch.manual_seed`, `Tensor.random_`, '
        '`random.Random(...)` and NumPy/Python RNG calls that return numbers keep RNG state '
        'outside the graph.',
    suggestion="Draw random numbers with torch's global RNG ops in forward (`torch.rand`, "
               '`torch.randn_like`, `torch.randint`) and seed outside forward.',
    before='s = np.random.rand()\nreturn y * s',
    after='s = torch.rand(())\nreturn y * s',
    code_matches=(Match("GB0033", r"\b(np|numpy)\.random\.|\brandom\.\w+\("),
                  Match("GB0055", r"\bgenerator\s*=")),
    matches=(Match("GB0007", r"module: (_?random|numpy\.random)\b|qualname: [\w.]*"
                             r"(manual_seed|\bseed|Generator|Random\.\w+)\b"),
             Match("GB0363", r"Generator")),
    # torch 2.14: `jitter = random.random()` traced, the break where it meets a tensor
    chain_matches=(Match("GB0213", r"^random_value: "),),
    advice_by_id=(("GB0033", 'A NumPy or `random` draw that returns a Python number breaks the graph: draw '
                          "it with torch's RNG in forward (`torch.rand(())` for `np.random.rand()`, "
                          '`torch.randn(n)` for `np.random.randn(n)`), a 0-d tensor that stays in the '
                          'graph.'),
                  ("GB0007", 'Seeding or drawing through a function Dynamo skips (`torch.manual_seed`, '
                          '`random.random`): seed once outside forward, before the compiled call, and '
                          "draw with torch's RNG ops (`torch.rand`, `torch.randn_like`) in forward."),
                  ("GB0363", "A `torch.Generator` made in forward is an opaque object: use torch's global "
                          'RNG (`torch.rand(...)` without `generator=`), seeded outside forward, or '
                          'create the generator once outside and pass it in.'),
                  ("GB0055", '`generator=` hands Dynamo an object it cannot put in a graph: draw from '
                          "torch's global RNG (drop `generator=`), seeded outside forward."),
                  ("GB0213", 'A Python random number (`random.random()`, `np.random.rand()`) '
                          'used with a tensor: torch 2.14 and later trace the draw, then cannot combine it with '
                          "the tensor and skips the function; draw it with torch's RNG "
                          '(`torch.rand(())`), a 0-d tensor that stays in the graph.'),
                  ("GB0110", '`Tensor.uniform_(from=...)`: pass the bounds positionally (`t.uniform_(-0.1, '
                          '0.1)`); Dynamo cannot trace the `from` keyword.')),
    ids=('GB0107 GB0110 GB0297 GB0298 GB7650'),
    makes_object=True)


_RANDOM_TRACED = frozenset({"randint", "randrange", "uniform"})  # Dynamo replays these: no break


# Python's random module (NumPy's draws and torch's generators are checked below).
@register(CALL_CHECKS, RULE)
def random_call(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func)
    if qual and qual.startswith("random.") and qual.split(".")[-1] not in _RANDOM_TRACED:
        return f"`{text_of(node.func)}()` is Python's random module, which Dynamo does not " \
               f"trace: graph break ({RULE.gb('GB0007')}); use `torch.rand`"
    return None


_SEEDS = frozenset({"torch.manual_seed", "torch.random.manual_seed"})


@register(CALL_CHECKS, RULE, first=True)
def numpy_random_number(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func) or ""
    name = qual.rpartition(".")[2]
    if qual.rpartition(".")[0] != "numpy.random" or name not in NP_RANDOM_DRAWS:
        return None
    size = call_arg(node, NP_RANDOM_DRAWS[name], "size")
    if (node.args and name in ("rand", "randn")) or \
            (size is not None and not (isinstance(size, ast.Constant) and size.value is None)):
        return None  # an array: traced through torch._numpy (a different random stream)
    return f"`{text_of(node.func)}()` draws one Python number: Dynamo needs its value, graph " \
           f"break ({RULE.gb('GB0033')}); draw with `torch.rand(())`"


@register(CALL_CHECKS, RULE)
def seed_or_generator(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func)
    if qual in _SEEDS:
        return f"`{text_of(node.func)}()` reseeds the global RNG, which Dynamo does not trace: " \
               f"graph break ({RULE.gb('GB0007')}); seed outside forward or keep fixed " \
               "noise as a buffer"
    if qual == "torch.Generator":
        return "a `torch.Generator` made in forward is an object Dynamo cannot create in the " \
               f"graph: graph break ({RULE.gb('GB0363')}); make it once in `__init__`, or " \
               "keep the noise as a buffer"
    return None


@register(METHOD_CHECKS, RULE)
def generator_argument(w: Scope, node: ast.Call) -> str | None:
    value = next((k.value for k in node.keywords if k.arg == "generator"), None)
    held = w.names.made.get(value.id) if isinstance(value, ast.Name) and \
        value.id not in w.locals else \
        w.attrs.get(value.attr) if isinstance(value, ast.Attribute) and \
        w.is_self(value.value) else None
    if held == "generator":
        return f"`generator={text_of(value)}` hands a `torch.Generator` to a traced call: " \
               f"graph break ({RULE.gb('GB0055')}); draw the numbers outside forward"
    return None
