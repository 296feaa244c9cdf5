#!/usr/bin/env bash
# device-53d.sh — the last minutes' call: device-53a's llm and waves only, each tuned on a fresh database (H200 only;
# exit 3 at once elsewhere). Carry [".carry/bin", ".carry/kcache.tgz"]. ~3 min.
FIRST="llm:150 waves:120" DECODE=0 LAST= exec bash lab/2026-12-06-session53/device-53a.sh
