"""Helpers imported by nested_break.py: the break lives in this file, not the model's."""

import torch


def normalise_and_log(h):
    peak = h.abs().max().item()
    return h / (peak + 1e-6)


def normalise(h):
    peak = h.abs().max()
    return h / (peak + 1e-6)
