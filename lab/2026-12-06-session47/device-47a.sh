#!/usr/bin/env bash
# device-47a.sh — the forty-seventh session's first call (~6 min). 1) Where the 64-row skinny grids lose their stream
# rate (lab/2026-12-06-session46/device-47a.sh: timelines at 16 and 64 rows, read flush), plus the 1x14336x4096 row
# (0.975 under the read flush, forty-sixth session) and the 32 MB rows (2.5 TB/s: fixed costs). 2) cuBLASLt's own
# configs on the decode rows under the read flush. 3) Whether cuBLASLt has configs faster than its heuristic's top 4
# on the waves and decode rows (lab/probes/cublaslt_algo_search.cu). With BMM=1, last, the bmm suite tuned on a fresh
# database (last measured on the H200 in the thirty-fourth session, before the stream-K cut).
# Carry [".carry/bin" (with the two probes built from lab/probes), ".carry/kcache.tgz"] (main's full kernel cache;
# traced kernels compile on the device).
out=$OUT
source scripts/device-lib.sh
use_carry
skinny_traces "16x4096x14336 skinny_256x64_st5_split4" "64x4096x14336 skinny_256x64_st5_split4" \
  "16x14336x4096 skinny_128x128_st4_split1" "64x14336x4096 skinny_128x128_st4_split1" \
  "16x4096x14336 skinny_128x64_st4_split2" "64x4096x14336 skinny_128x64_st4_split2" \
  "1x14336x4096 skinny_128x64_st4_split2_cast4" "1x4096x4096 skinny_256x64_st5_split4" \
  "16x4096x4096 skinny_64x64_st12_split2"
keep_logs
stage "cuBLASLt's picks on the decode rows, read flush"  # lab/probes/cublaslt_algo_config.cu (FLUSH=read)
FLUSH=read timeout 60 .carry/bin/cublaslt_algo_config 64x4096x14336 64x14336x4096 64x4096x4096 16x4096x14336 \
  1x14336x4096 > "$out/cublaslt-picks-read.txt" 2>&1; echo "rc=$?"; cat "$out/cublaslt-picks-read.txt"
keep_logs
stage "cuBLASLt configs beyond the heuristic's top 4: waves, write flush"  # lab/probes/cublaslt_algo_search.cu
PASS1_SECONDS=11 timeout 200 .carry/bin/cublaslt_algo_search 1000x1000x1000 1536x1536x1536 2560x2560x2560 \
  3000x5000x1000 1024x12288x4096 2304x2304x8192 6144x1536x4096 4224x4224x4224 > "$out/algo-search-waves.txt" 2>&1
echo "rc=$?"; grep -E "flush|pass 1|heuristic's best" "$out/algo-search-waves.txt" | awk '/flush/{print; n=0; next} n<4{print; n++}'
keep_logs
stage "cuBLASLt configs beyond the heuristic's top 4: decode, read flush"
FLUSH=read PASS1_SECONDS=11 timeout 100 .carry/bin/cublaslt_algo_search 64x4096x14336 64x14336x4096 64x4096x4096 \
  16x4096x14336 1x14336x4096 > "$out/algo-search-decode-read.txt" 2>&1
echo "rc=$?"; grep -E "flush|pass 1|heuristic's best" "$out/algo-search-decode-read.txt" | awk '/flush/{print; n=0; next} n<4{print; n++}'
keep_logs
[ -n "${BMM:-}" ] && { BENCH_LOG=autotune bench_suites bmm:120; keep_logs; }
stage done
