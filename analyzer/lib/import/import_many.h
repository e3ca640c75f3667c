#pragma once
// Imports the traces of a job (one file per rank) side by side: a thread per file, up to the machine's
// cores, so eight rank files take about the time of the largest one.

#include "import/importer.h"

#include <string>
#include <vector>

namespace tuneup::analysis {

struct ImportManyOptions {
    // Called now and then with the files finished so far and the bytes read over all files; from the
    // importing threads, one call at a time.
    std::function<void(size_t filesDone, uint64_t bytesRead)> progress;
    unsigned threads = 0; // 0: one per core
};

// The models in the order of `paths`. When files fail, throws the error of the first of them in that
// order (ImportError, TuneupFileError, ...), after every thread has finished.
std::vector<TraceModel> importTraces(const std::vector<std::string>& paths, const ImportManyOptions& options = {});

} // namespace tuneup::analysis
