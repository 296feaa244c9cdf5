"""torch_rows.py — torch (cuBLAS) on the rows the thirty-fourth session's tuner changes moved: mm 4224^3 (waves) and
bmm 64x2048x128x2048, bf16, L2 flushed by a 256 MiB write before each run as `tmagemm bench` does; median of 50.
Prints ms and TFLOP/s, to set beside the bench JSON's tmagemm figures (another process)."""
import torch

flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")


def timed(fn, runs=50):
    ts = []
    for _ in range(5):
        fn()
    for _ in range(runs):
        flush.fill_(1)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        ts.append(s.elapsed_time(e))
    return sorted(ts)[len(ts) // 2]


torch.manual_seed(0)
a = torch.randn(4224, 4224, dtype=torch.bfloat16, device="cuda")
b = torch.randn(4224, 4224, dtype=torch.bfloat16, device="cuda")
ms = timed(lambda: torch.mm(a, b))
print(f"torch.mm 4224^3: {ms:.4f} ms, {2 * 4224**3 / ms / 1e9:.1f} TFLOP/s")
a = torch.randn(64, 2048, 2048, dtype=torch.bfloat16, device="cuda")
b = torch.randn(64, 2048, 128, dtype=torch.bfloat16, device="cuda")
ms = timed(lambda: torch.bmm(a, b))
print(f"torch.bmm 64x2048x128x2048: {ms:.4f} ms, {2 * 64 * 2048 * 128 * 2048 / ms / 1e9:.1f} TFLOP/s")
