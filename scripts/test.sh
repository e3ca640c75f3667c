#!/usr/bin/env bash
# Installs the dependencies, builds and runs every test. Usage: scripts/test.sh [preset...]
# (default: dev; also asan, tsan — see CMakePresets.json).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(dev)
for preset in "${presets[@]}"; do
  echo "== tuneup: configure, build and test preset '$preset'"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$(nproc)"
  ctest --preset "$preset"
done
