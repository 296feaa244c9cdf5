#!/usr/bin/env python3
"""persistent-trace.py — summarise a TMAGEMM_TRACE CSV of a persistent-TMA kernel (one row per CTA): cycles from each
CTA's entry to its marks (median / max over CTAs), tiles per CTA, and the kernel's span by %globaltimer.
Usage: persistent-trace.py FILE..."""
import statistics
import sys


def summarise(path):
    with open(path) as f:
        title = f.readline().lstrip("# ").strip()
        cols = f.readline().strip().split(",")
        rows = [dict(zip(cols, map(int, line.split(",")))) for line in f if line.strip()]
    print(f"== {title} ({len(rows)} CTAs)")
    marks = ["init_done", "prod_tile", "first_load", "first_full", "first_main_done", "packed", "next_full",
             "next_issued", "unit0_stored", "first_epi_done",
             "last_main_done", "last_epi_done", "producer_done", "stores_read", "exit"]
    for m in marks:
        v = [r[m] - r["clock_start"] for r in rows if r.get(m, 0) > 0]
        if v:
            print(f"  {m:16s} median {statistics.median(v):9.0f}  max {max(v):9.0f}  min {min(v):9.0f}  ({len(v)} CTAs)")
    starts = [r["global_start_ns"] for r in rows if r["global_start_ns"]]
    exits = [r["global_exit_ns"] for r in rows if r["global_exit_ns"]]
    if starts and exits:
        t0 = min(starts)
        print(f"  span {(max(exits) - t0) / 1e3:.2f} us; CTA starts within {(max(starts) - t0) / 1e3:.2f} us; "
              f"exits median {(statistics.median(exits) - t0) / 1e3:.2f} us")
        cyc = [r["exit"] - r["clock_start"] for r in rows if r["exit"]]
        ns = [r["global_exit_ns"] - r["global_start_ns"] for r in rows if r["global_exit_ns"]]
        if cyc and ns:
            print(f"  clock ~{statistics.median(c / n for c, n in zip(cyc, ns) if n):.2f} GHz")
    tiles = [r["tiles"] for r in rows]
    print(f"  tiles per CTA: min {min(tiles)} max {max(tiles)} total {sum(tiles)}")


for p in sys.argv[1:]:
    try:
        summarise(p)
    except Exception as e:  # a missing or empty trace: say so and go on
        print(f"== {p}: {e}")
