#!/usr/bin/env bash
# device-56d.sh — memcheck of the stream-K tests alone (~420 s on an H100 in the fifty-sixth session: the thread tests
# run ~6.5x slower under memcheck), after device-56c.sh. Carry [".carry/bin", ".carry/kcache.tgz"].
out=$OUT
source scripts/device-lib.sh
use_carry >/dev/null
memcheck_tests 'StreamK.*' "${LIMIT:-540}"
mv "$out/memcheck.txt" "$out/memcheck-streamk.txt"
stage done
