#!/usr/bin/env bash
# The agent's benchmarks (docs/performance.md): NVTX range cost with and without the agent, the cost
# of an interposed GEMM call, the writer's sustained throughput, and the agent's memory at defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release >/dev/null
cmake --build --preset release --target bench_nvtx bench_writer bench_interpose tuneup-agent nvtx_client >/dev/null
b=build/release
agent=$PWD/$b/lib/libtuneup-agent.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "== NVTX push+pop without the agent"
$b/bench/bench_nvtx
echo "== NVTX push+pop with the agent (NVTX_INJECTION64_PATH)"
NVTX_INJECTION64_PATH=$agent TUNEUP_OUTPUT=$tmp/nvtx.db $b/bench/bench_nvtx
sqlite3 "$tmp/nvtx.db" "select name, value from stats where name like 'events.%'" | sed 's/^/   /'

echo "== GEMM calls without the agent, with it, and with it disabled (interposers)"
$b/bench/bench_interpose
LD_PRELOAD=$agent TUNEUP_OUTPUT=$tmp/gemm.db $b/bench/bench_interpose
LD_PRELOAD=$agent TUNEUP_DISABLE=1 $b/bench/bench_interpose

echo "== writer throughput"
$b/bench/bench_writer --events 4000000 --kind marks --out "$tmp/w1.db"
$b/bench/bench_writer --events 4000000 --kind ranges --out "$tmp/w2.db"

echo "== a burst at defaults: 4 threads x 20000 ranges and a forked child's 20000 (issue 13): written, dropped"
NVTX_INJECTION64_PATH=$agent LD_PRELOAD=$agent TUNEUP_OUTPUT=$tmp/burst.db TUNEUP_MAIN_PID=0 \
  $b/tests/clients/nvtx_client burst --threads 4 --ranges 20000 --child-ranges 20000 >/dev/null
for f in "$tmp"/burst*.db; do
  echo "   $(basename "$f"): $(sqlite3 "$f" "select count(*) from nvtx_ranges") ranges," \
    "$(sqlite3 "$f" "select value from stats where name = 'events.dropped'") events dropped"
done

echo "== agent memory at defaults (peak RSS of 16 threads x 200000 ranges)"
peak() { /usr/bin/time -f "%M" "$@" 2>&1 >/dev/null | tail -n 1; }
base=$(peak $b/tests/clients/nvtx_client ranges --threads 16 --ranges 200000)
with=$(NVTX_INJECTION64_PATH=$agent LD_PRELOAD=$agent TUNEUP_OUTPUT=$tmp/mem.db TUNEUP_MAIN_PID=0 \
  peak $b/tests/clients/nvtx_client ranges --threads 16 --ranges 200000)
echo "   without agent: $((base / 1024)) MiB; with agent: $((with / 1024)) MiB; agent: $(((with - base) / 1024)) MiB"
