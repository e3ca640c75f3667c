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

cuda_root=${CUDAToolkit_ROOT:-/usr/local/cuda}
if [ -f "$cuda_root/include/cupti.h" ]; then
  echo "install-deps: CUDA Toolkit found at $cuda_root"
else
  echo "install-deps: no CUDA Toolkit at $cuda_root: GPU capture (CUPTI) and the cuBLAS/cuDNN interposers will be left out."
  echo "              Install the CUDA Toolkit or set CUDAToolkit_ROOT to build them."
fi
