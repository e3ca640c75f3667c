#!/usr/bin/env bash
# tuneup advise against Holistic Trace Analysis (its load plus its three breakdowns) on one Kineto trace,
# interleaved on the same machine in the same run. Usage:
#   bench/compare_hta.sh TUNEUP_BINARY TRACE_DIR [ROUNDS]
# TRACE_DIR holds one trace (HTA reads folders); HTA must be importable by python3 (pip install
# HolisticTraceAnalysis, or PYTHONPATH=<a checkout>). Prints each round and the medians' ratio. Times are read from
# bash's $EPOCHREALTIME: a `date` process around each command added its own start (13-17 ms on the development VM,
# a tenth of tuneup's time) to what was measured.
set -eu
tuneup=$1 dir=$2 rounds=${3:-10}
trace=$(ls "$dir"/*.json* | head -n 1)
here=$(dirname "$0")
python=${PYTHON:-python3}
: > /tmp/compare_hta.$$.tuneup
: > /tmp/compare_hta.$$.hta
: > /tmp/compare_hta.$$.htaproc
i=0
while [ "$i" -lt "$rounds" ]; do
    t0=$EPOCHREALTIME
    "$tuneup" advise "$trace" > /dev/null
    t1=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >> /tmp/compare_hta.$$.tuneup
    t0=$EPOCHREALTIME
    "$python" "$here/hta_load_breakdowns.py" "$dir" 2> /dev/null | awk '{print $3}' >> /tmp/compare_hta.$$.hta
    t1=$EPOCHREALTIME
    echo "$t1 - $t0" | bc >> /tmp/compare_hta.$$.htaproc
    i=$((i + 1))
done
median() { sort -g "$1" | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
mt=$(median /tmp/compare_hta.$$.tuneup) mh=$(median /tmp/compare_hta.$$.hta) mp=$(median /tmp/compare_hta.$$.htaproc)
echo "tuneup advise, whole process (s):             $(sort -g /tmp/compare_hta.$$.tuneup | tr '\n' ' ')"
echo "HTA load + 3 breakdowns, in its process (s):  $(sort -g /tmp/compare_hta.$$.hta | tr '\n' ' ')"
echo "HTA, whole process with Python's start (s):   $(sort -g /tmp/compare_hta.$$.htaproc | tr '\n' ' ')"
echo "medians: tuneup $mt s; HTA $mh s in-process ($(echo "$mh / $mt" | bc -l | cut -c1-5)x), $mp s whole ($(echo "$mp / $mt" | bc -l | cut -c1-5)x)"
rm -f /tmp/compare_hta.$$.tuneup /tmp/compare_hta.$$.hta /tmp/compare_hta.$$.htaproc
