#!/usr/bin/env bash
# install-deps.sh — installs the Debian 12 packages tmagemm's build and tests need (apt-get; idempotent:
# nothing is fetched when every package is already installed). Uses sudo only when not run as root.
# The CUDA toolkit (>= 12.8, with NVRTC and cuBLASLt) is not installed here: it must already be present.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  libsqlite3-dev libcli11-dev libfmt-dev nlohmann-json3-dev libdlpack-dev libxxhash-dev
  libgtest-dev libbenchmark-dev
  python3 python3-matplotlib python3-pytest
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
  exit 0
fi

sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
  command -v sudo >/dev/null 2>&1 || { echo "install-deps.sh: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
  sudo=(sudo)
fi
echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends "${packages[@]}"
