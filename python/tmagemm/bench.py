"""tmagemm against torch on the same inputs, in one process: `python -m tmagemm.bench`.

The suites of `tmagemm bench` (the C++ CLI, which measures against cuBLASLt's own best of its top four algorithms)
run here against what a PyTorch user calls instead: torch.mm, torch.bmm, torch._grouped_mm, torch.addmm /
torch._addmm_activation and torch._scaled_mm. Each row: random inputs (never zeros) on the suite's layout, strides
and routing; each side's first output written into a NaN-poisoned buffer and checked against a float32 reference
(TF32 off), a row failing where tmagemm's relative error is above 2x torch's + 1e-3; then both sides timed
after warm-up runs, interleaved, with CUDA events around the call alone (the side that goes first alternating), L2
flushed before each run (a 256 MiB write, or with --flush read a kernel reading it), median of >= --reps runs and
>= --min-ms per side. tmagemm tunes on its first call (TMAGEMM_TUNING and the other TMAGEMM_* variables apply).
Writes <out>/<gpu>-<date>-<suite>-torch[-flush_read].json.

    python -m tmagemm.bench --suite llm [--flush read] [--reps 50] [--out bench/results]
    python -m tmagemm.bench --suite 4096x14336x4095:rr,64x4096x4096
"""

import argparse
import datetime
import json
import math
import re
import statistics
import sys
from pathlib import Path

import torch

import tmagemm
from . import _C

_DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "e4m3": torch.float8_e4m3fn}
_FLUSH_BYTES = 256 << 20


def _random(shape, dtype, gen, device):
    """Normal values in `dtype` with no zeros (a zero rounds to +-1/16 of the spread)."""
    x = torch.randn(shape, generator=gen, device=device, dtype=torch.float32)
    x = torch.where(x.abs() < 1 / 16, torch.copysign(torch.full_like(x, 1 / 16), x), x)
    return x.to(dtype)


def _matrix(rows, cols, major_row, dtype, gen, device, pad=0, offset=0):
    """A (rows, cols) operand: row-major (ld cols + pad, first element at `offset` of its buffer) or column-major."""
    if not major_row:
        return _random((cols, rows), dtype, gen, device).t()
    if pad == 0 and offset == 0:
        return _random((rows, cols), dtype, gen, device)
    buf = _random((rows * (cols + pad) + offset,), dtype, gen, device)
    return buf.as_strided((rows, cols), (cols + pad, 1), offset)


