#!/usr/bin/env bash
# device-pyprobe.sh — what the device's python3 offers for building the extension here (headers, ABI tag), and
# torch.mm's own host time on 256^3 (the baseline of issue 19's overhead target). Writes to $OUT.
set -u
python3 - <<'PY' 2>&1 | tee "$OUT/probe.txt"
import sys, sysconfig, time, os
print("python", sys.version)
print("include", sysconfig.get_paths()["include"])
print("platinclude", sysconfig.get_paths()["platinclude"])
print("EXT_SUFFIX", sysconfig.get_config_var("EXT_SUFFIX"))
print("Python.h exists", os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))
import torch
print("torch", torch.__version__, torch.version.cuda, torch.cuda.get_device_name())
print("raw stream fn", hasattr(torch._C, "_cuda_getCurrentRawStream"))
a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16); b = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
for _ in range(1000): torch.mm(a, b)
torch.cuda.synchronize()
for trial in range(3):
    n = 20000; t0 = time.perf_counter()
    for _ in range(n): torch.mm(a, b)
    t1 = time.perf_counter(); torch.cuda.synchronize()
    print(f"torch.mm 256^3 host us/call {(t1-t0)/n*1e6:.2f}")
    t0 = time.perf_counter()
    for _ in range(n): torch.empty((256, 256), dtype=torch.bfloat16, device=a.device)
    print(f"torch.empty us/call {(time.perf_counter()-t0)/n*1e6:.2f}")
    t0 = time.perf_counter()
    for _ in range(n): torch._C._cuda_getCurrentRawStream(0)
    print(f"raw stream us/call {(time.perf_counter()-t0)/n*1e6:.2f}")
    t0 = time.perf_counter()
    for _ in range(n): (a.data_ptr(), a.shape, a.stride(), a.dtype)
    print(f"4 attrs us/call {(time.perf_counter()-t0)/n*1e6:.2f}")
PY
inc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
tar -C "$(dirname "$inc")" -czf "$OUT/pyinclude.tgz" "$(basename "$inc")" && ls -la "$OUT"
nproc; ls /usr/include | grep -iE "fmt|nlohmann|dlpack|sqlite|xxhash|CLI" ; python3 -m nanobind --version 2>&1; python3 -m pip show scikit-build-core nanobind 2>&1 | grep -E "Name|Version"
