# device-lib.sh — helpers shared by the device scripts (sourced, not run). Expects $out (the results folder).

# The result rows of `tmagemm bench` output.
rows() { grep -E "^[0-9]+x|geomean|FAIL|error|skipped"; }

# The decode suite with only the skinny backend, L2 flushed by `write` or `read`; the JSON lands in $out as
# <name>-skinny_only.json (write) or <name>-skinny_only-flush_read.json (read). Usage: skinny_only_decode FLUSH SECONDS
skinny_only_decode() {
  local flush=$1 limit=$2 tmp suffix=-skinny_only
  [ "$flush" = read ] && suffix=-skinny_only-flush_read
  tmp=$(mktemp -d)
  echo "== decode, skinny only$([ "$flush" = read ] && echo ", read flush")"
  TMAGEMM_CUBLASLT=0 TMAGEMM_FALLBACK=0 TMAGEMM_PERSISTENT_TMA=0 timeout "$limit" build/tmagemm bench --suite decode \
    --flush "$flush" --out "$tmp" 2>&1 | rows
  for f in "$tmp"/*-decode.json; do cp "$f" "$out/$(basename "$f" .json)$suffix.json"; done
}

# A fresh tuning database: exports TMAGEMM_CACHE_DIR as a new directory holding a copy of the kernel cache's cubins
# (default .kcache/kernels), so that a run tunes afresh without compiling. Usage: fresh_db [KERNELS_DIR]
fresh_db() {
  export TMAGEMM_CACHE_DIR
  TMAGEMM_CACHE_DIR=$(mktemp -d /tmp/tmagemm-db-XXXXXX)
  cp -r "${1:-.kcache/kernels}" "$TMAGEMM_CACHE_DIR/kernels"
}
