"""torch_addmm_kernels.py — which kernel torch.addmm (bias (N), bf16) runs against tmagemm's tuned addmm, on the rows
where the same-run comparison (device-50e, H100) had torch ahead by 3-4 % (4096x14336x4096 rr 0.962 with
cublaslt_algo0 on our side, 8192^3 0.963, 8192x28672x8192 rc 0.969): torch.profiler's CUDA kernels, each call after a
256 MiB write (the bench's flush), and the medians of 30 event-timed calls of each, interleaved."""
import statistics

import torch
import tmagemm
from torch.profiler import ProfilerActivity, profile

flush = torch.ones(64 << 20, device="cuda")
for m, n, k, lay in [(4096, 14336, 4096, "rr"), (8192, 8192, 8192, "rr"), (8192, 28672, 8192, "rc")]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16) if lay == "rr" else \
        torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
    bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    tmagemm.addmm(bias, a, b)  # tunes
    torch.cuda.synchronize()
    sides = (("torch.addmm", lambda: torch.addmm(bias, a, b)), ("tmagemm.addmm", lambda: tmagemm.addmm(bias, a, b)),
             ("torch.mm", lambda: torch.mm(a, b)))
    for name, fn in sides:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                flush.fill_(1.0)
                fn()
            torch.cuda.synchronize()
        for e in prof.key_averages():
            if e.device_time > 20:
                print(f"{m}x{n}x{k} {lay} {name:<14} {e.count:>3} x {e.device_time:.1f} us  {e.key[:140]}")
    ts = {name: [] for name, _ in sides}
    for _ in range(30):
        for name, fn in sides:
            flush.fill_(1.0)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record(); fn(); e.record(); e.synchronize()
            ts[name].append(s.elapsed_time(e))
    print(f"{m}x{n}x{k} {lay} medians (ms): " + ", ".join(f"{k} {statistics.median(v):.4f}" for k, v in ts.items()))
