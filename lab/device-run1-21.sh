#!/usr/bin/env bash
# device-run1-21.sh — twenty-first session, run 1 (branch pdl's binaries in .carry/bin): is GraphCaptureThreads'
# one failure (cudaErrorStreamCaptureInvalidated, run 4 of the twentieth session) PDL's or the tuning path's? The test
# repeated alone with TMAGEMM_PDL=1 / 0 and with eager module loading, then in run 4's sequence; then decode back to
# back under the write flush with and without PDL. Logs to $OUT/all.tgz.
set -u
out=/tmp/o
rm -rf /tmp/o
source scripts/device-lib.sh
use_carry
for v in pdl1 pdl0 eager seq; do
  stage "capture test $v"
  case $v in
    pdl1) env TMAGEMM_PDL=1 timeout 120 build/tests/tmagemm_gpu_tests --gtest_filter='GraphCaptureThreads.*' --gtest_repeat=12 ;;
    pdl0) env TMAGEMM_PDL=0 timeout 120 build/tests/tmagemm_gpu_tests --gtest_filter='GraphCaptureThreads.*' --gtest_repeat=12 ;;
    eager) env CUDA_MODULE_LOADING=EAGER timeout 120 build/tests/tmagemm_gpu_tests --gtest_filter='GraphCaptureThreads.*' --gtest_repeat=6 ;;
    seq) timeout 200 build/tests/tmagemm_gpu_tests --gtest_filter='Pdl.*:StreamK*:Addmm.StreamK*:GraphCapture*' ;;
  esac > "$out/capture-$v.txt" 2>&1
  echo "rc=$?"; grep -cE "^\[       OK \] GraphCaptureThreads" "$out/capture-$v.txt"; grep -E "^\[  FAILED  \] GraphCapture|Which is: 9" "$out/capture-$v.txt" | sort | uniq -c
done
for mode in b2b b2b-nopdl; do
  stage "decode, write flush, $mode"
  mkdir -p "$out/$mode"
  env $([ "$mode" = b2b-nopdl ] && echo TMAGEMM_PDL=0) TMAGEMM_LOG=autotune timeout 200 build/tmagemm bench --suite decode \
    --flush write --back-to-back --out "$out/$mode" > "$out/$mode/bench-decode.txt" 2>&1
  echo "rc=$?"; rows < "$out/$mode/bench-decode.txt"
done
stage done
tar -C /tmp -czf "$OUT/all.tgz" o
