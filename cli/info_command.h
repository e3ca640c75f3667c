#pragma once
// `tuneup info`: what a trace file holds.

#include <string>
#include <vector>

namespace tuneup::cli {

struct InfoOptions {
    std::vector<std::string> files;
    bool check = false; // PRAGMA quick_check on every file, whatever its size
};

// Prints one block per file to stdout; returns 1 when any file could not be read.
int runInfo(const InfoOptions& options);

} // namespace tuneup::cli
