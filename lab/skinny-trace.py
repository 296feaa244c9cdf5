#!/usr/bin/env python3
"""skinny-trace.py — summarises a skinny kernel timeline (TMAGEMM_TRACE CSV of a kTrace build, kernels/gemm_skinny.cuh
SkinnyTraceSlot): each mark in µs after the earliest CTA entry (min / median / max over CTAs), the kernel body (first
entry to last exit), and the steps between consecutive marks (median over CTAs).
Usage: lab/skinny-trace.py TRACE.csv"""
import statistics
import sys

MARKS = ["entry_ns", "started", "first_issued", "last_issued", "first_full", "last_full", "mma_done", "reduce_start",
         "stored", "exit"]


def main(path):
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        print(f"  no trace: {e}")
        return
    title = lines[0].lstrip("# ")
    header = lines[1].split(",")
    rows = [dict(zip(header, map(int, l.split(",")))) for l in lines[2:] if l.strip()]
    rows = [r for r in rows if r.get("entry_ns", 0) > 0]
    if not rows:
        print("  empty trace")
        return
    t0 = min(r["entry_ns"] for r in rows)
    print(f"  {title}: {len(rows)} CTAs on {len({r['smid'] for r in rows})} SMs")
    for m in MARKS:
        v = [(r[m] - t0) / 1000 for r in rows if r.get(m, 0) > 0]
        if v:
            print(f"  {m:<13} min {min(v):7.2f}  median {statistics.median(v):7.2f}  max {max(v):7.2f} us")
    body = (max(r["exit"] for r in rows) - t0) / 1000
    print(f"  body (first entry to last exit): {body:.2f} us")
    steps = []
    for a, b in zip(MARKS, MARKS[1:]):
        d = [(r[b] - r[a]) / 1000 for r in rows if r.get(a, 0) > 0 and r.get(b, 0) > 0]
        if d:
            steps.append(f"{a}->{b} {statistics.median(d):.2f}")
    print("  steps (median us): " + ", ".join(steps))


if __name__ == "__main__":
    main(sys.argv[1])
