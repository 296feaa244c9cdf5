#!/usr/bin/env python3
"""compare-sass.py — compares the SASS of two builds' kernels by name: for each kernel listed in both key files
(`tmagemm compile-check --print-keys` output: "<cache key> <name>" lines) it disassembles <dir>/kernels/<key>.cubin
of each side with nvdisasm and compares the instructions (addresses and comments dropped). Prints the kernels whose
SASS differs, with their instruction counts and the number of differing instruction lines.

Usage: lab/compare-sass.py BEFORE_DIR BEFORE_KEYS AFTER_DIR AFTER_KEYS [NAME_REGEX]
(needs nvdisasm on PATH or in $NVDISASM)."""
import concurrent.futures as cf
import difflib
import importlib.util
import os
import re
import subprocess
import sys
import tempfile

# The kernel-cache record reader and nvdisasm path of scripts/check-skinny-reduction.py.
_spec = importlib.util.spec_from_file_location(
    "check_skinny_reduction", os.path.join(os.path.dirname(__file__), "..", "scripts", "check-skinny-reduction.py"))
_skinny = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_skinny)
cubin_image, NVDISASM = _skinny.cubin_image, _skinny.NVDISASM


def sass(path):
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin_image(path))
        f.flush()
        out = subprocess.run([NVDISASM, "-c", f.name], capture_output=True, text=True, check=True).stdout
    lines = []
    for l in out.splitlines():
        if re.match(r"\s*/\*[0-9a-f]{4,}\*/", l):
            l = l.split("*/", 1)[1].split("/*")[0].strip().rstrip(" ;")
            l = re.sub(r"0x[0-9a-f]+", "X", l) if "BRA" in l or "CALL" in l else l
            lines.append(l)
    return lines


def keys(path):
    return dict(reversed(l.split(None, 1)) for l in (x.strip() for x in open(path)) if l)


def main():
    before_dir, before_keys, after_dir, after_keys = sys.argv[1:5]
    rx = re.compile(sys.argv[5]) if len(sys.argv) > 5 else None
    kb, ka = keys(before_keys), keys(after_keys)
    names = sorted(n for n in kb if n in ka and (rx is None or rx.search(n)))

    def one(n):
        b = sass(os.path.join(before_dir, "kernels", kb[n] + ".cubin"))
        a = sass(os.path.join(after_dir, "kernels", ka[n] + ".cubin"))
        if a == b:
            return n, None
        diff = sum(1 for d in difflib.ndiff(b, a) if d[:1] in "+-")
        return n, (len(b), len(a), diff)

    same = 0
    with cf.ThreadPoolExecutor(os.cpu_count()) as ex:
        for n, d in ex.map(one, names):
            if d is None:
                same += 1
            else:
                print(f"DIFFERS {n}: {d[0]} -> {d[1]} instructions, {d[2]} lines differ")
    print(f"{same} of {len(names)} kernels have identical SASS")


if __name__ == "__main__":
    main()
