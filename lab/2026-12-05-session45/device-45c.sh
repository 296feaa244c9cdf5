#!/usr/bin/env bash
# device-45c.sh — the decode suite tuned on the lab build (the skinny kernel's TMA store of its reduced tile;
# .carry/lab as for device-45b.sh), fresh database, then benchmarked under the read flush. ~4 min. Not run: the
# forced rows (device-45b.sh) showed the patch level to slower.
out=$OUT
source scripts/device-lib.sh
use_carry
use_lab_build tstore
cp /tmp/tmagemm-tstore build/tmagemm
decode_tuned_both_flushes /tmp/kcl/kernels
keep_logs
stage done
