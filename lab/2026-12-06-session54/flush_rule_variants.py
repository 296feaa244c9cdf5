"""flush_rule_variants.py — the flush-clear rule (version 0.1.4, src/tune/benchmark.cpp flush_ranked_ms) against a
variant that stands aside where the lead is under the write flush alone, replayed on the AUTOTUNE tables of earlier
runs' logs (memory-bound problems timed after both flushes) with lab/2026-12-06-session51/flush_clear_replay.py's
model of the tuner's ranking. For each rule: the tables whose pick differs from the rule before 0.1.4, and the
geometric mean over every table of the old pick's tuning time over the new pick's under each flush (> 1: faster).
Variant "read-guard": a choice is clear only if it is > 3 % ahead under the read flush, or > 3 % ahead under the write
flush and not behind the fastest cuBLASLt rank under the read flush.
Usage: python3 flush_rule_variants.py LOG..."""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "2026-12-06-session51"))
import flush_clear_replay as fr  # noqa: E402

MARGIN = fr.MARGIN


def read_guard(e, lw, lr):
    return e["r"] * (1 + MARGIN) < lr or (e["w"] * (1 + MARGIN) < lw and e["r"] <= lr)


def main():
    rules = {"0.1.4": lambda r: fr.ranked(r, True), "read-guard": lambda r: fr.ranked(r, read_guard)}
    stats = {k: {"changed": 0, "lw": 0.0, "lr": 0.0, "low_r": []} for k in rules}
    total = 0
    for path in sys.argv[1:]:
        for title, rows in fr.tables(path):
            total += 1
            old = next(x for x in rows if x["name"] == fr.pick(rows, fr.ranked(rows, False)))
            for k, rank in rules.items():
                new = next(x for x in rows if x["name"] == fr.pick(rows, rank(rows)))
                if new is old:
                    continue
                st = stats[k]
                st["changed"] += 1
                st["lw"] += math.log(old["w"] / new["w"])
                st["lr"] += math.log(old["r"] / new["r"])
                if old["r"] / new["r"] < 0.98:
                    st["low_r"].append((round(old["r"] / new["r"], 3), path.split("lab/")[-1], title[9:70]))
    for k, st in stats.items():
        print(f"{k}: {st['changed']} of {total} tables change their pick; over all tables the tuned time gains "
              f"write x{math.exp(st['lw'] / total):.4f}, read x{math.exp(st['lr'] / total):.4f}; "
              f"{len(st['low_r'])} changed picks > 2 % slower under the read flush")
        for x in st["low_r"]:
            print("   ", *x)


if __name__ == "__main__":
    main()
