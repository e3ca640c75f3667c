#pragma once
// `tuneup import IN -o OUT.db [--force]`: any trace tuneup reads (Kineto JSON, Nsight Systems SQLite, a
// tuneup file) written as a tuneup file, which the GUI and sqlite3 users open.

#include <string>

namespace tuneup::cli {

struct ImportOptions {
    std::string input;
    std::string output;
    bool force = false; // replace an existing tuneup file (never another kind of file)
};

// Exit codes: 0 written; 1 a bad input file; 2 a usage error (existing output, cannot write it).
int runImport(const ImportOptions& options);

} // namespace tuneup::cli
