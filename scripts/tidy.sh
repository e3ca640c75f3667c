#!/usr/bin/env bash
# Runs clang-tidy with the tree's .clang-tidy over the sources (or the files named), using the compile
# commands of a configured build. The tree is kept clean: any finding fails.
#   scripts/tidy.sh [BUILD_DIR] [FILE...]      (default build/dev; cmake --preset dev first)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/dev}
[ $# -gt 0 ] && shift
if [ ! -f "$build/compile_commands.json" ]; then
  echo "tidy: no compile_commands.json in $build: configure it first (cmake --preset dev)" >&2
  exit 2
fi
if [ $# -gt 0 ]; then
  files=("$@")
else
  # Every C++ source of ours that the build compiles: the fuzz targets need the fuzz preset's clang, and
  # the samples LibTorch's headers, which clang 14 cannot parse.
  mapfile -t files < <(cd "$root" && git ls-files '*.cpp' | grep -v -e '^tests/fuzz/' -e '^samples/' \
    | sed "s|^|$root/|")
fi
run-clang-tidy -quiet -p "$build" -j "$(nproc)" \
  -header-filter "^$root/(agent|analyzer|cli|common|gui|rules|bench|samples|tests)/" \
  -extra-arg=-Wno-unknown-warning-option "${files[@]}"
