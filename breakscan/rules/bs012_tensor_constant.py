"""BS012 tensor_constant: A constant kept in a tensor.

The rule's whole behaviour: its entry and its fixes.
"""
from __future__ import annotations

from .model import FixSpec, Rule

RULE = Rule(
    "BS012", "tensor_constant", "constant-in-tensor", "A constant kept in a tensor",
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
    fixes=("python_constants", "constant_source"))

FIXES: tuple[FixSpec, ...] = (
    # Constants kept in tensors, as Python values: on the built model, or where they are made.
    FixSpec("python_constants", "constants", "BS012",
            title="the constants as Python values on the built model",
            offered="a break on a constant kept in a module's tensor attribute (its class and "
                    "attribute known)"),
    FixSpec("constant_source", "source", "BS012",
            title="keep the constants as Python values: {lines}",
            rewrite="rewrite"),
)
