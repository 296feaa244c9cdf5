#!/usr/bin/env bash
# device-36.sh — the device calls the thirty-sixth session prepared (no device was lent in that session). Build here,
# `tmagemm compile-check` into .kcache, tar it (.carry/kcache.tgz), copy build/tmagemm and build/tests/tmagemm_gpu_tests
# into .carry/bin; for PART=2's pytest also the cp312 extension (lab/build-ext-cp312.sh) in .carry/py312. Carry
# [".carry/bin", ".carry/kcache.tgz", ".carry/py312"]. Each part fits one call (600 s); in order of need:
#   PART=1: stream-K over grouped_mm's tiles (TMAGEMM_GROUPED_STREAM_K=1, set by the tests themselves): GroupedMm.*
#           (StreamKSharesOutThePartialWave, StreamKWorstSplitInAWorkspaceOfExactlyItsSize, StreamKGivesTheSameBitsTwice,
#           StreamKGraphReplayWithRoutingsOfOtherTileCounts among them) and StreamK.* (mm's stream-K, whose fixup now
#           takes its segment stride as an argument), then memcheck of the grouped stream-K tests.
#   PART=2: what the thirty-fifth session left unrun: PadTma.* (the out-misaligned rule of cuBLASLt on the copies,
#           CuBlasLtOnTheCopiesInACapturedGraph) and the graph-capture tests of every backend, memcheck of the pad path's
#           captured graph; the Python grouped tests against torch._grouped_mm (their autograd formula among them) and
#           addmm's autograd against torch's, where the extension is carried (built here from PART=1's headers).
#   PART=3: the grouped suite forced to each grouped stream-K config and to the whole-tile configs that win its rows
#           (128x192 on 8x4096x4096x14336, 128x256 2x1 elsewhere), each row's baseline in the same run.
#   PART=4: the grouped suite tuned with grouped stream-K on, then off (a fresh tuning database each; AUTOTUNE logs),
#           then the misaligned suite tuned (the thirty-fifth session's PART=2); the JSON tarred.
#   PART=5: (thirty-seventh session) stream-K without the counter memset (TMAGEMM_STREAM_K_CLEAN_COUNTERS=1; its tests
#           StreamK.CleanCounters* and ThreadsSharingAStreamWithCleanCounters run in PART=1's StreamK.*): the waves
#           suite forced to each stream-K config with the switch on, then off, then tuned with it on (fresh database).
set -u
out=$OUT
source scripts/device-lib.sh
use_carry
sk="persistent_tma_128x256x64_s4_c2_g8_tmastore_sk persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore_sk"
sk="$sk persistent_tma_128x128x64_s6_c2_g8_tmastore_sk"
case "${PART:-1}" in
1)
  gpu_tests "GroupedMm.*:StreamK.*" 330
  memcheck_tests "GroupedMm.StreamKWorstSplit*:GroupedMm.StreamKGivesTheSameBitsTwice:GroupedMm.StreamKGraphReplay*" 220
  # CPython 3.12's headers, for lab/build-ext-cp312.sh here (PY312_INCLUDE=<untarred>/usr/include/python3.12,
  # PYCONFIG=<untarred>/usr/include/x86_64-linux-gnu/python3.12/pyconfig.h): PART=2's pytest needs the extension.
  tar czf "$out/py312-include.tgz" -C / usr/include/python3.12 usr/include/x86_64-linux-gnu/python3.12 2>&1 | tail -2
  ;;
2)
  gpu_tests "PadTma.*:EveryBackend/GraphCapture.*" 300
  memcheck_tests "PadTma.CuBlasLtOnTheCopies*" 120
  if [ -d .carry/py312 ]; then
    stage "pytest"
    PYTHONPATH=$PWD/.carry/py312 timeout 150 python3 -m pytest -q -rs -p no:cacheprovider tests/python/test_grouped.py \
      "tests/python/test_ops.py::test_addmm_autograd_against_torch" tests/python/test_library.py > "$out/pytest.txt" 2>&1
    echo "rc=$?"; grep -E "passed|failed|error|FAILED|ERROR" "$out/pytest.txt" | tail -15
  fi
  ;;
3)
  stage "forced"
  # shellcheck disable=SC2086
  TMAGEMM_GROUPED_STREAM_K=1 lab/bench-forced.sh grouped $sk persistent_tma_128x192x64_s4_c2_g8_tmastore \
    persistent_tma_128x256x64_s4_c2_g8_cm2_tmastore 2>&1 | tee "$out/forced.txt"
  ;;
4)
  mkdir -p "$out/sk" "$out/nosk"
  out=$out/sk TMAGEMM_GROUPED_STREAM_K=1 BENCH_LOG=autotune bench_suites grouped:200
  fresh_db /tmp/kc/kernels; out=$out/nosk BENCH_LOG=autotune bench_suites grouped:200
  fresh_db /tmp/kc/kernels; BENCH_LOG=autotune bench_suites misaligned:180
  (cd "$out" && tar czf results.tgz ./*.json ./sk/*.json ./nosk/*.json && rm -f ./*.json ./sk/*.json ./nosk/*.json)
  ;;
5)
  stage "forced, clean counters"
  # shellcheck disable=SC2086
  TMAGEMM_STREAM_K_CLEAN_COUNTERS=1 lab/bench-forced.sh waves $sk 2>&1 | tee "$out/forced-clean.txt"
  stage "forced, memset"
  # shellcheck disable=SC2086
  lab/bench-forced.sh waves $sk 2>&1 | tee "$out/forced-memset.txt"
  fresh_db /tmp/kc/kernels; TMAGEMM_STREAM_K_CLEAN_COUNTERS=1 BENCH_LOG=autotune bench_suites waves:200
  ;;
esac
stage done
