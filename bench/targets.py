"""targets.py — reads suite JSON written by `tmagemm bench` (bench/results/) and prints each open issue's target
beside what the files measured: the suite's geometric mean of the same-run ratio against cuBLASLt, its lowest row,
and whether the target holds. Issue 21: misaligned (geomean >= 4, every row >= 0.90 of aligned), waves (>= 1.05, no
row < 0.98), square and llm (>= 1.02), decode (>= 1.05 under each flush, no row < 0.97). Issue 20: bmm (>= 1.05, no
row < 0.97), grouped (>= 1.10, no row < 0.97; its MoE decode rows' geomean >= 1.3). The targets are H200 figures of
one run: files of another card are read all the same and say so. A row with an error or without a ratio fails its
suite. No GPU needed.
Usage: python3 bench/targets.py FILE.json...   (e.g. bench/results/nvidia-h200-2026-12-06-*-s49.json)"""
import json
import math
import os
import sys

# suite -> (geomean at least, every row at least, the field each row is held to for the floor)
TARGETS = {
    "misaligned": (4.0, 0.90, "vs_aligned"),
    "waves": (1.05, 0.98, "ratio"),
    "square": (1.02, None, "ratio"),
    "llm": (1.02, None, "ratio"),
    "decode": (1.05, 0.97, "ratio"),
    "bmm": (1.05, 0.97, "ratio"),
    "grouped": (1.10, 0.97, "ratio"),
}
MOE_DECODE = 1.3


def suite_of(path):
    """The suite a file holds, by its name (<card>-<date>-<suite>[-flush_read][-b2b][-tag].json)."""
    base = os.path.basename(path)
    found = [s for s in TARGETS if f"-{s}" in base]
    return max(found, key=len) if found else None


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def shape(r):
    s = f"{r['M']}x{r['N']}x{r['K']}"
    return (f"{r['batch']}x" + s if r.get("batch", 1) != 1 else s) + (f" {r['layout']}" if r.get("layout") else "")


def check(path):
    suite = suite_of(path)
    if suite is None:
        return None, f"{path}: no suite of the targets in its name"
    rows = json.load(open(path))
    want, floor, field = TARGETS[suite]
    bad = [r for r in rows if r.get("status", "ok") != "ok" or not r.get("ratio")]
    ratios = [r["ratio"] for r in rows if r not in bad]
    g = geomean(ratios)
    ok = not bad and g >= want
    parts = [f"geomean {g:.3f} (>= {want})"]
    held = [r for r in rows if r not in bad and r.get(field) is not None]
    if floor is not None and held:
        low = min(held, key=lambda r: r[field])
        ok = ok and low[field] >= floor and len(held) == len(rows) - len(bad)
        parts.append(f"lowest {field} {low[field]:.3f} on {shape(low)} (>= {floor})")
    if suite == "grouped":
        dec = [r["ratio"] for r in rows if r not in bad and "decode" in (r.get("note") or "")]
        if dec:
            ok = ok and geomean(dec) >= MOE_DECODE
            parts.append(f"MoE decode rows {geomean(dec):.3f} (>= {MOE_DECODE})")
    if bad:
        parts.append(f"{len(bad)} rows without a ratio")
    card = "" if "h200" in os.path.basename(path) else "  [not an H200]"
    flush = rows[0].get("l2_flush", "?") if rows else "?"
    timing = rows[0].get("timing", "?") if rows else "?"
    return ok, f"{'met   ' if ok else 'missed'} {suite:<10} {flush}/{timing}: {', '.join(parts)}  ({path}){card}"


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    failed = 0
    for p in paths:
        ok, line = check(p)
        print(line)
        failed += ok is False
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
