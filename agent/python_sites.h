#pragma once
// The Python bootstrap's call sites and stack samples (agent/python/sitecustomize.py, docs/agent.md): where in
// the user's code the calls it watches come from, and where the main thread is, sampled. The bootstrap numbers
// the names it uses (files, functions, the watched calls) and hands records over in batches, from any thread.

#include <cstdint>

namespace tuneup::agent {

// How often the bootstrap should sample the main thread's Python stack, in ms (TUNEUP_SAMPLE_MS; 0: do not);
// -1 when this process records nothing of the bootstrap's (it then keeps no call sites either).
int bootstrapPythonSampleMs();
// Names the bootstrap's number `id` (> 0). A forked child numbers its names again.
void bootstrapPythonName(int64_t id, const char* text);
// `count` watched calls made on thread `tid`, 6 numbers each: start and end (CLOCK_MONOTONIC ns: Python's
// time.perf_counter_ns), the call's name, then the user's frame: file, line, function.
void bootstrapPythonCalls(int64_t tid, const int64_t* records, int64_t count);
// `count` samples of thread `tid`'s stack, 4 numbers each: time, then the innermost user frame.
void bootstrapPythonSamples(int64_t tid, const int64_t* records, int64_t count);

// PyTorch's caching allocator on GPU `device`, read at `tsNs` (CLOCK_MONOTONIC): allocated and reserved bytes
// then, and their peaks since `sinceNs`, when they were last reset; -1 for what was not read.
void bootstrapMemoryReading(int64_t tsNs, int64_t device, int64_t sinceNs, int64_t allocatedBytes,
    int64_t reservedBytes, int64_t peakAllocatedBytes, int64_t peakReservedBytes);

} // namespace tuneup::agent
