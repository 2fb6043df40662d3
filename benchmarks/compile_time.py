"""Compiling less (issue 47 §3): the cold compile of a stack of N identical blocks, the whole
model vs each block compiled alone (regional compilation), by depth (not a test).

Each measurement is a fresh Python process (nothing of a previous compile in memory): it builds
``tests/fixtures/models/regional_cases.py:Stack16`` at the given depth and width, pays Inductor's
one-time costs on a throwaway function, then compiles cold (Dynamo reset, Inductor's caches in
an empty folder: ``breakscan.pipeline.compile_time``) either the whole model or each block
alone, and prints the compiled frames' seconds and the wall time of that first call. Whole and
regional alternate; the figures are medians of ``--repeats`` processes.

    python benchmarks/compile_time.py [--depths 4,8,16,32] [--width 256] [--repeats 3]
    python benchmarks/compile_time.py --real   # transformers Llama, timm ViT, diffusers UNet

``--real`` measures tiny real library models (transformers, timm with its torchvision stub,
diffusers installed as for the slow suite), each block found as the scan finds it
(``pipeline/blocks.py``: the largest class one call runs twice or more).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = r"""
import json, sys, time
sys.path.insert(0, {root!r})
import torch
from breakscan.options import ScanOptions
from breakscan.pipeline.call import model_call
from breakscan.pipeline.compile_time import first_inductor_use, measure_compile_time
from breakscan.pipeline.load import load_target

from breakscan.pipeline.blocks import counting_blocks

torch.manual_seed(0)
loaded = load_target({target!r}, **{load!r})
block = ""
if {regional!r}:
    with counting_blocks(loaded.model) as blocks, torch.no_grad():
        loaded.fn(*loaded.args, **loaded.kwargs)
    block = blocks[0].name
    loaded.compile_only = "@" + block + ".forward"
first_inductor_use()
found = measure_compile_time(model_call(loaded, ScanOptions()), warm=False)
print(json.dumps({{"frames_s": found.cold.frames_s, "wall_s": found.cold.wall_s,
                  "frames": len(found.cold.frames), "block": block}}))
"""


THIRD = ROOT / "tests" / "fixtures" / "third_party"
REAL = {  # label: (target, load_target's keywords)
    "transformers Llama, 12 decoder layers": (f"{THIRD}/hf_models.py:llama12",
                                              {"input_shapes": ["2,16"], "dtype": "int64"}),
    "timm ViT, 12 blocks": (f"{THIRD}/timm_models.py:vit", {"input_shapes": ["1,3,32,32"]}),
    "diffusers UNet2DModel": (f"{THIRD}/ddim_loop.py:unet",
                              {"inputs": f"{THIRD}/ddim_loop.py:unet_inputs"}),
}


def _one(depth: int, width: int, regional: bool) -> dict:
    target = f"{ROOT}/tests/fixtures/models/regional_cases.py:Stack16"
    load = {"input_shapes": [f"64,{width}"], "init_args": json.dumps({"depth": depth,
                                                                     "width": width})}
    return _child(target, load, regional)


def _child(target: str, load: dict, regional: bool) -> dict:
    code = CHILD.format(root=str(ROOT), target=target, load=load, regional=regional)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depths", default="4,8,16,32")
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--real", action="store_true", help="the real library models")
    args = parser.parse_args()
    import torch

    print(f"{platform.machine()}, {os.cpu_count()} CPUs, python {platform.python_version()}, "
          f"torch {torch.__version__}; width {args.width}, batch 64; median of {args.repeats} "
          "fresh processes each")
    if args.real:
        _real(args.repeats)
        return
    print("| blocks | whole: cold compile (frames) | regional: cold compile (frames) | saved |")
    print("|---|---|---|---|")
    for depth in map(int, args.depths.split(",")):
        whole, regional = [], []
        for _ in range(args.repeats):  # interleaved
            whole.append(_one(depth, args.width, False))
            regional.append(_one(depth, args.width, True))
        w = statistics.median(r["frames_s"] for r in whole)
        r = statistics.median(x["frames_s"] for x in regional)
        spread = (f" [{min(x['frames_s'] for x in whole):.2f}–"
                  f"{max(x['frames_s'] for x in whole):.2f}]")
        print(f"| {depth} | {w:.2f} s{spread} ({whole[0]['frames']}) | {r:.2f} s "
              f"[{min(x['frames_s'] for x in regional):.2f}–"
              f"{max(x['frames_s'] for x in regional):.2f}] ({regional[0]['frames']}) | "
              f"{w / r:.1f}× |")


def _real(repeats: int) -> None:
    print("| model | block | whole: cold compile | regional: cold compile | saved |")
    print("|---|---|---|---|---|")
    for label, (target, load) in REAL.items():
        whole, regional = [], []
        for _ in range(repeats):  # interleaved
            whole.append(_child(target, load, False))
            regional.append(_child(target, load, True))
        w = statistics.median(r["frames_s"] for r in whole)
        r = statistics.median(x["frames_s"] for x in regional)
        print(f"| {label} | {regional[0]['block']} | {w:.2f} s "
              f"[{min(x['frames_s'] for x in whole):.2f}–{max(x['frames_s'] for x in whole):.2f}]"
              f" | {r:.2f} s [{min(x['frames_s'] for x in regional):.2f}–"
              f"{max(x['frames_s'] for x in regional):.2f}] | {w / r:.1f}× |")


if __name__ == "__main__":
    main()
