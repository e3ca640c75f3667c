#pragma once
// Imports the traces of a job (one file per rank) side by side: a thread per file, up to the machine's
// cores, so eight rank files take about the time of the largest one.

#include "import/importer.h"

#include <functional>
#include <string>
#include <vector>

namespace tuneup::analysis {

struct ImportManyOptions {
    // Called now and then with the files finished so far and the bytes read over all files; from the
    // importing threads, one call at a time. May throw (to cancel): the import then stops as for an error.
    std::function<void(size_t filesDone, uint64_t bytesRead)> progress;
    unsigned threads = 0; // 0: one per core
};

// Imports every file and hands each trace to `use(index, model)` on the thread that read it; at most
// `threads` traces are alive at once (plus those `use` keeps). When a file fails, or `use` or the
// progress callback throws, no further file is started, and the error of the first failing file in
// `paths` order is thrown (ImportError, TuneupFileError, ...) once every thread has finished.
void forEachTrace(const std::vector<std::string>& paths, const std::function<void(size_t, TraceModel&&)>& use,
    const ImportManyOptions& options = {});

// The models in the order of `paths`; errors as forEachTrace.
std::vector<TraceModel> importTraces(const std::vector<std::string>& paths, const ImportManyOptions& options = {});

} // namespace tuneup::analysis
