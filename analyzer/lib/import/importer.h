#pragma once
// One entry for every format tuneup reads: recognises the file by its content and imports it.

#include "model/trace_model.h"

#include <functional>
#include <string>

namespace tuneup::analysis {

struct ImportOptions {
    std::function<void(uint64_t bytesRead)> progress; // for long imports (Kineto JSON)
};

// Throws ImportError or TuneupFileError (both std::runtime_error) with a message that names the
// file, the place and the problem.
TraceModel importTrace(const std::string& path, const ImportOptions& options = {});

} // namespace tuneup::analysis
