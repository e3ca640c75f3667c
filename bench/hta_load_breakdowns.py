"""Holistic Trace Analysis's load of one trace folder plus its three breakdowns, timed in-process.

The other side of bench/compare_hta.sh: prints the seconds of TraceAnalysis(trace_dir) and of
get_temporal_breakdown, get_idle_time_breakdown and get_gpu_kernel_breakdown (Python's start-up and
HTA's import are not counted, which favours HTA).
"""

import sys
import time

from hta.trace_analysis import TraceAnalysis

start = time.perf_counter()
analysis = TraceAnalysis(trace_dir=sys.argv[1])
loaded = time.perf_counter()
ranks = analysis.t.get_ranks()
analysis.get_temporal_breakdown(visualize=False)
analysis.get_idle_time_breakdown(ranks=ranks, visualize=False)
analysis.get_gpu_kernel_breakdown(visualize=False)
done = time.perf_counter()
print(f"{loaded - start:.3f} {done - loaded:.3f} {done - start:.3f}")
