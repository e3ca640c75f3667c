#pragma once
// Reads an Nsight Systems SQLite export (`nsys export --type sqlite`, export schemas 2.x to 3.x) into a
// TraceModel: CUDA kernels, memory copies and sets, synchronisation, runtime and driver API calls, NVTX
// ranges (as user annotations, so step ranges are found as in any trace), GPUs, processes and threads.
// Tables and columns are looked up by name, never by the export's version string. What is read from
// each table: docs/formats.md.

#include "model/trace_model.h"

#include <cstdint>
#include <functional>
#include <string>

namespace tuneup::analysis {

struct NsysImportOptions {
    std::function<void(uint64_t bytesRead)> progress; // an estimate, called as tables are read
};

// Throws ImportError naming the file: not an SQLite file, damaged or cut short, not an nsys export, or
// an export with no CUDA activity and no NVTX ranges (nothing to advise on).
TraceModel importNsysSqlite(const std::string& path, const NsysImportOptions& options = {});

} // namespace tuneup::analysis
