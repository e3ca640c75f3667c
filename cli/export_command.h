#pragma once
// `tuneup export FILE --format perfetto [-o OUT]`: a trace of any readable format as Chrome trace JSON
// for Perfetto UI and chrome://tracing, with its steps and the advisor's findings marked.

#include <string>

namespace tuneup::cli {

struct ExportOptions {
    std::string input;
    std::string format = "perfetto"; // perfetto (= chrome)
    std::string output; // default: the input's name + .perfetto.json, in the current folder
    bool force = false;
    bool findings = true; // run the rules and mark their findings
    std::string stepRange;
};

// Exit codes: 0 written; 1 a bad input file; 2 a usage error (unknown format, existing output, cannot write).
int runExport(const ExportOptions& options);

} // namespace tuneup::cli
