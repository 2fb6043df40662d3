"""BS021 autograd: Autograd work inside the compiled forward.

The rule's whole behaviour: its entry and its lint checks.
"""
from __future__ import annotations

import ast

from .checks import METHOD_CHECKS, Scope, method_on_tensor, register
from .model import Rule

RULE = Rule(
    "BS021", "autograd", "autograd-in-forward",
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
         'GB0375 GB8982 GB9958'))


@register(METHOD_CHECKS, RULE)
def autograd_in_forward(w: Scope, node: ast.Call) -> str | None:
    qual = w.qual(node.func)
    if qual == "torch.autograd.grad":
        return "`torch.autograd.grad()` in forward is not traced: graph break " \
               f"({RULE.gb('GB9186')}); try `torch._dynamo.config.trace_autograd_ops " \
               "= True`, or take the gradient outside the compiled region"
    if qual == "torch.autograd.backward" or method_on_tensor(w, node, {"backward"}):
        return "`backward()` in forward is not traced: graph break " \
               f"({RULE.gb('GB0123')}); call it on the compiled model's output"
    false = node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value is False
    if method_on_tensor(w, node, {"requires_grad_"}) and not false:
        gb_id = "GB8985" if w.computed(node.func.value) else "GB0125"
        return "`requires_grad_()` on a tensor in forward: graph break " \
               f"({RULE.gb(gb_id)}); make the leaf in the caller, or return the " \
               "tensor detached"
    return None
