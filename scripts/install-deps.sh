#!/usr/bin/env bash
# Installs every Debian package tuneup needs (agent, analyzer, GUI, samples, tests, benchmarks, fuzzing).
# Idempotent: packages already present are left as they are. The CUDA Toolkit (CUPTI, NVTX, cuBLAS,
# cuDNN) is not a Debian package here: it is expected under /usr/local/cuda (or CUDAToolkit_ROOT);
# without it the build leaves out GPU capture and says so at configure time.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libsqlite3-dev sqlite3 zlib1g-dev libisal-dev
  rapidjson-dev libcli11-dev
  libunwind-dev  # the agent unwinds native stacks with libunwind (loaded at run time; headers for its types)
  libgtest-dev libgmock-dev libbenchmark-dev
  libtorch-dev python3-torch
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev libgl-dev
  clang-14 libclang-rt-14-dev libfuzzer-14-dev clang-format clang-tidy
  xvfb xauth time
  chromium-headless-shell  # the HTML report in a real browser (tests/html, label browser): ~100 MB to download
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
else
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python with PyTorch 2.x, the version the Python tests run on (docs/torch-versions.md): a virtual
# environment of its own (scripts/torch-venv.sh says where), made once by the machine's Python 3.11 (pip
# takes the wheel from the machine's disk where it lies there). Debian's python3-torch (1.13) above stays
# for the compatibility tests.
source "$(dirname "$0")/torch-venv.sh"
if [ "$("$tuneup_torch_python" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null)" = \
     "$tuneup_torch_version" ]; then
  echo "install-deps: torch $tuneup_torch_version (CPU) in $tuneup_torch_venv"
else
  base_python=$(command -v python3.11 || command -v python3)
  echo "install-deps: making $tuneup_torch_venv with $base_python: torch==$tuneup_torch_version (CPU build), numpy"
  rm -rf "$tuneup_torch_venv"
  mkdir -p "$tuneup_venvs"
  "$base_python" -m venv "$tuneup_torch_venv"
  # pip's warnings about index folders this machine does not have are noise here.
  if ! "$tuneup_torch_python" -m pip install -q --disable-pip-version-check "torch==$tuneup_torch_version" numpy \
    2>&1 | { grep -v "is ignored: it is neither a file nor a directory" || true; }; then
    echo "install-deps: pip could not install torch $tuneup_torch_version into $tuneup_torch_venv" >&2
    exit 1
  fi
  "$tuneup_torch_python" -c 'import torch; print("install-deps: torch", torch.__version__, "from", torch.__file__)'
fi

cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}
if [ -f "$cuda_root/include/cupti.h" ]; then
  echo "install-deps: CUDA Toolkit found at $cuda_root"
else
  echo "install-deps: no CUDA Toolkit at $cuda_root: GPU capture (CUPTI) and the cuBLAS/cuDNN interposers will be left out."
  echo "              Install the CUDA Toolkit or set CUDAToolkit_ROOT to build them."
fi
