"""hbm_ceiling.py — what the H200 moves for the bmm suite's memory-bound rows, timed like `tmagemm bench` (the L2
flushed by a 256 MiB memset (write) or read before each run, CUDA events around the run alone): a write of 67 MB
(128 x 512 x 512 bf16, the output of bmm 128x512x512x64), a copy of it, reads of 537 MB and 2.15 GB (A of 64x2048x128x2048
and B of 16x128x8192x8192; a sum streams them), and torch.bmm on the three rows. Prints ms and TB/s (median of 50)."""
import torch

dev = "cuda"
flush_buf = torch.empty(256 * 2**20, dtype=torch.uint8, device=dev)


def flush(kind):
    if kind == "write":
        flush_buf.zero_()
    else:
        flush_buf.view(torch.int32).sum()


def timed(fn, kind, reps=50):
    ts = []
    for _ in range(5):
        fn()
    for _ in range(reps):
        flush(kind)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


out = torch.empty(128, 512, 512, dtype=torch.bfloat16, device=dev)
src = torch.randn_like(out)
a64 = torch.randn(64, 2048, 2048, dtype=torch.bfloat16, device=dev)
b16 = torch.randn(16, 8192, 8192, dtype=torch.bfloat16, device=dev)
rows = {
    "128x512x512x64": (torch.randn(128, 512, 64, dtype=torch.bfloat16, device=dev),
                       torch.randn(128, 64, 512, dtype=torch.bfloat16, device=dev)),
    "64x2048x128x2048": (a64, torch.randn(64, 2048, 128, dtype=torch.bfloat16, device=dev)),
    "16x128x8192x8192": (torch.randn(16, 128, 8192, dtype=torch.bfloat16, device=dev), b16),
}
for kind in ("write", "read"):
    print(f"== {kind} flush")
    n = out.numel() * 2
    t = timed(lambda: out.zero_(), kind)
    print(f"write 67 MB          {t:.4f} ms {n / t / 1e9:.2f} TB/s")
    t = timed(lambda: out.copy_(src), kind)
    print(f"copy 67 MB           {t:.4f} ms {2 * n / t / 1e9:.2f} TB/s (read + write)")
    for name, x in (("read 537 MB", a64), ("read 2.15 GB", b16)):
        t = timed(lambda: x.sum(dtype=torch.float32), kind, reps=20)
        print(f"{name:20s} {t:.4f} ms {x.numel() * 2 / t / 1e9:.2f} TB/s")
    for name, (a, b) in rows.items():
        o = torch.empty(a.shape[0], a.shape[1], b.shape[2], dtype=torch.bfloat16, device=dev)
        t = timed(lambda: torch.bmm(a, b, out=o), kind, reps=20)
        byts = (a.numel() + b.numel() + o.numel()) * 2
        print(f"bmm {name:16s} {t:.4f} ms {byts / t / 1e9:.2f} TB/s")
