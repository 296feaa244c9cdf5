#!/usr/bin/env bash
# device-55a.sh — first of three calls that run version 0.1.4's whole GPU suite and a memcheck on one card (the issues
# ask for them on the H200; the fifty-fourth and fifty-fifth sessions ran the suite on H100s only). On an H200 it first
# benches the grouped suite on a fresh database (the one target suite not yet measured under 0.1.4 there; forty-ninth
# session 1.109, MoE decode rows 1.084), then the long test groups: PersistentTma, StreamK, Addmm (not its grid),
# ScaledMm, GroupedMm (~305 s on the H100). device-55b.sh runs the rest and the addmm grid, device-55c.sh the memcheck.
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/redis"]. ~8-9.5 min on an H200, ~5.5 elsewhere.
out=$OUT
source scripts/device-lib.sh
use_carry >/dev/null
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) BENCH_LOG=autotune bench_suites grouped:150; keep_logs; fresh_db /tmp/kc/kernels; lim=380 ;;
  *) lim=400 ;;
esac
gpu_tests 'PersistentTma.*:StreamK.*:Addmm.*:ScaledMm.*:GroupedMm.*-Addmm/AddmmGrid.*' "${LIMIT:-$lim}"
mv "$out/gpu-tests.txt" "$out/gpu-tests-long.txt"
stage done
