"""flush_hold_crossval.py — is kFlushHold (src/tune/benchmark.hpp, 2 %) too tight or too loose, judged on timings the
pick was not made from? The tuner's pick for a memory-bound problem is replayed (lab/2026-12-06-session51/
flush_clear_replay.py's model of version 0.1.4's ranking) on one run's AUTOTUNE table with a hold margin h, and then
scored on another run's table of the same problem on the same card and version: the pick's write / read medians there
against that table's fastest cuBLASLt algorithm under the same flush (> 1: ahead), which is what `tmagemm bench`
compares with. Every ordered pair of runs counts once. Prints, per h, the geometric mean under each flush and the
scores under 0.97 (the issue's row floor). Only a table's first ten rows are printed by the tuner: a pair whose pick is
not among the scoring table's rows is left out (counted).
--same V1,V2: count those versions as one (their kernels and tuner alike: 0.1.3 and 0.1.4 changed neither the decode
kernels nor their timing); other versions are left out.
Usage: python3 flush_hold_crossval.py [--card H200] [--same V1,V2] LOG..."""
import collections
import itertools
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "2026-12-06-session51"))
import flush_clear_replay as fr  # noqa: E402

HOLDS = [0.0, 0.01, 0.02, 0.03, 0.05, 0.10, 1e9]
HEADER = re.compile(r"tmagemm (\S+) bench on NVIDIA (H\d00)")


def runs(paths, card, same):
    """{(version, card, table title): [rows of one run, ...]}"""
    out = collections.defaultdict(list)
    for path in paths:
        head = None
        for line in open(path, errors="replace"):
            m = HEADER.search(line)
            if m:
                head = m.groups()
                break
        if not head or (card and head[1] != card) or (same and head[0] not in same):
            continue
        if same:
            head = ("+".join(same), head[1])
        for title, rows in fr.tables(path):
            out[(head[0], head[1], title)].append(rows)
    return out


def main():
    args = sys.argv[1:]
    card, same = None, None
    while args[:1] in (["--card"], ["--same"]):
        if args[0] == "--card":
            card = args[1]
        else:
            same = args[1].split(",")
        args = args[2:]
    by_problem = runs(args, card, same)
    problems = {k: v for k, v in by_problem.items() if len(v) > 1}
    print(f"{len(problems)} problems timed in more than one run "
          f"({sum(len(v) for v in problems.values())} tables; {card or 'every card'})")
    for h in HOLDS:
        fr.HOLD = h
        lw = lr = 0.0
        n = missing = ours = 0
        low = []
        for key, tables in problems.items():
            for a, b in itertools.permutations(tables, 2):
                name = fr.pick(a, fr.ranked(a, True))
                e = next((x for x in b if x["name"] == name), None)
                lib = [x for x in b if x["lib"]]
                if e is None or not lib:
                    missing += 1
                    continue
                sw = min(x["w"] for x in lib) / e["w"]
                sr = min(x["r"] for x in lib) / e["r"]
                lw += math.log(sw)
                lr += math.log(sr)
                n += 1
                ours += not e["lib"]
                if min(sw, sr) < 0.97:
                    low.append((round(sw, 3), round(sr, 3), key[0], key[2][9:60], name))
        label = "none" if h > 1 else f"{h:.0%}"
        print(f"hold {label:>4}: {n} scored pairs ({missing} left out), ours picked in {ours}; "
              f"vs cuBLASLt's fastest: write x{math.exp(lw / n):.4f}, read x{math.exp(lr / n):.4f}; "
              f"{len(low)} under 0.97")
        for x in low[:8]:
            print("     ", *x)


if __name__ == "__main__":
    main()
