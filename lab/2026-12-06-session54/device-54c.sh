#!/usr/bin/env bash
# device-54c.sh — one call that uses whatever card comes: on an H200 lab/2026-12-06-session53/device-53a.sh (every
# target suite under the flush-clear rule, then decode back to back under both flushes; ~7 min; FIRST / DECODE / LAST
# cut it down as in device-53c.sh and device-53d.sh), on any other card device-54b.sh (the 46 GPU tests of version
# 0.1.4 that device-54a.sh's 400 s did not reach; ~5 min). Sessions 50-54 got an H100 on most starts that came, and
# the H200-only scripts stopped there at once. On the H200 bench/targets.py reads the suites' JSON at the end.
# Carry [".carry/bin", ".carry/kcache.tgz"].
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*) bash lab/2026-12-06-session53/device-53a.sh; python3 bench/targets.py "$OUT"/*.json ;;
  *) exec bash lab/2026-12-06-session54/device-54b.sh ;;
esac
