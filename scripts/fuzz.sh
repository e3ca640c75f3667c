#!/usr/bin/env bash
# Fuzzes each importer (Kineto JSON, Nsight Systems SQLite, tuneup files) for a bounded time:
#
#   scripts/fuzz.sh [SECONDS]     # SECONDS per target, default 60; the targets run side by side
#
# Builds only the fuzz targets and the analysis library (the `fuzz` preset: clang-14, libFuzzer, ASan +
# UBSan, in build/fuzz, or TUNEUP_FUZZ_BUILD), starts each target from its seeds in
# tests/fuzz/corpus/<target> (kept as they are: new inputs go to <build>/corpus/<target>), and exits
# non-zero when a target crashes, hangs, leaks or trips a sanitizer. A failing input is saved as
# <build>/artifacts/<target>-crash-*; replay it with
#   <build>/tests/fuzz/<target> <build>/artifacts/<target>-crash-...
# and, once fixed, add it to tests/fuzz/corpus/<target> (make_seeds.py): every build's tests replay those.
set -euo pipefail

seconds="${1:-60}"
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "usage: scripts/fuzz.sh [SECONDS]   (seconds per fuzz target, default 60)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
targets=(fuzz_kineto_json fuzz_nsys_sqlite fuzz_tuneup_file fuzz_job_summary)

if ! command -v clang++-14 >/dev/null; then
  echo "fuzz.sh: clang++-14 not found; install it with scripts/install-deps.sh (clang-14, libfuzzer-14-dev)" >&2
  exit 2
fi
jobs="$(nproc 2>/dev/null || echo 2)"
build="${TUNEUP_FUZZ_BUILD:-build/fuzz}"
echo "fuzz.sh: building the fuzz targets in $build (log: $build/build.log)"
mkdir -p "$build"
if ! { cmake --preset fuzz -B "$build" && cmake --build "$build" --target fuzz -j "$jobs"; } >"$build/build.log" 2>&1; then
  tail -40 "$build/build.log" >&2
  echo "fuzz.sh: the build failed" >&2
  exit 2
fi
mkdir -p "$build/artifacts"
echo "fuzz.sh: running ${#targets[@]} targets for $seconds s each, side by side"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
pids=()
for target in "${targets[@]}"; do
  mkdir -p "$build/corpus/$target"
  # -rss_limit_mb: an input that makes an importer take gigabytes is a finding too.
  "$build/tests/fuzz/$target" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$target-" "$build/corpus/$target" "tests/fuzz/corpus/$target" \
    >"$build/$target.log" 2>&1 &
  pids+=($!)
done

failed=0
for i in "${!targets[@]}"; do
  target="${targets[$i]}"
  if wait "${pids[$i]}"; then
    runs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/$target.log" | grep -o '[0-9]*$' || echo '?')"
    echo "fuzz.sh: $target: $runs inputs in ${seconds} s, no crash"
  else
    failed=1
    echo "fuzz.sh: $target FAILED; its report (from $build/$target.log):" >&2
    grep -E -A 30 'ERROR: |runtime error|==ERROR|deadly signal|Test unit written' "$build/$target.log" | head -60 >&2 || tail -40 "$build/$target.log" >&2
  fi
done
exit "$failed"
