#pragma once
// The facts stored in a file's meta table when it is created: what ran, where, when, as which
// rank, and what the agent captured.

#include <string>

namespace tuneup::agent {

class TraceDb;

struct ProcessFacts {
    std::string role;
    unsigned long long startNs = 0;
};

void writeMetadata(TraceDb& db, const ProcessFacts& facts, bool reopened);
std::string commandLine(); // /proc/self/cmdline, arguments joined by spaces

} // namespace tuneup::agent
