"""Host time of a tuned call from Python (issue 19's target: tmagemm.mm within 10 us of torch.mm's own on a tuned
256^3 bf16 problem). Each side is called N times back to back on the current stream (the GPU keeps up: a 256^3
product takes a few microseconds), timed with perf_counter around the loop alone, in interleaved rounds; the median
round is reported. Also: tmagemm.mm with a given out, torch.ops.tmagemm.mm (the torch.library path), and
torch.mm(out=). Writes <out>/<gpu-name-slug>-<date>-python-overhead.json. Needs a GPU.

    python bench/python_overhead.py [--size 256] [--calls 20000] [--rounds 7] [--out bench/results]
"""

import argparse
import datetime
import json
import re
import statistics
import sys
import time
from pathlib import Path

import torch

import tmagemm


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=256)
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--out", default="bench/results")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("python_overhead: no CUDA device found; nothing to measure")
        return 1
    n = args.size
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    winner = tmagemm.tune("mm", a, b)
    sides = {
        "torch.mm": lambda: torch.mm(a, b),
        "tmagemm.mm": lambda: tmagemm.mm(a, b),
        "torch.mm(out=)": lambda: torch.mm(a, b, out=out),
        "tmagemm.mm(out=)": lambda: tmagemm.mm(a, b, out=out),
        "torch.ops.tmagemm.mm": lambda: torch.ops.tmagemm.mm(a, b),
    }
    for fn in sides.values():  # warm-up: allocator, kernel loads, the tuner's memo
        for _ in range(1000):
            fn()
    torch.cuda.synchronize()
    rounds = {name: [] for name in sides}
    for _ in range(args.rounds):
        for name, fn in sides.items():
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(args.calls):
                fn()
            t1 = time.perf_counter()
            rounds[name].append((t1 - t0) / args.calls * 1e6)
    torch.cuda.synchronize()
    us = {name: statistics.median(v) for name, v in rounds.items()}
    over = us["tmagemm.mm"] - us["torch.mm"]
    gpu = torch.cuda.get_device_name()
    print(f"{gpu}, torch {torch.__version__}, tmagemm {tmagemm.__version__}; {n}^3 bf16, winner {winner.name}")
    for name, v in us.items():
        print(f"  {name:<22} {v:7.2f} us/call (rounds {', '.join(f'{x:.2f}' for x in rounds[name])})")
    print(f"  tmagemm.mm - torch.mm: {over:+.2f} us (target <= 10)")
    slug = re.sub(r"[^a-z0-9]+", "-", gpu.lower()).strip("-")
    path = Path(args.out) / f"{slug}-{datetime.date.today().isoformat()}-python-overhead.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({
        "gpu": gpu, "torch": torch.__version__, "tmagemm": tmagemm.__version__, "size": n, "dtype": "bf16",
        "winner": winner.name, "calls_per_round": args.calls, "us_per_call": us, "rounds_us": rounds,
        "overhead_vs_torch_mm_us": over,
    }, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
