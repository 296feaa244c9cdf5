"""power-drift.py — how a GEMM's time drifts under sustained load on this GPU (cuBLAS through PyTorch).

Runs M x N x K bf16 matmuls back to back (L2 flushed before each, as tmagemm's tuner and bench do) after an idle
pause, and prints the median time of each 25 ms window of wall time. Usage: python3 power-drift.py [M N K] [seconds]
"""
import sys
import time

import torch

m, n, k = (int(x) for x in sys.argv[1:4]) if len(sys.argv) >= 4 else (4096, 4096, 14336)
seconds = float(sys.argv[4]) if len(sys.argv) >= 5 else 1.5
a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).t()
flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
for _ in range(3):
    torch.mm(a, b)
torch.cuda.synchronize()
time.sleep(2.0)  # idle: let the card fall back to its resting state
start_ev, stop_ev = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
t0 = time.perf_counter()
window, windows = [], []
w_start = 0.0
while True:
    now = time.perf_counter() - t0
    if now > seconds:
        break
    flush.fill_(len(windows) & 0xFF)
    start_ev.record()
    torch.mm(a, b)
    stop_ev.record()
    stop_ev.synchronize()
    window.append(start_ev.elapsed_time(stop_ev))
    if now - w_start >= 0.025:
        window.sort()
        windows.append((w_start, len(window), window[len(window) // 2]))
        window, w_start = [], now
print(f"{m}x{n}x{k} bf16, L2 flushed before each run; windows of 25 ms: start (ms), runs, median (ms)")
for s, count, med in windows:
    print(f"{s * 1000:7.0f} {count:4d} {med:.4f}")
