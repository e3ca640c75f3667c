#!/usr/bin/env bash
# Installs the dependencies, builds and runs every test. Usage: scripts/test.sh [preset...]
# (default: dev; also asan, tsan — see CMakePresets.json and docs/testing.md). Prints how long each
# configure, build and test took.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(dev)
took=()
timed() { # NAME COMMAND...: runs it, and keeps how long it took
  local name=$1 start=$SECONDS
  shift
  "$@"
  took+=("$(printf '%-16s %5d s' "$name" $((SECONDS - start)))")
}
trap '[ ${#took[@]} -eq 0 ] || printf "== tuneup: %s\n" "${took[@]}"' EXIT
for preset in "${presets[@]}"; do
  echo "== tuneup: configure, build and test preset '$preset'"
  timed "$preset configure" cmake --preset "$preset" >/dev/null
  timed "$preset build" cmake --build --preset "$preset" -j "$(nproc)"
  timed "$preset test" ctest --preset "$preset"
done
