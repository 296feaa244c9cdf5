#!/usr/bin/env python3
"""check-skinny-reduction.py — checks, in the SASS of every skinny kernel in a kernel cache, the fact that the skinny
kernel's last (relaxed) cluster arrival rests on: between the barrier that opens the DSMEM reduction and the last
arrival, every remote load (LD.E.128) has all four of its registers summed by an FADD, under the load's own
predicate, before any branch or cluster barrier. Then no load of a peer's shared memory is in flight when a thread
arrives, and the peer may exit. Run it after any change to kernels/gemm_skinny.cuh. A `BRA.DIV` is not counted as a
branch: it is the divergence path of a __syncwarp (WARPSYNC.COLLECTIVE), which branches back to the instruction after
its NOP, so the FADDs that follow run on both paths.

Usage: scripts/check-skinny-reduction.py [CACHE_DIR]   (default .kcache; needs nvdisasm on PATH or in $NVDISASM,
e.g. from NVIDIA's nvidia-cuda-nvdisasm wheel). Exits 1 when a load is not summed in time, 2 on no skinny kernels."""
import concurrent.futures as cf
import glob
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

NVDISASM = os.environ.get("NVDISASM") or shutil.which("nvdisasm") or "nvdisasm"


def cubin_image(path):
    """The cubin inside a kernel-cache record (src/jit/cache.cpp: magic, name length, name, size, image, checksum)."""
    data = open(path, "rb").read()
    name_len = struct.unpack("<I", data[8:12])[0]
    off = 12 + name_len
    size = struct.unpack("<Q", data[off:off + 8])[0]
    return data[off + 8:off + 8 + size]


def instructions(image):
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(image)
        f.flush()
        sass = subprocess.run([NVDISASM, "-c", f.name], capture_output=True, text=True, check=True).stdout
    return [l.split("*/", 1)[1].strip().rstrip(" ;") for l in sass.splitlines()
            if re.match(r"\s*/\*[0-9a-f]{4,}\*/", l)]


def check(path):
    data = open(path, "rb").read()
    if b"gemm_skinny" not in data:
        return None
    ins = instructions(cubin_image(path))
    # The reduction: from the cluster wait before the first remote load to the first arrival after the last one (split
    # 1 reads its own tile with local loads after a CTA barrier, and the kernel's other cluster barriers lie elsewhere).
    remote = [i for i, x in enumerate(ins) if re.match(r"(@!?P\d+ )?LD\.E\.128 ", x)]
    if not remote:
        return os.path.basename(path), 0, 1  # no reduction found: the kernel's layout changed, the check must too
    start = max(i for i, x in enumerate(ins[:remote[0]]) if x.startswith("UCGABAR_WAIT"))
    end = min(i for i in range(remote[-1], len(ins)) if ins[i].startswith("UCGABAR_ARV"))
    loads = late = 0
    for i in range(start, end):
        m = re.match(r"(@!?P\d+ )?LD\.E\.128 R(\d+), ", ins[i])
        if not m:
            continue
        loads += 1
        pred = (m.group(1) or "").strip()
        regs = {f"R{int(m.group(2)) + k}" for k in range(4)}
        summed = set()
        for x in ins[i + 1:end]:
            if re.match(r"(@!?P\d+ )?(BRA|UCGABAR|EXIT)", x) and not x.startswith("BRA.DIV"):
                break
            body = x[len(pred):].strip() if pred and x.startswith(pred) else (x if not pred else "")
            if body.startswith("FADD"):
                summed |= {o.strip() for o in body[4:].split(",")[1:]} & regs
        late += summed != regs
    return os.path.basename(path), loads, late


def main():
    cache = sys.argv[1] if len(sys.argv) > 1 else ".kcache"
    files = glob.glob(os.path.join(cache, "kernels", "*.cubin"))
    with cf.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        results = [r for r in ex.map(check, files) if r]
    if not results:
        print(f"no skinny kernels in {cache}")
        return 2
    bad = [r for r in results if r[2]]
    print(f"{len(results)} skinny kernels, {sum(r[1] for r in results)} remote loads, "
          f"{sum(r[2] for r in results)} not summed before a branch or barrier")
    for name, loads, late in bad:
        print(f"  {name}: {late} of {loads}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
