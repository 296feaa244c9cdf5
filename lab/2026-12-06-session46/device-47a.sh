#!/usr/bin/env bash
# device-47a.sh — for the next session's first call: where the 64-row skinny grids lose their stream rate. With the
# same config, 64x4096x14336 streams at 3.33 TB/s and 16x4096x14336 at 3.70 under the read flush (H200): ~3.7 us, of
# which the reduction (64 KB a CTA through the cluster window against 16 KB) explains ~1.5 (perf-notes "Forty-sixth
# session"). Timelines (TMAGEMM_TRACE, read flush) of two configs at 16 and 64 rows each: compare first_full ->
# last_full (the stream) and mma_done -> stored (the tail). Carry [".carry/bin", ".carry/kcache.tgz"] (main's; traced
# kernels compile on the device). ~2 min.
out=$OUT
source scripts/device-lib.sh
use_carry
skinny_traces "16x4096x14336 skinny_256x64_st5_split4" "64x4096x14336 skinny_256x64_st5_split4" \
  "16x14336x4096 skinny_128x128_st4_split1" "64x14336x4096 skinny_128x128_st4_split1" \
  "16x4096x14336 skinny_128x64_st4_split2" "64x4096x14336 skinny_128x64_st4_split2"
keep_logs
stage done
