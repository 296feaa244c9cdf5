#!/usr/bin/env bash
# build-ext-cp312.sh — builds tmagemm._C for the device's CPython 3.12 here (this machine has 3.11): nanobind and
# python/src/module.cpp against 3.12's headers (PY312_INCLUDE, brought from the device by lab/device-pyprobe.sh) and
# build/libtmagemm.a, into .carry/py312/tmagemm/ beside a copy of python/tmagemm. A lab tool: `pip install .` is the
# way users build the package. PYCONFIG: the device's x86_64-linux-gnu/python3.12/pyconfig.h (else Debian's 3.11
# one stands in).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
: "${PY312_INCLUDE:=/work/py312/python3.12}"
: "${PYCONFIG:=/usr/include/x86_64-linux-gnu/python3.11/pyconfig.h}"
nb=$(.venv/bin/python -c "import nanobind, os; print(os.path.dirname(nanobind.__file__))")
cuda=${CUDA_HOME:-/usr/local/cuda}
cfg=$(mktemp -d)
mkdir -p "$cfg/x86_64-linux-gnu/python3.12" .carry/py312
cp "$PYCONFIG" "$cfg/x86_64-linux-gnu/python3.12/pyconfig.h"
rm -rf .carry/py312/tmagemm && cp -r python/tmagemm .carry/py312/tmagemm && rm -rf .carry/py312/tmagemm/__pycache__
g++ -O2 -DNDEBUG -DNB_COMPACT_ASSERTIONS -std=c++20 -fPIC -shared -fvisibility=hidden -fno-strict-aliasing \
  -I"$PY312_INCLUDE" -I"$cfg" -I"$nb/include" -I"$nb/ext/robin_map/include" \
  -Iinclude -Ibuild/generated/include -Isrc -Itools -I"$cuda/include" \
  python/src/module.cpp tools/tmagemm/suites.cpp "$nb/src/nb_combined.cpp" build/libtmagemm.a \
  -L"$cuda/lib64" -l:libhiredis.a -lcrypto -lcudart_static -lnvrtc -lcublasLt -lsqlite3 -ldl -lpthread -lrt \
  -Wl,-rpath,"$cuda/lib64" -Wl,-rpath,'$ORIGIN/../nvidia/cu13/lib' \
  -o .carry/py312/tmagemm/_C.cpython-312-x86_64-linux-gnu.so
rm -rf "$cfg"
ls -la .carry/py312/tmagemm/_C.cpython-312-x86_64-linux-gnu.so
