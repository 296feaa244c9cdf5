"""A first timing of tmagemm.grouped_mm against torch._grouped_mm and a loop of torch.mm on the MoE shapes of issue 20
(not the bench suite: CUDA events around 20 runs after warm-up, no L2 flush). Prints TFLOP/s per row."""
import torch

import tmagemm


def sizes_of(groups, total, seed):
    g = torch.Generator().manual_seed(seed)
    w = torch.rand(groups, generator=g) + 0.1
    s = (w / w.sum() * total).floor().to(torch.int64)
    s[-1] += total - s.sum()
    return s


def timed(fn, reps=20):
    for _ in range(3):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / reps


for groups, total, n, k in [(8, 4096, 14336, 4096), (64, 32768, 2048, 7168), (8, 32768, 4096, 14336),
                            (64, 4096, 2048, 7168), (64, 512, 2048, 7168)]:
    a = torch.randn(total, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(groups, n, k, device="cuda", dtype=torch.bfloat16).transpose(-2, -1)
    sizes = sizes_of(groups, total, 7)
    offs = sizes.cumsum(0).to(torch.int32).cuda()
    flops = 2.0 * total * n * k
    tmagemm.tune("grouped_mm", a, b, offs)
    ours = timed(lambda: tmagemm.grouped_mm(a, b, offs))
    theirs = timed(lambda: torch._grouped_mm(a, b, offs, out_dtype=torch.bfloat16))
    ends = offs.tolist()

    def loop():
        s = 0
        for g, e in enumerate(ends):
            if e > s:
                torch.mm(a[s:e], b[g])
            s = e
    looped = timed(loop)
    err = (tmagemm.grouped_mm(a, b, offs).double() - torch._grouped_mm(a, b, offs, out_dtype=torch.bfloat16).double()
           ).norm() / torch._grouped_mm(a, b, offs, out_dtype=torch.bfloat16).double().norm()
    print(f"G={groups} total_M={total} N={n} K={k}: tmagemm {flops / ours / 1e9:.0f} TFLOP/s, torch._grouped_mm "
          f"{flops / theirs / 1e9:.0f}, loop of torch.mm {flops / looped / 1e9:.0f}; tmagemm/_grouped_mm "
          f"{theirs / ours:.3f}; rel diff {err:.1e}", flush=True)
