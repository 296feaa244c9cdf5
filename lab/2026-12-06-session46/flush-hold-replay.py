#!/usr/bin/env python3
"""flush-hold-replay.py — replays the tuner's pick on an AUTOTUNE log of the decode suite (tuned under both flushes)
with other flush-hold thresholds, from the logged write / read medians of the (at most ten) printed rows, and
estimates each pick's ratio against cuBLASLt's fastest under each flush from the same medians. A tuner-side estimate,
not a bench figure (the bench re-times the pick and its baseline). Usage: flush-hold-replay.py BENCH_LOG"""
import math
import re
import sys

blocks, cur = [], None
for line in open(sys.argv[1]):
    if line.startswith("AUTOTUNE"):
        cur = {"name": line.split("(", 1)[1].split(")")[0], "rows": []}
        blocks.append(cur)
        continue
    m = re.match(r"\s+(\S+)\s+[\d.]+ ms \(write ([\d.]+), read ([\d.]+)", line)
    if m and cur is not None:
        cur["rows"].append((m.group(1), float(m.group(2)), float(m.group(3))))

def pick(rows, hold, margin=0.03):
    lib = [r for r in rows if r[0].startswith("cublaslt")]
    lw, lr = min(r[1] for r in lib), min(r[2] for r in lib)
    geo = lambda r: math.sqrt(r[1] * r[2])
    lgeo = min(geo(r) for r in lib)
    def score(r):
        s = geo(r)
        if hold is not None and not r[0].startswith("cublaslt") and (r[1] > (1 + hold) * lw or r[2] > (1 + hold) * lr):
            s = max(s, lgeo * (1 + 2 * margin))
        return s
    best = min(rows, key=score)
    # near-ties go to cuBLASLt (approximated: cuBLASLt's fastest by the mean when within the margin)
    lbest = min(lib, key=geo)
    if not best[0].startswith("cublaslt") and score(lbest) <= score(best) * (1 + margin):
        best = lbest
    return best, lw / best[1], lr / best[2]

for hold in (0.02, 0.03, 0.04, None):
    gw = gr = 0.0
    low = []
    n = 0
    for b in blocks:
        if not any(r[0].startswith("cublaslt") for r in b["rows"]):
            continue
        best, w, r = pick(b["rows"], hold)
        gw += math.log(w); gr += math.log(r); n += 1
        low.append(f"{b['name'][:34]:34s} {best[0][:34]:34s} w {w:.3f} r {r:.3f}")
    print(f"hold {hold}: est. write {math.exp(gw / n):.3f} read {math.exp(gr / n):.3f} over {n}")
    for l in low:
        print("   ", l)