def operands(row, device="cuda", seed=0):
    """The row's inputs: a dict of tensors (a, b; bias, offs, scales where the op has them) and `out`, the output
    buffer the suite asks for (None: each side allocates its own)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    op, m, n, k, batch = row["op"], row["m"], row["n"], row["k"], row["batch"]
    dt = _DTYPES[row["dtype"]]
    lay = row["layout"] or "rr"
    t = {"out": None}
    if op in ("mm", "addmm"):
        t["a"] = _matrix(m, k, lay[0] == "r", dt, gen, device, row["a_pad"], row["a_offset"])
        t["b"] = _matrix(k, n, lay[1] == "r", dt, gen, device, row["b_pad"])
        if row["out_pad"]:
            t["out"] = torch.empty((m, n + row["out_pad"]), dtype=dt, device=device)[:, :n]
        if op == "addmm":
            t["bias"] = _random((n,), dt, gen, device)
    elif op == "bmm":
        a = _random((batch, m, k) if lay[0] == "r" else (batch, k, m), dt, gen, device)
        b = _random((batch, k, n) if lay[1] == "r" else (batch, n, k), dt, gen, device)
        t["a"] = a if lay[0] == "r" else a.transpose(1, 2)
        t["b"] = b if lay[1] == "r" else b.transpose(1, 2)
    elif op == "grouped_mm":
        rows = row["group_rows"]
        t["a"] = _random((m, k), dt, gen, device)
        w = _random((batch, n, k), dt, gen, device)  # each expert's weight (N, K) row-major, as nn.Linear keeps it
        t["b"] = w.transpose(1, 2) if lay[1] == "c" else _random((batch, k, n), dt, gen, device)
        t["offs"] = torch.tensor(rows, dtype=torch.int64).cumsum(0).to(torch.int32).to(device)
    elif op == "scaled_mm":
        t["a"] = _random((m, k), dt, gen, device)
        t["b"] = _random((n, k), dt, gen, device).t()
        rowwise = row["epilogue"].startswith("rowwise")
        shape_a, shape_b = ((m, 1), (1, n)) if rowwise else ((), ())
        t["scale_a"] = torch.rand(shape_a, generator=gen, device=device) * 1.5 + 0.5
        t["scale_b"] = torch.rand(shape_b, generator=gen, device=device) * 1.5 + 0.5
    else:
        raise ValueError(f"op {op!r} has no torch counterpart here")
    return t


# The torch op each suite op is compared with (the JSON's `baseline`).
_TORCH_OPS = {
    "mm": lambda row: "torch.mm",
    "bmm": lambda row: "torch.bmm",
    "grouped_mm": lambda row: "torch._grouped_mm",
    "addmm": lambda row: "torch._addmm_activation" if "+" in row["epilogue"] else "torch.addmm",
    "scaled_mm": lambda row: "torch._scaled_mm",
}


def _activation(epilogue):
    act = epilogue.split("+", 1)[1] if "+" in epilogue else None
    if act not in (None, "gelu_tanh", "relu"):
        raise ValueError(f"epilogue {epilogue!r}: expected bias, bias+gelu_tanh or bias+relu")
    return act


def calls(row, t):
    """(tmagemm's call, torch's call): each takes `out` (a buffer or None) and returns the output."""
    op = row["op"]
    a, b = t["a"], t["b"]
    odt = torch.bfloat16 if op == "scaled_mm" else a.dtype
    if op == "mm":
        return (lambda out: tmagemm.mm(a, b, out=out),
                lambda out: torch.mm(a, b) if out is None else torch.mm(a, b, out=out))
    if op == "bmm":
        return (lambda out: tmagemm.bmm(a, b, out=out),
                lambda out: torch.bmm(a, b) if out is None else torch.bmm(a, b, out=out))
    if op == "grouped_mm":
        offs = t["offs"]
        return (lambda out: tmagemm.grouped_mm(a, b, offs, out=out),
                lambda out: _into(out, torch._grouped_mm(a, b, offs, out_dtype=odt)))
    if op == "addmm":
        bias, act = t["bias"], _activation(row["epilogue"])

        def torch_addmm(out):
            if act is None:
                return torch.addmm(bias, a, b) if out is None else torch.addmm(bias, a, b, out=out)
            return _into(out, torch._addmm_activation(bias, a, b, use_gelu=act == "gelu_tanh"))

        return lambda out: tmagemm.addmm(bias, a, b, activation=act, out=out), torch_addmm
    if op == "scaled_mm":
        sa, sb, fast = t["scale_a"], t["scale_b"], row["epilogue"].endswith("+fast")
        return (lambda out: tmagemm.scaled_mm(a, b, sa, sb, out_dtype=odt, use_fast_accum=fast, out=out),
                lambda out: _into(out, torch._scaled_mm(a, b, sa, sb, out_dtype=odt, use_fast_accum=fast)))
    raise ValueError(f"op {op!r} has no torch counterpart here")


def _into(out, value):
    if out is None:
        return value
    out.copy_(value)
    return out


def reference(row, t):
    """The float32 product the outputs are checked against (TF32 off: the caller's torch.backends setting)."""
    op = row["op"]
    a, b = t["a"].float(), t["b"].float()
    if op == "scaled_mm":
        return (a * t["scale_a"]) @ (b * t["scale_b"])
    if op == "grouped_mm":
        out, start = torch.empty((a.shape[0], b.shape[2]), device=a.device), 0
        for g, end in enumerate(t["offs"].tolist()):
            out[start:end] = a[start:end] @ b[g]
            start = end
        return out
    if op == "bmm":
        return torch.bmm(a, b)
    if op == "addmm":
        act = _activation(row["epilogue"])
        r = t["bias"].float() + a @ b
        return torch.relu(r) if act == "relu" else torch.nn.functional.gelu(r, approximate="tanh") if act else r
    return a @ b


def rel_err(x, ref):
    x = x.float()
    if not torch.isfinite(x).all():
        return math.inf
    return (torch.linalg.vector_norm(x - ref) / torch.linalg.vector_norm(ref)).item()


def flops(row):
    if row["op"] == "grouped_mm":
        return 2.0 * row["m"] * row["n"] * row["k"]
    return 2.0 * row["batch"] * row["m"] * row["n"] * row["k"]


def bytes_moved(row):
    """Compulsory bytes: A, B (a grouped row reads the experts that have rows) and the output."""
    m, n, k, batch = row["m"], row["n"], row["k"], row["batch"]
    item = 1 if row["dtype"] == "e4m3" else 2
    if row["op"] == "grouped_mm":
        read = sum(1 for r in row["group_rows"] if r > 0)
        return item * (m * k + read * k * n) + 2 * m * n
    return batch * (item * (m * k + k * n) + 2 * m * n)


class Flush:
    """L2 flush before each timed run: a write of 256 MiB (dirty lines left), or a kernel reading it (clean lines)."""

    def __init__(self, mode, device):
        self.mode = mode
        self.buf = torch.ones(_FLUSH_BYTES // 4, dtype=torch.float32, device=device)
        self.count = 0

    def __call__(self):
        if self.mode == "read":
            self.buf.sum()
        else:
            self.count += 1
            self.buf.fill_(float(self.count))


_WARMUP_RUNS = 5  # as tmagemm bench (tools/tmagemm/bench.cpp kWarmupRuns, kMaxRuns)
_MAX_RUNS = 2000


def time_pair(fns, flush, reps, min_ms):
    """Median ms of each of fns: warm-up runs of each, then rounds in which each runs once after the flush, timed with
    events around the call alone, the side that goes first rotating from round to round (as tmagemm bench: a side's
    place in the round weighs on its clock at the power cap); >= reps rounds and >= min_ms a side, at most 2000."""
    for _ in range(_WARMUP_RUNS):
        for fn in fns:
            fn()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    total = [0.0 for _ in fns]
    rounds = 0
    while rounds < _MAX_RUNS and (rounds < reps or min(total) < min_ms):
        for q in range(len(fns)):
            i = (q + rounds) % len(fns)
            flush()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fns[i]()
            end.record()
            end.synchronize()
            ms = start.elapsed_time(end)
            times[i].append(ms)
            total[i] += ms
        rounds += 1
    return [statistics.median(x) for x in times], rounds


def chosen(row, t):
    """The choice tmagemm's call runs now (tmagemm.explain on the same arguments)."""
    op, a, b = row["op"], t["a"], t["b"]
    try:
        if op == "mm":
            e = tmagemm.explain("mm", a, b)
        elif op == "bmm":
            e = tmagemm.explain("bmm", a, b)
        elif op == "grouped_mm":
            e = tmagemm.explain("grouped_mm", a, b, t["offs"])
        elif op == "addmm":
            e = tmagemm.explain("addmm", t["bias"], a, b, activation=_activation(row["epilogue"]))
        else:
            e = tmagemm.explain("scaled_mm", a, b, t["scale_a"], t["scale_b"], out_dtype=torch.bfloat16,
                                use_fast_accum=row["epilogue"].endswith("+fast"))
    except (tmagemm.Error, TypeError, ValueError):
        return ""
    return next((c.name for c in e.choices if c.selected), "")


def bench_row(row, flush, reps, min_ms):
    t = operands(row)
    ours, theirs = calls(row, t)
    ref = reference(row, t)
    out_dtype = torch.bfloat16 if row["op"] == "scaled_mm" else t["a"].dtype

    def poisoned():  # NaN everywhere: an element a side leaves unwritten fails the check
        if t["out"] is not None:
            return t["out"].fill_(math.nan)
        return torch.full(ref.shape, math.nan, dtype=out_dtype, device=ref.device)

    err_ours = rel_err(ours(poisoned()), ref)
    err_theirs = rel_err(theirs(poisoned()), ref)
    out = t["out"]
    (ms_ours, ms_theirs), runs = time_pair([lambda: ours(out), lambda: theirs(out)], flush, reps, min_ms)
    ok = math.isfinite(err_ours) and err_ours <= 2 * err_theirs + 1e-3
    # The fields of `tmagemm bench`'s rows, the baseline being torch's op (python -m tmagemm.plot reads both).
    result = {k: row[k] for k in ("op", "dtype", "layout", "batch", "note", "epilogue")}
    result.update(M=row["m"], N=row["n"], K=row["k"], tmagemm_ms=ms_ours, baseline_ms=ms_theirs,
                  tmagemm_tflops=flops(row) / ms_ours / 1e9, baseline_tflops=flops(row) / ms_theirs / 1e9,
                  ratio=ms_theirs / ms_ours, rel_err=err_ours, baseline_rel_err=err_theirs,
                  status="ok" if ok else "wrong result", choice=chosen(row, t), baseline=_TORCH_OPS[row["op"]](row),
                  runs=runs, l2_flush=flush.mode)
    if row["report_bandwidth"]:
        result.update(tmagemm_tbps=bytes_moved(row) / ms_ours / 1e9, baseline_tbps=bytes_moved(row) / ms_theirs / 1e9)
    if row["op"] == "grouped_mm":
        result["group_rows"] = row["group_rows"]
    return result


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tmagemm.bench", description=__doc__.splitlines()[0])
    p.add_argument("--suite", default="llm",
                   help=f"one of {', '.join(_C.suite_names())}, or shapes MxNxK[:layout],... (as tmagemm bench)")
    p.add_argument("--flush", choices=("write", "read"), default="write")
    p.add_argument("--reps", type=int, default=50, help="minimum timed runs a side")
    p.add_argument("--min-ms", type=float, default=100.0, help="minimum total time a side, ms")
    p.add_argument("--out", default="bench/results")
    args = p.parse_args(argv)
    try:
        rows = _C.bench_suite(args.suite)
    except ValueError as e:
        p.error(str(e))
    if not torch.cuda.is_available():
        print("tmagemm.bench: no CUDA device found; nothing to measure")
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    gpu = torch.cuda.get_device_name()
    flush = Flush(args.flush, "cuda")
    print(f"tmagemm {tmagemm.__version__} against torch {torch.__version__} on {gpu}, suite {args.suite}, "
          f"L2 flush: {args.flush}; ratio = torch time / tmagemm time")
    print(f"{'shape':<24}{'layout':<8}{'epilogue':<18}{'tmagemm':>9}{'torch':>9}{'ratio':>7}  {'err':>8} "
          f"{'torch err':>9}"
          "  choice (TFLOP/s; TB/s of the compulsory bytes where the suite reports them)")
    results = []
    for row in rows:
        if not row["implemented"]:
            continue
        shape = f"{row['batch']}x" if row["op"] in ("bmm", "grouped_mm") else ""
        shape += f"{row['m']}x{row['n']}x{row['k']}"
        try:
            r = bench_row(row, flush, args.reps, args.min_ms)
        except (tmagemm.Error, RuntimeError, ValueError) as e:  # a row torch or tmagemm refuses: reported, not fatal
            print(f"{shape:<24}{row['layout']:<8}{row['epilogue']:<18} error: {e}")
            results.append({"op": row["op"], "M": row["m"], "N": row["n"], "K": row["k"], "batch": row["batch"],
                            "layout": row["layout"], "epilogue": row["epilogue"], "tmagemm_tflops": None,
                            "baseline_tflops": None, "ratio": None, "baseline": _TORCH_OPS[row["op"]](row),
                            "status": "error", "error": str(e)})
            continue
        results.append(r)
        tbps = f"  {r['tmagemm_tbps']:.2f} / {r['baseline_tbps']:.2f} TB/s" if "tmagemm_tbps" in r else ""
        print(f"{shape:<24}{row['layout']:<8}{row['epilogue']:<18}{r['tmagemm_tflops']:>9.1f}"
              f"{r['baseline_tflops']:>9.1f}"
              f"{r['ratio']:>7.3f}  {r['rel_err']:>8.1e} {r['baseline_rel_err']:>9.1e}  {r['choice']}"
              f"{'' if r['status'] == 'ok' else '  ' + r['status']}{tbps}")
        torch.cuda.empty_cache()
    ok = [r["ratio"] for r in results if r.get("status") == "ok"]
    if ok:
        geo = math.exp(sum(math.log(x) for x in ok) / len(ok))
        print(f"geomean ratio tmagemm/torch ({args.suite}): {geo:.3f} over {len(ok)} of {len(results)} rows")
    name = slug(args.suite) if re.fullmatch(r"[a-z0-9]+", args.suite) else "custom"
    path = Path(args.out) / (f"{slug(gpu)}-{datetime.date.today().isoformat()}-{name}-torch"
                             f"{'-flush_read' if args.flush == 'read' else ''}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {path}")
    failed = [r for r in results if r.get("status") != "ok"]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
