#!/usr/bin/env python3
"""What the bench reads when both sides run cuBLASLt's heuristic algorithms (H200 tables since 2026-12-03).

Rows whose tuned choice is the very algorithm the bench's baseline found fastest measure the method's own floor (the
same kernel timed twice in one run); rows whose choice is another of the heuristic's algorithms measure what a
near-tie picked at tuning time costs in the bench. Run from the repository root."""
import collections, glob, json, math


def geomean(xs):
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


same, other, own_trial = [], collections.defaultdict(list), []
for f in sorted(glob.glob("bench/results/nvidia-h200-2026-12-0[3-6]*.json")):
    rows = json.load(open(f))
    if not isinstance(rows, list):
        continue
    for r in rows:
        c = r.get("choice", "")
        if r.get("baseline") != "cublaslt" or r.get("status") != "ok" or not c.startswith("cublaslt_algo"):
            continue
        algo = int(c[len("cublaslt_algo"):])
        if algo == r.get("baseline_algo"):
            same.append(r["ratio"])
            continue
        other[(r["op"], r.get("l2_flush"), r.get("timing"))].append(r["ratio"])
        trials = r.get("baseline_trials_ms") or []
        if algo < len(trials):
            own_trial.append(trials[algo] / r["tmagemm_ms"])

print(f"same algorithm as the baseline's best: {len(same)} rows, geomean {geomean(same):.4f}")
allother = [x for v in other.values() for x in v]
print(f"another heuristic algorithm: {len(allother)} rows, geomean {geomean(allother):.4f}")
print(f"  that algorithm's own baseline trial / the tuned call's time: geomean {geomean(own_trial):.4f}")
for k, v in sorted(other.items()):
    print(f"  {k}: {len(v)} rows, geomean {geomean(v):.4f}, lowest {min(v):.3f}")
