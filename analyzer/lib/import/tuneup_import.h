#pragma once
// Reads a tuneup trace file (the agent's SQLite, any schema version up to this build's) into a
// TraceModel through the TraceBuilder: GPU activity, API calls, NVTX ranges as annotations, devices,
// threads and the recording's facts (rank, world size, what was captured).

#include "model/trace_model.h"

#include <string>

namespace tuneup::analysis {

// Throws TuneupFileError (import/tuneup_file.h) when the file cannot be read.
TraceModel importTuneupFile(const std::string& path);

} // namespace tuneup::analysis
