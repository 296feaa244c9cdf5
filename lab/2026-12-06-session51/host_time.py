"""host_time.py — the host time of one eager call (perf_counter around it, median of 400 calls after warm-up) of
torch.mm / tmagemm.mm and torch.addmm / tmagemm.addmm on a small shape (the GPU kept busy by torch.cuda._sleep ahead
of each batch, so the call never waits for it): tmagemm.addmm's short path (out None) against its general one
(out given), and weights as nn.Parameter under torch.no_grad(). Run with the package on PYTHONPATH."""
import statistics
import time

import torch

import tmagemm


def host_us(fn, calls=400, batches=5):
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(batches):
        torch.cuda._sleep(40_000_000)  # ~20 ms of GPU time: the calls below only enqueue
        for _ in range(calls // batches):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


def main():
    g = torch.Generator(device="cpu").manual_seed(1)
    m, n, k = 256, 256, 256
    a = torch.randn(m, k, generator=g).cuda().bfloat16()
    b = torch.randn(k, n, generator=g).cuda().bfloat16()
    bias = torch.randn(n, generator=g).cuda().bfloat16()
    out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    wb, wbias = torch.nn.Parameter(b.clone()), torch.nn.Parameter(bias.clone())
    sides = {
        "torch.mm": lambda: torch.mm(a, b),
        "tmagemm.mm": lambda: tmagemm.mm(a, b),
        "torch.addmm": lambda: torch.addmm(bias, a, b),
        "tmagemm.addmm": lambda: tmagemm.addmm(bias, a, b),
        "tmagemm.addmm out=": lambda: tmagemm.addmm(bias, a, b, out=out),
        "torch._addmm_activation relu": lambda: torch._addmm_activation(bias, a, b),
        "tmagemm.addmm relu": lambda: tmagemm.addmm(bias, a, b, activation="relu"),
    }
    for name, fn in sides.items():
        print(f"{name:32s} {host_us(fn):6.1f} us")
    with torch.no_grad():
        print(f"{'no_grad torch.addmm Parameter':32s} {host_us(lambda: torch.addmm(wbias, a, wb)):6.1f} us")
        print(f"{'no_grad tmagemm.addmm Parameter':32s} {host_us(lambda: tmagemm.addmm(wbias, a, wb)):6.1f} us")
        print(f"{'no_grad tmagemm.mm Parameter':32s} {host_us(lambda: tmagemm.mm(a, wb)):6.1f} us")


if __name__ == "__main__":
    main()
