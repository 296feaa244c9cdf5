# torch_misaligned.py — torch on the misaligned suite's six rows, on the same views the bench builds (bf16, rr):
# torch.mm (cuBLAS) and, where asked, torch.compile max-autotune (Inductor's pad_mm and Triton templates).
# L2 flushed by a 256 MiB write before each timed run, median of 50 runs (CUDA events), TFLOP/s.
# Usage: python3 torch_misaligned.py [--compile]
import statistics
import sys

import torch

torch.manual_seed(0)
dev = "cuda"
flush_buf = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=dev)


def view(rows, cols, ld, offset=0):
    buf = torch.randn(offset + (rows - 1) * ld + cols, dtype=torch.bfloat16, device=dev)
    return buf.as_strided((rows, cols), (ld, 1), offset)


def rows():
    # (note, a, b, out) as the bench's misaligned suite: K odd, N odd, A offset by one element, B ld N + 1, out ld N + 3,
    # M, N, K all odd.
    yield "K odd 4096x14336x4095", view(4096, 4095, 4095), view(4095, 14336, 14336), view(4096, 14336, 14336)
    yield "N odd 4096x4095x14336", view(4096, 14336, 14336), view(14336, 4095, 4095), view(4096, 4095, 4095)
    yield "A offset 4096x6144x4096", view(4096, 4096, 4104, 1), view(4096, 6144, 6144), view(4096, 6144, 6144)
    yield "B ld N+1 4096x14336x4096", view(4096, 4096, 4096), view(4096, 14336, 14337), view(4096, 14336, 14336)
    yield "out ld N+3 4096x14336x4096", view(4096, 4096, 4096), view(4096, 14336, 14336), view(4096, 14336, 14339)
    yield "M,N,K odd 4095x4097x4099", view(4095, 4099, 4099), view(4099, 4097, 4097), view(4095, 4097, 4097)


def timed(fn, reps=50):
    for _ in range(5):
        fn()
    ts = []
    for _ in range(reps):
        flush_buf.fill_(1.0)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts)


compiled = "--compile" in sys.argv
for note, a, b, out in rows():
    m, k = a.shape
    n = b.shape[1]
    flops = 2.0 * m * n * k
    ms = timed(lambda: torch.mm(a, b, out=out))
    line = f"{note:30s} torch.mm {flops / ms / 1e9:7.1f} TFLOP/s ({ms:.4f} ms)"
    if compiled:
        torch._dynamo.reset()
        f = torch.compile(lambda x, y: torch.mm(x, y), mode="max-autotune-no-cudagraphs")
        f(a, b)
        ms_c = timed(lambda: f(a, b))
        line += f"   compile max-autotune {flops / ms_c / 1e9:7.1f} TFLOP/s ({ms_c:.4f} ms)"
    print(line, flush=True)
