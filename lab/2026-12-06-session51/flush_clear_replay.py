"""flush_clear_replay.py — replays the tuner's pick on the AUTOTUNE tables of earlier runs' logs (memory-bound
problems, timed after both flushes: "(write W, read R)") under the rule before version 0.1.4 (flush-hold, then the 3 %
near-tie band) and with the flush-clear rule (src/tune/benchmark.cpp flush_ranked_ms), and prints the problems whose
pick changes with each side's write / read lead. Only the tables' first ten rows are printed by the tuner; a clear
choice ranks above every cuBLASLt rank that it is clear of, so it is among them where it matters.
Usage: python3 flush_clear_replay.py LOG..."""
import math
import re
import sys

MARGIN, HOLD = 0.03, 0.02
ROW = re.compile(r"^\s+(\S+)\s+[\d.]+ ms \(write ([\d.]+), read ([\d.]+)")


def clear_0_1_4(e, lw, lr):
    return e["w"] * (1 + MARGIN) < lw or e["r"] * (1 + MARGIN) < lr


def ranked(entries, clear_rule):
    """clear_rule: False (the rule before 0.1.4), True (0.1.4's) or a predicate (entry, lib write, lib read)."""
    if clear_rule is True:
        clear_rule = clear_0_1_4
    lib = [e for e in entries if e["lib"]]
    if not lib:
        return [e["geo"] for e in entries]
    lw, lr = min(e["w"] for e in lib), min(e["r"] for e in lib)
    lg = min(e["geo"] for e in lib)
    ms, clear = [], []
    for i, e in enumerate(entries):
        x = e["geo"]
        if not e["lib"]:
            if e["w"] > (1 + HOLD) * lw or e["r"] > (1 + HOLD) * lr:
                x = max(x, lg * (1 + 2 * MARGIN))
            elif clear_rule and clear_rule(e, lw, lr):
                clear.append(i)
        ms.append(x)
    if clear:
        cg = min(ms[i] for i in clear)
        s = lg / ((1 + 2 * MARGIN) * cg)
        if s < 1:
            for i in clear:
                ms[i] *= s
    return ms


def pick(entries, ms):
    order = sorted(range(len(entries)), key=lambda i: ms[i])
    e = [(ms[i], entries[i]) for i in order]
    libs = [k for k, (_, x) in enumerate(e) if x["lib"]]
    if not libs or e[libs[0]][0] > e[0][0] * (1 + MARGIN):
        return e[0][1]["name"]
    p = libs[0]
    for k in libs[1:]:
        if e[k][0] <= e[0][0] * (1 + MARGIN) and e[k][1]["rank"] < e[p][1]["rank"]:
            p = k
    return e[p][1]["name"]


def tables(path):
    title, rows = None, []
    for line in open(path, errors="replace"):
        if line.startswith("AUTOTUNE ") and "(" in line and not line.startswith("AUTOTUNE bucket"):
            if title and rows:
                yield title, rows
            title, rows = line.strip(), []
            continue
        m = ROW.match(line)
        if m and title:
            name, w, r = m.group(1), float(m.group(2)), float(m.group(3))
            lib = re.fullmatch(r"cublaslt_algo(\d+)", name)
            rows.append({"name": name, "w": w, "r": r, "geo": math.sqrt(w * r), "lib": bool(lib),
                         "rank": int(lib.group(1)) if lib else -1})
        elif line.startswith("benchmarked") and title:
            if rows:
                yield title, rows
            title, rows = None, []


def main():
    changed = total = 0
    for path in sys.argv[1:]:
        for title, rows in tables(path):
            total += 1
            old, new = pick(rows, ranked(rows, False)), pick(rows, ranked(rows, True))
            if old == new:
                continue
            changed += 1
            o = next(x for x in rows if x["name"] == old)
            n = next(x for x in rows if x["name"] == new)
            print(f"{path}\n  {title}\n  {old} -> {new}: write {o['w'] / n['w']:.3f}, read {o['r'] / n['r']:.3f} "
                  "(old pick's time / new pick's)")
    print(f"{changed} of {total} memory-bound tables change their pick")


if __name__ == "__main__":
    main()
