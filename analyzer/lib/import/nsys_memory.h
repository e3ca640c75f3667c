#pragma once
// GPU memory in an Nsight Systems export made with `nsys profile --cuda-memory-usage=true`: the CUDA
// allocations and frees of CUDA_GPU_MEMORY_USAGE_EVENTS as MemoryEvent rows. nsys records each
// cudaMalloc/cudaFree (for PyTorch: the caching allocator's segments, its reserved memory) with its size
// only, never a total: the rows carry deltas (deltaOf Reserved), and what was allocated before the capture
// began is unknown. Internal to the nsys importer.

#include "import/nsys_db.h"
#include "import/nsys_kinds.h"
#include "model/trace_builder.h"

#include <cstdint>

namespace tuneup::analysis {

inline constexpr const char* kNsysMemoryUsageTable = "CUDA_GPU_MEMORY_USAGE_EVENTS";

// Adds the table's rows to `builder` and says how many it read in its stats; returns the rows read, 0
// when the export has no such table (the default capture) or it is empty. Rows without an integer time
// are left out and counted.
int64_t readNsysMemoryUsage(NsysDb& db, const NsysKinds& kinds, TraceBuilder& builder);

} // namespace tuneup::analysis
