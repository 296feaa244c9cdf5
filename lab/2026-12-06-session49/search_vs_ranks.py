"""search_vs_ranks.py — from a `tmagemm bench` log with TMAGEMM_LOG=autotune: for each AUTOTUNE table of an mm, the
fastest configuration of the cuBLASLt search and our fastest tile, each as cuBLASLt's fastest ranked pick's time over
theirs (> 1: faster than cuBLASLt's best of its ranks timed there). Usage: python3 search_vs_ranks.py LOG..."""
import re
import sys

for f in sys.argv[1:]:
    lines = open(f).read().split("\n")
    print("==", f)
    for i, line in enumerate(lines):
        m = re.match(r"AUTOTUNE mm\((\d+)x(\d+) (?:row|col), (\d+)x(\d+) (?:row|col)\)", line)
        if not m:
            continue
        M, K, _, N = m.groups()
        rows = []
        j = i + 1
        while j < len(lines) and lines[j].startswith("  "):
            t = re.match(r"\s+(\S+)\s+([\d.]+) ms", lines[j])
            if t:
                rows.append((t.group(1), float(t.group(2))))
            j += 1
        search = [r for r in rows if r[0].startswith("cublaslt_a") and not r[0].startswith("cublaslt_algo")]
        ranked = [r for r in rows if r[0].startswith("cublaslt_algo")]
        ours = [r for r in rows if not r[0].startswith("cublaslt")]
        if not (search and ranked):
            continue
        text = f"{M}x{N}x{K}: search {search[0][0]} {ranked[0][1] / search[0][1]:.3f} of {ranked[0][0]}"
        if ours:
            text += f"; ours {ours[0][0]} {ranked[0][1] / ours[0][1]:.3f}"
        print(text)
