"""The stages that run the model (they import torch): load, capture, measure, recompiles, the
model scan itself, a program's run and the side-by-side compare."""
