#!/usr/bin/env bash
# device-57a.sh — the fifty-seventh session's first call: on an H200, device-55a.sh (the grouped suite under 0.1.4 on a
# fresh database, then the long GPU test groups). Every H100 run of version 0.1.4 is done (sessions 54-56), so on any
# other card it only names the card and stops, and the machine is handed back at once.
# Carry [".carry/bin", ".carry/kcache.tgz", ".carry/redis"].
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $name" | tee "$OUT/card.txt"
case "$name" in
  *H200*) exec bash lab/2026-12-06-session55/device-55a.sh ;;
esac
echo "not an H200: nothing to run"
