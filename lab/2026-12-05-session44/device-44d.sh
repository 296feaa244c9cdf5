#!/usr/bin/env bash
# device-44d.sh — device-44c.sh cut down after that call's machine stopped answering (10 of the session's 30 device
# minutes left): the cut's StreamK.* and memcheck, then 128x256 stream-K (1x1, 2x1) forced on the waves suite, main
# then the cut. Carry [".carry/bin", ".carry/kcache.tgz", ".carry/lab"].
out=$OUT
source scripts/device-lib.sh
use_carry
use_lab_build cut
gpu_tests "StreamK.*:GroupedMm.StreamKSharesOutThePartialWave" 120
keep_logs
memcheck_tests "StreamK.F16AndF32Outputs:StreamK.BatchedProblemSharesItsLastWave" 60
keep_logs
p=persistent_tma_
FLUSHES=write forced_main_and_lab cut waves waves ${p}128x256x64_s4_c2_g8_tmastore_sk \
  ${p}128x256x64_s4_c2_g8_cm2_tmastore_sk
stage done
