"""Eager vs torch.compile on the sample models and two tiny Hugging Face models, side by side.

For each model: eager and compiled (inductor) latency (median ± IQR, torch.utils.benchmark),
compile time of the first call, speedup, and breakscan's own overhead: the wall time of a full
``scan(..., timing=...)`` against doing the same by hand (explain + torch.compile + timing eager
and compiled with torch.utils.benchmark). Threads are fixed (default 1, as breakscan's default).

    python benchmarks/compiled_execution.py               # pairs + HF models (needs transformers)
    python benchmarks/compiled_execution.py --only item_logging,tensor_branch

A fresh TORCHINDUCTOR_CACHE_DIR gives cold compile times; the by-hand run then reuses the warm
cache, so the overhead column compares two warm runs (breakscan's scan first, cold).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import io
import os
import platform
import sys
import tempfile
import time
import warnings
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from breakscan import TimingOptions, scan_callable  # noqa: E402
from breakscan.pipeline.load import load_target  # noqa: E402
from breakscan.dynamo.session import clean_dynamo_state  # noqa: E402


def sample_models(only: set[str] | None):
    for path in sorted((ROOT / "sample_models").glob("*.py")):
        if only and path.stem not in only:
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and "Expected scan" in (ast.get_docstring(node) or ""):
                loaded = load_target(f"{path}:{node.name}", input_shapes=["8,16"])
                yield f"{path.stem}:{node.name}", loaded.model, loaded.args


def hf_models():
    try:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from transformers import BertConfig, BertModel, GPT2Config, GPT2LMHeadModel
        from transformers.utils import logging as hf_logging
    except ImportError:
        print("# transformers not installed: skipping the Hugging Face models", file=sys.stderr)
        return
    hf_logging.set_verbosity_error()
    torch.manual_seed(0)
    ids = torch.randint(0, 100, (2, 32))
    gpt2 = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=100,
                                      n_positions=64, bos_token_id=0, eos_token_id=0)).eval()
    yield "transformers GPT2LMHeadModel (2 layers, tiny)", gpt2, (ids,)
    bert = BertModel(BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                                intermediate_size=128, vocab_size=100)).eval()
    yield "transformers BertModel (2 layers, tiny)", bert, (ids,)


def by_hand(model, args, threads: int, max_run_time: float) -> float:
    """What a user would do without breakscan, end to end."""
    from torch.utils import benchmark

    start = time.perf_counter()
    torch.set_num_threads(threads)
    with torch.no_grad(), contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clean_dynamo_state()
        torch._dynamo.explain(model)(*args)
        benchmark.Timer("m(*a)", globals={"m": model, "a": args}, num_threads=threads) \
            .adaptive_autorange(threshold=0.1, min_run_time=0.05, max_run_time=max_run_time)
        clean_dynamo_state()
        compiled = torch.compile(model)
        compiled(*args)
        benchmark.Timer("m(*a)", globals={"m": compiled, "a": args}, num_threads=threads) \
            .adaptive_autorange(threshold=0.1, min_run_time=0.05, max_run_time=max_run_time)
    return time.perf_counter() - start


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated sample file stems")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--max-run-time", type=float, default=1.0)
    parser.add_argument("--no-hf", action="store_true")
    opts = parser.parse_args()
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", tempfile.mkdtemp(prefix="breakscan-bench-"))
    only = set(opts.only.split(",")) if opts.only else None
    models = list(sample_models(only)) + ([] if opts.no_hf else list(hf_models()))
    timing = TimingOptions(threads=opts.threads, max_run_time=opts.max_run_time)
    print(f"# torch {torch.__version__}, Python {platform.python_version()}, "
          f"{platform.machine()} ({os.cpu_count()} cores), {opts.threads} thread(s), inductor")
    print("| model | graphs | breaks | eager µs | compiled µs | speedup | compile s | "
          "outside graphs | outputs | breakscan s | by hand s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|")
    for name, model, args in models:
        start = time.perf_counter()
        result = scan_callable(model, *args, name=name, timing=timing)
        ours = time.perf_counter() - start
        hand = by_hand(model, args, opts.threads, opts.max_run_time)
        t = result.timings
        share = f"{t.outside_share:.0%}" if t.outside_share is not None else "-"
        match = "match" if t.correctness and t.correctness.match else "DIFFER"
        compiled = f"{us(t.compiled.median_s)} ± {us(t.compiled.iqr_s)}" if t.compiled else "-"
        print(f"| {name} | {result.summary.graph_count} | {result.summary.graph_break_count} | "
              f"{us(t.eager.median_s)} ± {us(t.eager.iqr_s)} | {compiled} | "
              f"{t.speedup:.2f}x | {t.compile_s:.1f} | {share} | {match} | {ours:.1f} | "
              f"{hand:.1f} |", flush=True)


if __name__ == "__main__":
    main()
