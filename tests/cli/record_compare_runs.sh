#!/bin/sh
# The recordings compare_cli_test compares, made once per ctest run and alone on the machine (RUN_SERIAL):
# its verdicts' threshold is the noise measured inside each run, and a recording made beside other tests
# on two busy cores measured up to 175% there (the sample's fixed twin, steps of 17 to 120 ms), enough to
# read a 3x change as 'inconclusive'. Usage: record_compare_runs.sh TUNEUP PYTHON SOURCE_DIR OUT_DIR
set -eu
tuneup=$1 python=$2 source=$3 out=$4
rm -rf "$out"
mkdir -p "$out"
sample="$source/samples/python/dataloader_workers.py"
"$tuneup" record -o "$out/slow.db" -- "$python" "$sample" --steps 40 --load-ms 12
"$tuneup" record -o "$out/fixed.db" -- "$python" "$sample" --steps 40 --load-ms 12 --fixed
for name in sleeps sleeps2; do # steps that are 20 ms sleeps, no torch: little for a busy CPU to slow
    "$tuneup" record -o "$out/$name.db" -- "$python" "$source/tests/cli/bench_steps.py" --steps 25 --ms 20
done
