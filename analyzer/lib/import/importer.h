#pragma once
// One entry for every format tuneup reads: recognises the file by its content (format_detect.h) and
// imports it with that format's importer. Adding a format: its reader, its TraceFileFormat with how its
// head is recognised, and one line in importer.cpp's list.

#include "import/format_detect.h"
#include "model/trace_model.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace tuneup::analysis {

struct ImportOptions {
    std::function<void(uint64_t bytesRead)> progress; // for long imports (Kineto JSON, Nsight Systems)
};

struct TraceImporter {
    TraceFileFormat format;
    std::string_view description; // "an Nsight Systems SQLite export (.sqlite)", for files nothing reads
    bool sqlite; // SQLite reads files at any place in them: never from a pipe
    TraceModel (*import)(const std::string& path, const ImportOptions& options);
};
const std::vector<TraceImporter>& traceImporters();

// Throws ImportError or TuneupFileError (both std::runtime_error) with a message that names the
// file, the place and the problem.
TraceModel importTrace(const std::string& path, const ImportOptions& options = {});

} // namespace tuneup::analysis
