"""Draws `tmagemm bench` results (and python -m tmagemm.bench's, against torch) as PNG: one picture per suite file.

    python -m tmagemm.plot bench/results/<file>.json [...] [--out DIR]

Each picture shows, per row of the suite (shape, and the epilogue where the suite has several), tmagemm's and the
baseline's throughput side by side — TFLOP/s, or TB/s for rows the bench reports bandwidth for (decode) — with the
ratio tmagemm / baseline written above each pair, and the suite's geomean ratio in the title. Rows that did not run
(status other than "ok", or no time) are shown as gaps and named in the legend's note. The PNG is written next to
the JSON (or into --out) with the same stem.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Bar:
    label: str  # the row: "MxNxK" (+ layout when a suite mixes them) (+ epilogue)
    ours: float | None
    base: float | None
    ratio: float | None
    note: str = ""  # why the row has no numbers


def _label(row: dict, layouts: set[str], epilogues: set[str]) -> str:
    shape = f"{row['M']}x{row['N']}x{row['K']}"
    if row.get("batch", 1) != 1:
        shape = f"{row['batch']}x{shape}"
    parts = [shape]
    if len(layouts) > 1:
        parts.append(row.get("layout", ""))
    if len(epilogues) > 1:
        parts.append(row.get("epilogue", ""))
    return " ".join(p for p in parts if p)


def load_bars(path: Path) -> tuple[list[Bar], str]:
    """The rows of one bench JSON as bars, and the unit ("TFLOP/s" or "TB/s")."""
    try:
        rows = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise ValueError(f"{path}: not a readable bench result ({e})") from e
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{path}: a bench result is a JSON list of rows (objects)")
    if not rows:
        raise ValueError(f"{path}: no rows")
    for i, r in enumerate(rows):
        missing = [k for k in ("M", "N", "K", "tmagemm_tflops", "baseline_tflops", "status") if k not in r]
        if missing:
            raise ValueError(f"{path}: row {i} lacks {', '.join(missing)}")
    # TB/s where every row reports it and the suite is memory-bound (the bench adds it to decode rows).
    bandwidth = all(r.get("tmagemm_tbps") is not None or r.get("status") != "ok" for r in rows) and all(
        r["M"] <= 64 for r in rows
    )
    unit = "TB/s" if bandwidth else "TFLOP/s"
    ours_key, base_key = ("tmagemm_tbps", "baseline_tbps") if bandwidth else ("tmagemm_tflops", "baseline_tflops")
    layouts = {r.get("layout", "") for r in rows}
    epilogues = {r.get("epilogue", "") for r in rows}
    labels = [_label(r, layouts, epilogues) for r in rows]
    # Rows of one shape that differ in something the label leaves out (strides): the bench's note, else a number.
    for i, label in enumerate(labels):
        if labels.count(label) > 1:
            same = [j for j, other in enumerate(labels) if other == label]
            for n, j in enumerate(same, 1):
                labels[j] = f"{label} ({rows[j].get('note') or n})"
    bars = []
    for r, label in zip(rows, labels):
        ok = r["status"] == "ok" and r.get(ours_key) is not None and r.get(base_key) is not None
        bars.append(
            Bar(
                label=label,
                ours=r.get(ours_key) if ok else None,
                base=r.get(base_key) if ok else None,
                ratio=r.get("ratio") if ok else None,
                note="" if ok else f"{r['status']}: {(r.get('error') or '')[:60]}",
            )
        )
    return bars, unit


def baseline_label(path: Path) -> str:
    """Who the suite file compares tmagemm with: "torch" for python -m tmagemm.bench's files (every row's `baseline`
    a torch op), else "cuBLASLt" (tmagemm bench's: cuBLASLt, or cuBLAS grouped for grouped rows)."""
    rows = json.loads(path.read_text())
    names = {str(r.get("baseline", "")) for r in rows}
    return "torch" if names and all(n.startswith("torch") for n in names) else "cuBLASLt"


def geomean(values: list[float]) -> float | None:
    values = [v for v in values if v and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def suite_name(path: Path) -> str:
    # <device>-<YYYY>-<MM>-<DD>-<suite>[-<variant>].json, as `tmagemm bench` names them.
    parts = path.stem.split("-")
    for i in range(len(parts) - 3):
        if parts[i].isdigit() and len(parts[i]) == 4 and parts[i + 1].isdigit() and parts[i + 2].isdigit():
            return "-".join(parts[i + 3:]) or path.stem
    return path.stem


def plot(path: Path, out_dir: Path | None = None) -> Path:
    """Draws one suite file; returns the PNG's path."""
    import matplotlib

    matplotlib.use("Agg")  # no display
    import matplotlib.pyplot as plt

    bars, unit = load_bars(path)
    baseline = baseline_label(path)
    n = len(bars)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.55 * n + 2.0), 4.8), constrained_layout=True)
    x = list(range(n))
    w = 0.4
    ours = [b.ours or 0.0 for b in bars]
    base = [b.base or 0.0 for b in bars]
    ax.bar([i - w / 2 for i in x], ours, w, label="tmagemm", color="#2b6cb0")
    ax.bar([i + w / 2 for i in x], base, w, label=baseline, color="#a0aec0")
    top = max(ours + base + [1e-9])
    positive = [v for v in ours + base if v > 0]
    # Suites that mix decode rows with large ones (fp8) span orders of magnitude: a log axis keeps both readable.
    log = bool(positive) and top / min(positive) > 100
    if log:
        ax.set_yscale("log")
    for i, b in enumerate(bars):
        height = max(b.ours or 0, b.base or 0)
        y = height * 1.08 if log else height + 0.02 * top
        if b.ratio is not None:
            ax.text(i, y, f"{b.ratio:.2f}", ha="center", va="bottom", fontsize=7,
                    color="#c05621" if b.ratio < 1 else "#276749")
        else:
            ax.text(i, min(positive) if log and positive else 0.02 * top, "n/a", ha="center", va="bottom", fontsize=7,
                    color="#9b2c2c")
    ax.set_xticks(x)
    ax.set_xticklabels([b.label for b in bars], rotation=60, ha="right", fontsize=7)
    ax.set_ylabel(unit)
    if log:
        ax.set_ylim(min(positive) / 2, top * 2)
    else:
        ax.set_ylim(0, top * 1.12)
    g = geomean([b.ratio for b in bars if b.ratio is not None])
    title = f"{suite_name(path)}: tmagemm / {baseline}"
    if g is not None:
        title += f", geomean {g:.3f} over {sum(b.ratio is not None for b in bars)} of {n} rows"
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    missing = [b for b in bars if b.ratio is None]
    if missing:
        ax.annotate(f"{len(missing)} row(s) without numbers, e.g. {missing[0].label} ({missing[0].note})",
                    xy=(0, -0.01), xycoords="figure fraction", fontsize=6, va="bottom")
    out = (out_dir or path.parent) / (path.stem + ".png")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=130)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tmagemm.plot", description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", type=Path, help="bench result JSON files (one suite each)")
    parser.add_argument("--out", type=Path, default=None, help="directory for the PNGs (default: beside each JSON)")
    args = parser.parse_args(argv)
    status = 0
    for path in args.results:
        try:
            print(plot(path, args.out))
        except ValueError as e:
            print(f"tmagemm.plot: {e}", file=sys.stderr)
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
