#pragma once
// Importer for PyTorch profiler / Kineto Chrome-trace JSON, plain or gzip-compressed: the object form
// {"traceEvents": [...], ...} and the 2020 top-level-array form. The text is streamed (never held
// whole): one thread inflates, the events are cut into windows parsed on the other cores and merged
// in order. Numbers are read as text so timestamps are exact integer nanoseconds; unknown keys and
// categories are counted and skipped.

#include "model/trace_model.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace tuneup::analysis {

struct KinetoImportOptions {
    // Called about once per MiB with the uncompressed bytes read so far (for a progress display).
    std::function<void(uint64_t bytesRead)> progress;
    // Read and inflate on a second thread, and parse on worker threads; false does it all on the
    // calling thread.
    bool background = true;
    // Worker threads parsing events (0: one per core, at most 4).
    int parsingThreads = 0;
    // About how much text a parsing window holds (0: the default); tests use small ones to cut often.
    size_t windowBytes = 0;
};

// Reads a Kineto trace file (compression recognised by content). Throws ImportError naming the
// file, the byte offset in the (uncompressed) text and what was wrong.
TraceModel importKinetoJson(const std::string& path, const KinetoImportOptions& options = {});

// The same from bytes in memory (plain or gzip); `name` stands for the file in messages.
TraceModel importKinetoJsonBytes(
    std::string_view bytes, const std::string& name, const KinetoImportOptions& options = {});

} // namespace tuneup::analysis
