"""The catalogue's break families beyond the first dozen rules (BS013–BS036): one entry each.

Every id of Dynamo's registry (``torch/_dynamo/graph_break_registry.json``, 517 ids in torch
2.13) belongs to one family, here or in ``rules.BREAK_RULES``: the family is the break's
category. The id table was derived from the registry's titles, explanations and hint classes
(docs/design/issue-34-registry-research.md) and is checked against the installed registry by
tests/unit/test_families.py. A family's settings are tried and verified by ``--fix``.
"""

from __future__ import annotations

from .model import Match, Rule

FAMILY_RULES: tuple[Rule, ...] = (
    Rule("BS013", "data_dependent_value", "data-dependent-value",
         'A tensor used where Python needs a plain value',
         why='A tensor used as a sort key, list index, `torch.Size` index or `index()` must be a '
             'Python constant at trace time.',
         suggestion='Do the operation with tensor ops (stack then sort/gather), or index with '
                    'Python ints.',
         before='s = sorted([x[0].sum(), x[1].sum()])',
         after='s = torch.stack([x[0].sum(), x[1].sum()]).sort().values',
         advice_by_id=(("GB0207", '`sorted()` over tensors needs their values in Python: stack them and sort with '
                               'tensor ops (`torch.stack(xs).sort().values`; `argsort` to reorder other '
                               'tensors by them).'),),
         ids=('GB0038 GB0070 GB0207 GB0218 GB7596 '
              'GB5687')),
    Rule("BS014", "dynamic_shape", "symbolic-shape",
         'A condition on symbolic sizes Dynamo cannot decide',
         why='With dynamic shapes a size is a symbol; an assert or comparison on it (or an '
             'unbacked size input) cannot be decided at trace time.',
         suggestion='State the fact with `torch._check(...)`, keep that dimension static '
                    '(`mark_static`/no `mark_dynamic`), or drop the Python-level test.',
         before='assert x.shape[0] == y.shape[0]',
         after='torch._check(x.shape[0] == y.shape[0])',
         ids=('GB0002 GB0018 GB0214 GB0224 GB0360 GB5565')),
    Rule("BS015", "rng", "random-state",
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
                               'used with a tensor: torch 2.14 traces the draw, then cannot combine it with '
                               "the tensor and skips the function; draw it with torch's RNG "
                               '(`torch.rand(())`), a 0-d tensor that stays in the graph.'),
                       ("GB0110", '`Tensor.uniform_(from=...)`: pass the bounds positionally (`t.uniform_(-0.1, '
                               '0.1)`); Dynamo cannot trace the `from` keyword.')),
         ids=('GB0107 GB0110 GB0297 GB0298 GB7650')),
    Rule("BS016", "custom_op", "custom-op-fake",
         'Operator that cannot run on fake tensors',
         why='A custom op with no or a failing fake (meta) implementation, a non-PT2-compliant '
             'op, or a Triton kernel call Dynamo cannot wrap.',
         suggestion='Register a fake implementation that only computes output shapes/dtypes '
                    '(`@op.register_fake`, no data reads; '
                    '`torch.library.get_ctx().new_dynamic_size()` for data-dependent sizes).',
         before='@scale.register_fake\ndef _(x):\n    return x.new_empty(int(x.sum()))',
         after='@scale.register_fake\ndef _(x):\n    return torch.empty_like(x)',
         chain_matches=(Match("GB0033", r"torch/_library/custom_ops\.py|^custom_op: "),
                        Match("GB4315", r"torch/_library/custom_ops\.py|^custom_op: ")),
         matches=(Match("GB4315", r"fake impl|fake kernel|register_fake"),),
         ids=('GB0043 GB0049 GB0087 GB0090 GB0216 GB0361 GB2977 GB3326 GB4026 GB6735 '
              'GB3069')),
    Rule("BS017", "context_manager", "context-manager",
         'Unsupported context manager',
         why='Dynamo does not know how to enter this `with` object (a `threading.Lock`, a custom '
             'C-level manager, a profiler object escaping), and a break inside it skips the '
             'function.',
         suggestion='Hold the lock (or other manager) in the caller around the model call, or use '
                    'a supported manager (`torch.no_grad`, `torch.autocast`).',
         before='with LOCK:\n    y = y + 1',
         after='y = y + 1  # caller: with LOCK: out = model(x)',
         code_matches=(Match("GB0007", r"^\s*(async\s+)?with\b"),),
         advice_by_id=(("GB0142", 'Dynamo cannot enter this `with` object (a `threading.Lock`, a custom manager): '
                               'take the lock (or enter the manager) in the caller around the model call; '
                               'inside forward keep only managers Dynamo knows (`torch.no_grad`, '
                               '`torch.autocast`).'),),
         ids=('GB0066 GB0142 GB0209 GB0212 GB0221 GB0262 GB0263 GB0274 GB0279 GB0370 '
              'GB2533 '
              'GB2473 GB4996')),
    Rule("BS018", "iteration", "iterator",
         'An iterator or generator Dynamo cannot step',
         why='A `dict_items`/`zip`/`map` object passed in, a generator method, an itertools form '
             'or an unpacking of an unknown object cannot be iterated at trace time (often the '
             'whole function is skipped).',
         suggestion='Pass a list, tuple or dict (materialise iterators in the caller) and iterate '
                    'it inside forward.',
         before='model(x, d.items())',
         after='model(x, d)  # forward: for k, v in d.items()',
         # torch 2.14 reports a dict view or zip passed in as GB9493 (a C-implemented __iter__)
         matches=(Match("GB9493", r"'(dict_items|dict_keys|dict_values|zip|map|enumerate|"
                                  r"filter|reversed)' implements '__(iter|next)__'"),),
         advice_by_id=(("GB0811", 'An iterator object passed in (`d.items()`, `zip(...)`, `map(...)`) cannot be '
                               'stepped at trace time (when the break is in a loop, Dynamo skips the whole '
                               'function): pass the dict, list or '
                               'tuple itself and iterate it inside forward.'),
                      ("GB9493", 'An iterator object passed in (`d.items()`, `zip(...)`, `map(...)`) cannot be '
                               'stepped at trace time: pass the dict, list or tuple itself and iterate it '
                               'inside forward.')),
         ids=('GB0003 GB0024 GB0061 GB0062 GB0063 GB0077 GB0094 GB0114 GB0115 GB0118 '
              'GB0120 GB0132 GB0133 GB0134 GB0152 GB0154 GB0155 GB0160 GB0192 GB0253 '
              'GB0268 GB0811 GB1752 GB2549 GB4347 GB7230 GB8335 '
              'GB7151 GB9192')),
    Rule("BS019", "side_effect", "side-effect",
         'Side effect Dynamo cannot replay',
         why='Mutating Python state from inside a higher-order op (activation checkpointing, '
             'torch.cond bodies) or in forms Dynamo cannot model (class attributes, computed '
             'setattr names, __class__).',
         suggestion='Change Python state outside the compiled function: return the value and '
                    'update the state in the caller (class attributes, attributes set by a '
                    'computed name, `__class__`, a mapping being iterated); inside forward keep '
                    'to plain attributes set by constant names.',
         before='def block(h):\n    STATS.append(1)\n    return lin(h)',
         after='def block(h):\n    return lin(h)  # STATS.append(1) in the caller',
         matches=(Match("GB0067", r"checkpoint"),),
         advice_by_id=(("GB0067", 'Python state mutated inside a checkpointed function (`torch.utils.checkpoint`) '
                               'cannot be replayed in backward: move the mutation to the caller (return the '
                               'value), or set `torch._dynamo.config.'
                               'skip_fwd_side_effects_in_bwd_under_checkpoint = True` if not replaying it '
                               'is fine (`--fix` tries it: Dynamo\'s hint names it).'),
                       ("GB4413", "Python state changed inside a higher-order op's body (a "
                               '`torch.utils.checkpoint`ed block, a `torch.cond` branch): move the change (a '
                               'counter, a list append) out of the block into the caller, which may change '
                               'Python state freely.')),
         ids=('GB0067 GB0097 GB0169 GB0189 GB0198 GB0254 GB0271 GB0358 GB0467 GB1177 '
              'GB2404 GB3241 GB3697 GB4271 GB4413 GB7502 '
              'GB6815 GB8949')),
    Rule("BS020", "hook", "hook-in-forward",
         'Hook registered or run in the compiled region',
         why='A tensor/module hook registered in forward whose body has a side effect (appending, '
             'logging), or a backward hook that needs compiled autograd.',
         suggestion='Register hooks outside forward (in `__init__` or the training loop) and keep '
                    'hook bodies pure; backward hooks on modules need compiled autograd.',
         before='y.register_hook(lambda g: GRADS.append(g.norm()))',
         after='# outside the compiled model:\nout.register_hook(lambda g: GRADS.append(g.norm()))',
         # a hook registered in forward: Dynamo breaks in the hook or in torch's hook handle
         chain_matches=tuple(Match(gb, r"\.register_\w*hook\(") for gb in ("GB0067", "GB0467")),
         advice_by_id=(("GB0067", 'The hook registered here has a side effect (it appends, logs or mutates Python '
                               'state), which Dynamo cannot replay when the hook runs in backward: register '
                               "the hook outside forward (on the model's output, in the training loop), or "
                               'make its body a pure tensor function (`lambda g: g * 0.5`).'),),
         ids=('GB0013 GB0029 GB0083 GB0100 GB0101 GB0165 GB0166 GB7444')),
    Rule("BS021", "autograd", "autograd-in-forward",
         'Autograd work inside the compiled forward',
         why='`torch.autograd.grad`, `.backward()`, `requires_grad_()` on intermediates, '
             'autograd.Function features or inference-mode queries inside the compiled region.',
         suggestion='Keep autograd bookkeeping out of the compiled forward: compute gradients, '
                    'call `.backward()`, `retain_grad()` or `requires_grad_()` in the caller, '
                    'around the compiled call; for `torch.autograd.grad` and `.backward()` '
                    'inside forward, `trace_autograd_ops` traces them.',
         before='g, = torch.autograd.grad(y, w, create_graph=True)',
         after='torch._dynamo.config.trace_autograd_ops = True  # same code, one graph',
         settings=(('trace_autograd_ops', True),),
         advice_by_id=(("GB9186", '`torch.autograd.grad` inside forward is not traced by default: set '
                               '`torch._dynamo.config.trace_autograd_ops = True` (below) to keep it in the '
                               'graph, or compute the gradient in the caller after the compiled forward.'),
                       ("GB8985", '`requires_grad_()` on a tensor computed in forward leaks it out as an output: '
                               'call it on the input in the caller (before the compiled call), or on a leaf '
                               'made in `__init__`; detach what you return.'),
                       ("GB0045", 'Use `torch.no_grad()` around the call instead of testing '
                               '`tensor.is_inference()` in forward.'),
                       ("GB0046", 'Use `torch.no_grad()` around the call instead of testing '
                               '`torch.is_inference_mode_enabled()` in forward.'),
                       ("GB0123", '`.backward()` inside forward: call it in the training loop on what the '
                               'compiled forward returns, or set `torch._dynamo.config.trace_autograd_ops = '
                               'True` to trace it.'),
                       ("GB0108", '`retain_grad()` inside the compiled forward: return the tensor and call '
                               '`retain_grad()` on it in the caller, or drop it (hooks on the returned tensor '
                               'see the same gradient).'),
                       ("GB0125", '`requires_grad_()` inside forward: set it on the input before the compiled '
                               'call, or create the tensor as a parameter in `__init__`.')),
         ids=('GB0019 GB0045 GB0046 GB0085 GB0104 GB0108 GB0123 GB0125 GB0138 GB0139 '
              'GB0140 GB0144 GB0145 GB0173 GB0205 GB0206 GB0225 GB0346 GB0347 GB0348 '
              'GB0352 GB0371 GB0372 GB0373 GB0442 GB1042 GB1140 GB1381 GB1724 GB2019 '
              'GB2464 GB4372 GB4927 GB5748 GB6297 GB6663 GB7054 GB7299 GB7324 GB8985 '
              'GB9186 '
              'GB0375')),
    Rule("BS022", "tensor_mutation", "tensor-mutation",
         "Change of a tensor's storage or metadata",
         why='`.data =`, `resize_`, `set_`, `share_memory_`, in-place view ops on inputs or '
             "mismatched `out=` tensors change a tensor behind Dynamo's back.",
         suggestion='Use out-of-place ops and return the new tensor; assign parameters outside '
                    'forward.',
         before='self.w.data = self.w.data * 0.9',
         after='return x @ (self.w * 0.9)',
         ids=('GB0056 GB0058 GB0072 GB0126 GB0127 GB0128 GB0220 GB0240 GB0241 GB0242 '
              'GB0247 GB4197 '
              'GB0998 GB1576 GB5282 GB5491 GB7020 GB7905 GB8587')),
    Rule("BS023", "nn_module", "module-usage",
         'nn.Module used in a way Dynamo cannot trace',
         why='Custom `__getattr__`/`__getattribute__`, indexing a ModuleList with a non-constant, '
             '`nn.Parameter(...)` built in forward, RNN/GRU/LSTM, or a module missing '
             '`super().__init__()`.',
         suggestion='Create parameters in `__init__`, index submodules with Python ints, keep '
                    'module attribute access plain; an RNN, GRU or LSTM needs `torch._dynamo.config.allow_rnn = True` '
                    '(Dynamo\'s hint names it; `--fix` tries it).',
         before='w = nn.Parameter(torch.ones(4))  # in forward',
         after='self.w = nn.Parameter(torch.ones(4))  # in __init__',
         ids=('GB0014 GB0031 GB0032 GB0119 GB0121 GB0153 GB0161 GB0162 GB0188 GB0202 '
              'GB0211 GB0226 GB0228 GB0229 GB0235 GB0237 GB0243 GB0244 GB0264 GB0281')),
    Rule("BS024", "tensor_subclass", "tensor-subclass",
         'Tensor subclass or __torch_function__ override Dynamo cannot trace',
         why='A tensor subclass attribute/method or a `__torch_function__` override that Dynamo '
             'cannot model.',
         suggestion='Unwrap to plain tensors before the compiled call, or make the subclass '
                    'traceable (a wrapper subclass with '
                    '`__tensor_flatten__`/`__tensor_unflatten__`).',
         before='out = model(MyTensor(x))',
         after='out = model(x)  # wrap the result outside',
         ids=('GB0000 GB0001 GB0026 GB0103 GB0163 GB0164 GB0227 GB0234 '
              'GB2736')),
    Rule("BS025", "sparse_nested_tensor", "sparse-or-nested",
         'Sparse or strided nested tensor',
         why='torch.compile does not support sparse tensors or strided NestedTensors inside the '
             'graph (creating them included).',
         suggestion='Create sparse tensors outside the compiled region and pass dense ones in (or '
                    '`.to_dense()` before the call); use jagged NestedTensors '
                    '(`layout=torch.jagged`).',
         before='s = y.to_sparse()\nreturn torch.sparse.mm(s, w)',
         after='return y @ w  # dense inside the compiled region',
         matches=(Match("GB0007", r"qualname: [\w.]*sparse"),),
         ids=('GB0015 GB0016 GB0044 GB0129 GB0130 GB0233 GB0245 GB0277 GB0374 GB1501')),
    Rule("BS026", "opaque_object", "opaque-object",
         'Opaque object built or used in forward',
         why='A C++/TorchScript object (torch.Generator, ScriptModule, registered opaque class) '
             'is created in the compiled region or used in a way Dynamo cannot see into.',
         suggestion='Create it before `torch.compile` and pass it in (or make it a global); for a '
                    'Generator, use the global RNG (see rng).',
         before='g = torch.Generator().manual_seed(0)\nnoise = torch.rand(4, generator=g)',
         after='noise = torch.rand(4)  # the global RNG; seed it outside forward',
         advice_by_id=(("GB4695", 'A `torch.jit.script`ed (or frozen) module called inside the compiled model: '
                               'Dynamo cannot trace TorchScript; use the plain `nn.Module` (drop '
                               '`torch.jit.script`) and let `torch.compile` compile it.'),),
         ids=('GB0265 GB0266 GB0267 GB0357 GB0362 GB0363 GB1739 GB2078 GB4695 GB7685 '
              'GB8656 GB8843 GB9567 '
              'GB6441')),
    Rule("BS027", "object_identity", "object-identity",
         'Object identity, hash or data pointer used as a value',
         why='`id(x)`, `hash(obj)`, weakrefs, `data_ptr()` comparisons and sets of tensors depend '
             'on runtime objects Dynamo cannot know at trace time.',
         suggestion='Key caches by something stable (a name, a module attribute, a shape tuple); '
                    'compare tensors with `is`; keep identity caches outside forward.',
         before='if y.data_ptr() == w.data_ptr():\n    y = y.clone()',
         after='if y is w:\n    y = y.clone()',
         advice_by_id=(("GB5976", '`data_ptr()` is a run-time address Dynamo cannot know while tracing: compare '
                               'the tensors themselves (`if y is w:`), or decide once outside forward.'),
                       ("GB4501", '`id(x)` is a run-time address: key caches by something stable (a name, a '
                               'module attribute, a shape tuple), or keep the cache outside forward.')),
         ids=('GB0027 GB0141 GB0176 GB0191 GB0222 GB0272 GB0276 GB0283 GB0364 GB0365 '
              'GB0366 GB0367 GB0682 GB0871 GB2861 GB4501 GB4608 GB4749 GB5976 GB9316')),
    Rule("BS028", "python_object", "python-object",
         'Python object feature Dynamo cannot model',
         why='A class defined inside forward, dataclass/pydantic/namedtuple construction, '
             'getattr/setattr with computed names, metaclasses or repr of non-constant '
             'containers.',
         suggestion='Define classes at module level, use constant attribute names, plain '
                    'dicts/tuples; a class defined in forward can also be traced with the '
                    'setting.',
         before='def forward(self, x):\n    class Box: ...',
         after='class Box: ...  # module level',
         settings=(('enable_trace_load_build_class', True),),
         advice_by_id=(("GB8977", 'A class is defined inside forward: define it at module level (or set '
                               '`enable_trace_load_build_class`, below).'),),
         ids=('GB0004 GB0006 GB0054 GB0075 GB0084 GB0113 GB0131 GB0175 GB0180 GB0183 '
              'GB0184 GB0186 GB0190 GB0194 GB0195 GB0197 GB0199 GB0201 GB0203 GB0204 '
              'GB0217 GB0252 GB0255 GB0256 GB0257 GB0258 GB0259 GB0260 GB0261 GB0278 '
              'GB0280 GB0287 GB0289 GB0368 GB0369 GB0459 GB0808 GB1220 GB1275 GB1319 '
              'GB1584 GB2852 GB3383 GB4393 GB4778 GB5380 GB5458 GB5849 GB6012 GB6999 '
              'GB7637 GB7968 GB8315 GB8887 GB8977 GB9137 GB9277 GB9522 GB9528 GB9672 '
              'GB4399 GB4818 GB6066 GB9899')),
    Rule("BS029", "higher_order_op", "higher-order-op",
         'torch.cond / while_loop / scan / map / checkpoint / functorch used with arguments it '
         'does not accept',
         why="A higher-order op's body or operands break its rules (non-tensor operands, "
             'differing branch outputs, an nn.Module or mutation inside the body).',
         suggestion='Pass operands as a tuple of tensors, return the same structure from both '
                    'branches, and keep bodies free of mutation and module calls.',
         before='torch.cond(p, f, g, x)',
         after='torch.cond(p, f, g, (x,))',
         ids=('GB0017 GB0040 GB0041 GB0042 GB0068 GB0073 GB0074 GB0102 GB0149 GB0301 '
              'GB0302 GB0303 GB0304 GB0305 GB0306 GB0307 GB0308 GB0309 GB0310 GB0311 '
              'GB0312 GB0313 GB0314 GB0315 GB0316 GB0317 GB0318 GB0319 GB0320 GB0321 '
              'GB0322 GB0323 GB0324 GB0325 GB0326 GB0327 GB0328 GB0329 GB0330 GB0331 '
              'GB0332 GB0333 GB0334 GB0335 GB0336 GB0337 GB0338 GB0339 GB0340 GB0341 '
              'GB0342 GB0343 GB0344 GB0345 GB0349 GB0350 GB0351 GB0353 GB0355 GB0356 '
              'GB1380 GB6017 '
              'GB1075 GB1824 GB4307 GB4774 GB5884 GB6183 GB7072 GB7694 GB8165 GB8206 GB8593 GB9203 GB9509 GB9760')),
    Rule("BS030", "escape_hatch", "escape-hatch-misuse",
         'nonstrict_trace / leaf_function / assume_constant_result used with inputs it does not '
         'accept',
         why='The escape hatch only takes tensors, basic Python values or registered pytrees, and '
             'needs a fake function (leaf_function).',
         suggestion='Pass tensors/pytrees of tensors, define the function outside the compiled '
                    'region, and give leaf_function its fake_fn.',
         before='@leaf_function\ndef f(x): ...',
         after='@leaf_function(fake_fn)\ndef f(x): ...',
         ids=('GB0078 GB0236 GB0238 GB0239 GB0251 GB2520 GB3840 GB6210')),
    Rule("BS031", "distributed", "distributed",
         "Distributed feature outside Dynamo's support",
         why='`async_op=True` collectives, P2P ops, FSDP with use_orig_params=False and similar '
             'are not traced.',
         suggestion='Use `async_op=False` (the default) inside the compiled region, FSDP '
                    '`use_orig_params=True`, or enable P2P compilation.',
         before='dist.all_reduce(t, async_op=True).wait()',
         after='dist.all_reduce(t)',
         settings=(('enable_p2p_compilation', True),),
         ids=('GB0053 GB0172 GB0181 GB0210 GB0282 GB1750 GB2696 GB3343 GB9300 GB9860')),
    Rule("BS032", "exception", "exception",
         'Exception handling Dynamo cannot model',
         why='Raising/catching exceptions in forward in forms Dynamo cannot trace (non-exception '
             'values, keyword args, traceback access), or an exception raised while tracing.',
         suggestion='Validate inputs before the compiled call and keep exceptions out of '
                    "forward's normal path; use `torch._check` for checks.",
         before='if x.dim() != 2:\n    raise ValueError(msg=...)',
         after='torch._check(x.dim() == 2)',
         ids=('GB0028 GB0050 GB0051 GB0057 GB0088 GB0089 GB0095 GB0135 GB0273 GB9625 '
              'GB1273')),
    Rule("BS033", "user_error", "user-error",
         'Code that fails in eager too (or arguments Dynamo rejects)',
         why='The traced code raises on fake tensors or is called wrongly: shape/device mismatch, '
             'missing key, wrong arguments, undefined variable.',
         suggestion='Run it uncompiled (`torch.compiler.set_stance("force_eager")`) to see the '
                    'error and fix the call.',
         before='return y @ torch.ones(3, 3)  # y is (4, 4)',
         after='return y @ torch.ones(4, 3)',
         ids=('GB0010 GB0011 GB0012 GB0020 GB0021 GB0064 GB0076 GB0081 GB0091 GB0111 '
              'GB0112 GB0136 GB0137 GB0167 GB0171 GB0174 GB0182 GB0196 GB0223 GB0248 '
              'GB0249 GB0285 GB0286 GB0288 GB2922 GB4315 GB5173 GB7312 GB9158 GB9840')),
    Rule("BS034", "dynamo_limitation", "dynamo-limitation",
         'Python construct Dynamo does not support yet',
         why='Dynamo has no support for this construct (a bytecode, comprehension form, '
             'reconstruction across a break, a C slot of a builtin type); not a bug in your code.',
         suggestion='Write the construct more plainly (a loop instead of the comprehension, no '
                    'closures/iterators kept across a break); fix an earlier break first when '
                    'Dynamo says it may be the cause; else put it in a small disabled helper.',
         before='out = {k: f(v) for k, v in items if cond(v)}',
         after='out = {}\nfor k, v in items:\n    if cond(v):\n        out[k] = f(v)',
         ids=('GB0023 GB0047 GB0048 GB0055 GB0071 GB0079 GB0080 GB0082 GB0086 GB0092 '
              'GB0093 GB0116 GB0117 GB0122 GB0143 GB0168 GB0178 GB0193 GB0200 GB0215 '
              'GB0292 GB0295 GB0299 GB0354 GB0755 GB0781 GB1297 GB2483 GB2544 GB2669 '
              'GB3006 GB3775 GB3934 GB4240 GB4411 GB4841 GB4880 GB5195 GB5696 GB5904 '
              'GB6053 GB6215 GB6276 GB6604 GB6622 GB6890 GB7286 GB7425 GB7510 GB7786 '
              'GB7906 GB8435 GB9458 GB9548 GB9561 GB9648 GB9898 '
              'GB2069 GB2412 GB2444 GB4234 GB5017 GB9493')),
    Rule("BS035", "recompile_limit", "recompile-limit",
         'Recompile limit reached',
         why='The function was recompiled more than `recompile_limit` times (a guard keeps '
             'failing), so it now runs eagerly.',
         suggestion='Find the changing guard (`TORCH_LOGS=recompiles`): compile with '
                    '`dynamic=True`/`mark_dynamic`, stop mutating globals in forward; raise the '
                    'limit only when the recompiles are expected.',
         before="CALLS['n'] += 1\nreturn self.fc(x)",
         after='return self.fc(x)  # count in the caller',
         ids=('GB0039')),
    Rule("BS036", "backend_error", "backend-error",
         'The compiler backend failed on this graph',
         why='Inductor (or another backend) raised while compiling the graph, so Dynamo split it '
             'and ran that part eagerly.',
         suggestion='Reproduce with `backend="aot_eager"` to see whether the backend is at fault, '
                    'then isolate the failing op in a small disabled helper and report it.',
         before='torch.compile(model)',
         after='torch.compile(model, backend="aot_eager")  # bisect',
         ids=('GB0219')),
)
