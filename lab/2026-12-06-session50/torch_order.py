"""torch_order.py — does the interleaving of python -m tmagemm.bench as first written (one side always first, no warm-up)
favour one side? Its time_pair of then (below) and Flush
on 4096x14336x4096 and 8192^3 addmm (bias) and 8192^3 mm, each pair timed in both orders and as an A/A pair (the same
call twice), 400 runs each: device-50e and its rerun read tmagemm.addmm 3-4 % behind torch.addmm on those rows while a
four-way interleave (torch_addmm_gap.py) read them level on the same kernel."""
import statistics

import torch
import tmagemm
from tmagemm import bench


def time_pair_fixed_order(fns, flush, reps):
    """The first version's loop: each round in the same order, no warm-up."""
    times = [[] for _ in fns]
    for _ in range(reps):
        for i, fn in enumerate(fns):
            flush()
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times[i].append(s.elapsed_time(e))
    return [statistics.median(x) for x in times], reps


flush = bench.Flush("write", "cuda")
for m, n, k, op in [(4096, 14336, 4096, "addmm"), (8192, 8192, 8192, "addmm"), (8192, 8192, 8192, "mm")]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    if op == "addmm":
        ours, theirs = (lambda: tmagemm.addmm(bias, a, b)), (lambda: torch.addmm(bias, a, b))
    else:
        ours, theirs = (lambda: tmagemm.mm(a, b)), (lambda: torch.mm(a, b))
    ours()
    torch.cuda.synchronize()
    for label, pair in (("ours, torch", [ours, theirs]), ("torch, ours", [theirs, ours]), ("ours, ours", [ours, ours]),
                        ("torch, torch", [theirs, theirs]), ("ours, torch", [ours, theirs])):
        for how, timer in (("fixed", lambda p: time_pair_fixed_order(p, flush, 300)),
                           ("rotating", lambda p: bench.time_pair(p, flush, 300, 0))):
            (t0, t1), runs = timer(pair)
            print(f"{op} {m}x{n}x{k} {how:<8} {label:<13}: {t0 * 1e3:7.1f} {t1 * 1e3:7.1f} us  (second / first {t1 / t0:.3f}, {runs} runs)")
