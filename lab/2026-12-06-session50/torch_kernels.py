"""torch_kernels.py — which kernel torch.mm runs against the one tmagemm's tuned call runs, on the decode rows where
the same-run comparison (python -m tmagemm.bench, H100) had torch ahead under the read flush (64x4096x4096 0.951) or
behind (write flush 1.04): torch.profiler's CUDA kernel names and times, each call after a 256 MiB read flush."""
import torch
import tmagemm
from torch.profiler import ProfilerActivity, profile

flush = torch.ones(64 << 20, device="cuda")
for m, n, k in [(64, 4096, 4096), (16, 4096, 4096), (64, 14336, 4096), (1, 28672, 8192), (128, 8192, 8192)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    tmagemm.mm(a, b)  # tunes
    torch.cuda.synchronize()
    for name, fn in (("torch.mm", lambda: torch.mm(a, b)), ("tmagemm.mm", lambda: tmagemm.mm(a, b))):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(20):
                flush.sum()
                fn()
            torch.cuda.synchronize()
        rows = [e for e in prof.key_averages() if "reduce" not in e.key.lower() and "sum" not in e.key.lower()]
        for e in rows:
            print(f"{m}x{n}x{k} {name:<11} {e.count:>3} x {e.device_time / 1:.1f} us  {e.key[:150]}")
