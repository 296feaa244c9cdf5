"""power_probe.py — energy per FLOP of one GEMM run back to back for a few seconds, with nvidia-smi sampling the SM
clock, power and throttle reasons every 100 ms. One process per implementation, so that each starts from the same
idle card: `python3 power_probe.py torch M N K` (torch.mm, i.e. cuBLAS) or `python3 power_probe.py tmagemm M N K`
(tmagemm.mm; TMAGEMM_CHOICE_REGEX forces a choice). Prints TFLOP/s over the measured window, the mean SM clock and
power of the samples inside it, the share of samples with the SW power cap reason, and pJ per FLOP.
Question it answers: at the 700 W cap, does one implementation spend less energy per FLOP (and so run a higher clock)?"""
import subprocess
import sys
import time

import torch

impl, M, N, K = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
warm_s, window_s = 1.0, 3.0
torch.manual_seed(0)
a = torch.randn(M, K, dtype=torch.bfloat16, device="cuda")
b = torch.randn(K, N, dtype=torch.bfloat16, device="cuda")
if impl == "torch":
    fn = lambda: torch.mm(a, b)  # noqa: E731
else:
    import tmagemm
    tmagemm.mm(a, b)  # tunes (or runs the forced choice) once, outside the window
    fn = lambda: tmagemm.mm(a, b)  # noqa: E731
torch.cuda.synchronize()

smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active",
                        "--format=csv,noheader,nounits", "-lms", "100"], stdout=subprocess.PIPE, text=True)
t_end = time.time() + warm_s
while time.time() < t_end:
    for _ in range(8):
        fn()
    torch.cuda.synchronize()
start_wall = time.time()
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
s.record()
n = 0
marks = [s]
while time.time() - start_wall < window_s:
    for _ in range(8):
        fn()
    n += 8
    marks.append(torch.cuda.Event(enable_timing=True))
    marks[-1].record()
    torch.cuda.synchronize()
e.record()
e.synchronize()
stop_wall = time.time()
smi.terminate()
lines = smi.communicate()[0].strip().splitlines()
ms = s.elapsed_time(e)
flops = 2.0 * M * N * K * n
clk, pw, capped = [], [], 0
for ln in lines:
    parts = [x.strip() for x in ln.split(",")]
    try:
        ts = time.mktime(time.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S")) + float("0." + parts[0].split(".")[1])
    except (ValueError, IndexError):
        continue
    if start_wall + 0.2 <= ts <= stop_wall - 0.1:
        clk.append(float(parts[1]))
        pw.append(float(parts[2]))
        capped += int(parts[3], 16) & 0x4 != 0
tf = flops / (ms * 1e-3) / 1e12
# Throughput by batch of 8 runs over the window: the first tenth (the card settling) against the second half.
per = [2.0 * M * N * K * 8 / (marks[i].elapsed_time(marks[i + 1]) * 1e-3) / 1e12 for i in range(len(marks) - 1)]
head, tail = per[: max(1, len(per) // 10)], per[len(per) // 2:]
settle = f"first tenth {sum(head) / len(head):6.1f}, second half {sum(tail) / len(tail):6.1f} TFLOP/s"
mean_pw = sum(pw) / max(len(pw), 1)
print(f"{impl:8s} {M}x{N}x{K} runs {n} {tf:7.1f} TFLOP/s  clock {sum(clk) / max(len(clk), 1):6.0f} MHz  "
      f"power {mean_pw:5.0f} W  capped {capped}/{len(clk)}  {mean_pw / (tf * 1e12) * 1e12:.3f} pJ/FLOP  ({settle})")
