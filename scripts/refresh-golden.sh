#!/usr/bin/env bash
# Rewrites the golden reports in tests/golden/advise/ from a build: `tuneup advise --format json` on every
# case of tests/golden/advise_golden_test.cpp, in its golden form; and tests/golden/compare/: `tuneup
# compare --format markdown` on every case of tests/golden/compare_golden_test.cpp. Run it when a change
# of the advice is intended, then read `git diff tests/golden/` before committing: every changed line is a
# changed answer.
# Usage: scripts/refresh-golden.sh [BUILD_DIR]   (default: build/dev)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/dev}
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "refresh-golden: $build is not a configured build folder (cmake --preset dev, or name yours)" >&2
  exit 2
fi
cmake --build "$build" --target tuneup advise_golden_test compare_golden_test
# The test writes the files instead of comparing them (and removes those of cases that are gone); it
# finds the traces where the build was configured to (TUNEUP_SHARED_TRACES), and must not skip.
CI=true TUNEUP_REFRESH_GOLDEN=1 "$build/tests/golden/advise_golden_test" --gtest_brief=1
CI=true TUNEUP_REFRESH_GOLDEN=1 "$build/tests/golden/compare_golden_test" --gtest_brief=1
git status --short -- tests/golden/advise tests/golden/compare
