#!/usr/bin/env bash
# install-deps.sh — installs the Debian 12 packages tmagemm's build and tests need (apt-get; idempotent:
# nothing is fetched when every package is already installed; sudo only when not run as root), then the Python
# environment of the Python package and its tests: the project's .venv with python/requirements-dev.txt from PyPI
# (torch, nanobind, scikit-build-core, pytest, matplotlib; skipped when they already import there, or when
# TMAGEMM_PYTHON=OFF). The CUDA toolkit (>= 12.8, with NVRTC and cuBLASLt) is not installed here: it must already be
# present.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libsqlite3-dev libcli11-dev libfmt-dev nlohmann-json3-dev libdlpack-dev libxxhash-dev
  libhiredis-dev libssl-dev redis-server
  libgtest-dev libbenchmark-dev
  python3 python3-dev python3-venv
)

# The CUDA toolkit: nvcc on PATH, or $CUDA_HOME / $CUDA_PATH / /usr/local/cuda holding bin/nvcc.
cuda_root=""
for candidate in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda; do
  if [[ -n "$candidate" && -x "$candidate/bin/nvcc" ]]; then
    cuda_root="$candidate"
    break
  fi
done
if [[ -z "$cuda_root" ]] && command -v nvcc >/dev/null 2>&1; then
  cuda_root="$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")"
fi
if [[ -z "$cuda_root" ]]; then
  echo "install-deps.sh: no CUDA toolkit found (looked for nvcc on PATH, in \$CUDA_HOME, \$CUDA_PATH and" >&2
  echo "/usr/local/cuda). Install the CUDA toolkit >= 12.8 (NVIDIA's packages, e.g. cuda-toolkit-13-0)" >&2
  echo "and run this again; tmagemm needs its NVRTC, cuBLASLt and libcu++ headers." >&2
  exit 1
fi
echo "install-deps.sh: CUDA toolkit at $cuda_root ($("$cuda_root/bin/nvcc" --version | tail -n 1))"

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps.sh: all ${#packages[@]} packages are installed"
else
  sudo=()
  if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-deps.sh: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  echo "install-deps.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update
  "${sudo[@]}" apt-get install -y --no-install-recommends "${packages[@]}"
fi

# The Python environment: <repo>/.venv, which CMake prefers for the extension (python/CMakeLists.txt).
if [[ "${TMAGEMM_PYTHON:-}" == OFF ]]; then
  echo "install-deps.sh: TMAGEMM_PYTHON=OFF: no Python environment"
  exit 0
fi
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv"
[[ -x "$venv/bin/python3" ]] || /usr/bin/python3 -m venv "$venv"
if "$venv/bin/python3" -c "import torch, nanobind, scikit_build_core, pytest, matplotlib" 2>/dev/null; then
  echo "install-deps.sh: $venv has torch $("$venv/bin/python3" -c 'import torch; print(torch.__version__)')," \
       "nanobind, scikit-build-core, pytest and matplotlib"
else
  echo "install-deps.sh: installing python/requirements-dev.txt into $venv (torch is a large download)"
  "$venv/bin/python3" -m pip install -q --disable-pip-version-check -r "$repo/python/requirements-dev.txt"
fi
