"""torch_addmm_gap.py — is device-50e's 3-4 % deficit of tmagemm.addmm against torch.addmm (same nvjet kernel on
4096x14336x4096, torch_addmm_kernels.py) in the kernel or in the event window? Each call timed after the bench's
256 MiB write flush, interleaved, 60 runs, (a) as python -m tmagemm.bench times it and (b) with a 200 us
torch.cuda._sleep enqueued before the flush, so that the host's enqueue of the call can never leave the GPU idle
inside the window. Also the host time of each call (perf_counter around it, GPU busy)."""
import statistics
import time

import torch
import tmagemm

flush = torch.ones(64 << 20, device="cuda")
cycles = int(200e-6 * torch.cuda.get_device_properties(0).clock_rate * 1e3)
for m, n, k in [(4096, 14336, 4096), (8192, 8192, 8192), (16, 4096, 4096)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    tmagemm.addmm(bias, a, b)
    tmagemm.mm(a, b)
    torch.cuda.synchronize()
    sides = (("torch.addmm", lambda: torch.addmm(bias, a, b)), ("tmagemm.addmm", lambda: tmagemm.addmm(bias, a, b)),
             ("torch.mm", lambda: torch.mm(a, b)), ("tmagemm.mm", lambda: tmagemm.mm(a, b)))
    for guard in (False, True):
        ts = {name: [] for name, _ in sides}
        host = {name: [] for name, _ in sides}
        for _ in range(60):
            for name, fn in sides:
                if guard:
                    torch.cuda._sleep(cycles)
                flush.fill_(1.0)
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                h0 = time.perf_counter()
                fn()
                host[name].append((time.perf_counter() - h0) * 1e6)
                e.record()
                e.synchronize()
                ts[name].append(s.elapsed_time(e))
        print(f"{m}x{n}x{k} {'sleep guard' if guard else 'no guard   '}: " +
              ", ".join(f"{k} {statistics.median(v) * 1e3:.1f} us (host {statistics.median(host[k]):.0f})"
                        for k, v in ts.items()))
