#!/usr/bin/env bash
# What sampling a native program's main-thread stack costs it (docs/performance.md, "Native stacks"): a LibTorch
# training program recorded with TUNEUP_SAMPLE_MS=10 (native stacks on, the default) and =0 (off), in interleaved
# rounds; the median wall time of each with the ratio's 95% bootstrap interval, and the agent's own account
# (stats native_stacks.*: samples, unwinding time on its writer thread).
# Usage: bench/native_stacks.sh BUILD_DIR [ROUNDS] [-- PROGRAM ARGS...]
set -euo pipefail
build=${1:?usage: bench/native_stacks.sh BUILD_DIR [ROUNDS] [-- PROGRAM ARGS...]}
rounds=${2:-10}
shift $(( $# >= 2 ? 2 : 1 ))
[ "${1:-}" = "--" ] && shift
program=("$@")
[ ${#program[@]} -gt 0 ] || program=("$build/samples/mlp_training" --steps 60 --batch 64 --hidden 1024)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < rounds; i++)); do
  for ms in 10 0; do
    start=$(date +%s%N)
    TUNEUP_SAMPLE_MS=$ms "$build/bin/tuneup" record -o "$tmp/run$ms.db" --force -- "${program[@]}" >/dev/null 2>&1
    echo "$ms $(( ($(date +%s%N) - start) / 1000 ))" >> "$tmp/times"
  done
  sqlite3 "$tmp/run10.db" "select group_concat(value, ' ') from (select value from stats where name in
    ('native_stacks.samples', 'native_stacks.with_user_frame', 'native_stacks.unwind_us') order by name)" >> "$tmp/stats"
done
python3 - "$tmp/times" "$tmp/stats" <<'PY'
import random, statistics, sys
on, off = [], []
for line in open(sys.argv[1]):
    ms, us = line.split()
    (on if ms == "10" else off).append(int(us) / 1e6)
random.seed(1)
ratios = sorted(statistics.median(random.choices(on, k=len(on))) / statistics.median(random.choices(off, k=len(off)))
                for _ in range(2000))
print(f"wall, native stacks off: median {statistics.median(off):.3f} s over {len(off)} runs")
print(f"wall, native stacks on:  median {statistics.median(on):.3f} s "
      f"({statistics.median(on) / statistics.median(off):.3f}x, 95% CI {ratios[50]:.3f}x-{ratios[1949]:.3f}x)")
rows = [list(map(int, l.split())) for l in open(sys.argv[2]) if l.strip()]
samples = sum(r[0] for r in rows); unwind = sum(r[1] for r in rows); user = sum(r[2] for r in rows)
print(f"per run: {samples / len(rows):.0f} samples, {user / len(rows):.0f} with a frame of the program's code; "
      f"unwinding {unwind / max(samples, 1):.1f} us per sample on the writer thread")
PY
