#!/usr/bin/env python3
"""oracle-picks.py — the ceiling a tuner rule can reach with the kernels it has: for each AUTOTUNE block of a bench
log, the fastest printed candidate's median against cuBLASLt's fastest (per flush where both are logged), and the
geometric mean over blocks. The tuner prints at most ten candidates, so a candidate below them cannot be the oracle
pick; a tuner-side estimate from the same medians, not a bench figure. Usage: oracle-picks.py BENCH_LOG..."""
import math
import re
import sys


def blocks_of(path):
    blocks, cur = [], None
    for line in open(path):
        if line.startswith("AUTOTUNE ") and "(" in line and not line.startswith("AUTOTUNE bucket"):
            cur = {"name": line.split(" ", 1)[1].strip(), "rows": []}
            blocks.append(cur)
            continue
        m = re.match(r"\s+(\S+)\s+([\d.]+) ms(?: \((?:write ([\d.]+), read ([\d.]+)|sustained [\d.]+)[^)]*\))?", line)
        if m and cur is not None:
            w = float(m.group(3)) if m.group(3) else float(m.group(2))
            r = float(m.group(4)) if m.group(4) else None
            cur["rows"].append((m.group(1), w, r))
    return [b for b in blocks if any(r[0].startswith("cublaslt") or r[0].startswith("cublas_") for r in b["rows"])]


def is_lib(name):
    return name.startswith("cublaslt") or name.startswith("cublas_")


for path in sys.argv[1:]:
    print(path)
    logs = {"write": [], "read": []}
    for b in blocks_of(path):
        lib = [r for r in b["rows"] if is_lib(r[0])]
        ours = [r for r in b["rows"] if not is_lib(r[0])]
        out = f"  {b['name'][:60]:60s}"
        for i, fl in ((1, "write"), (2, "read")):
            if any(r[i] is None for r in b["rows"]):
                continue
            best_lib = min(r[i] for r in lib)
            best = min(b["rows"], key=lambda r: r[i])
            ours_best = min((r[i] for r in ours), default=math.inf)
            logs[fl].append(math.log(best_lib / best[i]))
            out += f" {fl} {best_lib / best[i]:.3f} (ours {best_lib / ours_best:.3f})"
        print(out)
    for fl, v in logs.items():
        if v:
            print(f"  oracle geomean {fl}: {math.exp(sum(v) / len(v)):.3f} over {len(v)}")
