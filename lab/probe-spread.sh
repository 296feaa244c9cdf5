#!/usr/bin/env bash
# probe-spread.sh — is the bench's process-to-process spread on the widest decode shapes the write flush's? tmagemm
# forced to cuBLASLt's algorithm 0 against the bench's baseline, three processes per shape and flush mode (each its
# own tuning database); prints ratio, the baseline's algorithm and both times. Then the warm-cache tuning time of a
# decode shape no suite has. Writes $OUT/spread.txt.
set -uo pipefail
out=${OUT:-out}; mkdir -p $out
export LD_LIBRARY_PATH=$PWD/.devlibs:${LD_LIBRARY_PATH:-}
source "$(dirname "$0")/../scripts/device-lib.sh"
{
for s in 1x28672x8192 64x28672x8192 16x28672x8192; do
  for fl in write read; do
    for i in 1 2 3; do
      fresh_db
      TMAGEMM_CHOICE_REGEX='^cublaslt_algo0$' timeout 60 build/tmagemm bench --suite $s --flush $fl --out /tmp/sp-$i >/dev/null 2>&1
      python3 -c "
import json,glob,sys
r=json.load(open(glob.glob('/tmp/sp-$i/*.json')[0]))
r=(r['rows'] if isinstance(r,dict) else r)[0]
print('$s', '$fl', 'run $i', 'ratio %.3f' % r['ratio'], 'base algo', r['baseline_algo'], 'ours %.1f us' % (r['tmagemm_ms']*1e3), 'base %.1f us' % (r['baseline_ms']*1e3), 'trial', [round(x*1e3,1) for x in r['baseline_trials_ms']])"
      rm -rf /tmp/sp-$i
    done
  done
done
echo "== warm kernel cache: tune one new decode shape"
timeout 30 build/tmagemm tune 48x14336x4096 2>&1 | tail -2
} 2>&1 | tee $out/spread.txt
