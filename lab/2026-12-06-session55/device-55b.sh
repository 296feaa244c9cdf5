#!/usr/bin/env bash
# device-55b.sh — second of three (device-55a.sh says why): every GPU test group that device-55a.sh leaves, the
# remote cache tests with the redis-server carried in .carry/redis/ (scripts/device-lib.sh carried_redis; without one
# they skip, as they did in the fifty-fifth session's H100 run), then the addmm grid's persistent TMA and skinny
# instances, whose epilogue variants NVRTC compiles in the test (the carried cache holds compile-check's sample only:
# on the H100 92, 0.3, 93 and 46 s for the first four; device-55c.sh runs the fallback instances).
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/redis"]. ~9.5 min.
out=$OUT
source scripts/device-lib.sh
use_carry >/dev/null
carried_redis
gpu_tests '*-PersistentTma.*:StreamK.*:Addmm.*:ScaledMm.*:GroupedMm.*' "${LIMIT1:-200}"
mv "$out/gpu-tests.txt" "$out/gpu-tests-rest.txt"
gpu_tests 'Addmm/AddmmGrid.*persistent_tma*:Addmm/AddmmGrid.*skinny*' "${LIMIT2:-370}"
mv "$out/gpu-tests.txt" "$out/gpu-tests-addmm-grid.txt"
stage done
