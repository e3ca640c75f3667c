#pragma once
// Run history (`tuneup history add/show`, `tuneup compare --against-history`): each run's summary — what
// compare keeps of it (RunProfile), never its events — in a SQLite file, so that a CI job can follow the
// trend and compare a new run with the last runs recorded in the same environment.
//
// The file: table `runs(id, added_at, label, fingerprint, steps, median_ms, profile)`, `profile` the run's
// summary as JSON (run_profile_json.h); PRAGMA application_id 0x54554848 ("TUHH") and user_version 1.

#include "compare/run_profile.h"

#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tuneup::analysis {

class HistoryError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct HistoryEntry {
    int64_t id = 0;
    std::string addedAt; // UTC, "2026-11-25T02:31:07Z"
    std::string label; // --label: a commit, a version, a date
    std::string fingerprint; // environmentFingerprint of the run's environment
    RunProfile profile;
};

// The environment as one comparable string: "arch=x86_64; gpu.model=NVIDIA H100 80GB HBM3; world_size=8".
std::string environmentFingerprint(const Environment& env);

// Adds a run's summary, creating the file when it does not exist. Returns the entry's id. Throws
// HistoryError (which file, what is wrong, what to do).
int64_t addToHistory(const std::string& path, const RunProfile& profile, const std::string& label);

// Every entry, oldest first. Throws HistoryError: a missing file, a file that is not a tuneup history,
// a damaged entry (its id said).
std::vector<HistoryEntry> readHistory(const std::string& path);

// The last `count` entries recorded in `fingerprint`'s environment, as one side of a comparison: each
// entry one run (RunProfile::runs), the breakdown and kernels per step their mean, the findings and
// settings the latest's. Throws HistoryError when there is none, naming the environments there are.
RunProfile historyBaseline(
    const std::vector<HistoryEntry>& history, const std::string& fingerprint, size_t count, const std::string& path);

// `tuneup history show`: per environment, each run's median step and its change from the one before.
void writeHistoryText(std::ostream& out, const std::vector<HistoryEntry>& history);
void writeHistoryJson(std::ostream& out, const std::vector<HistoryEntry>& history);
// One self-contained page: each environment's trend as a chart (median step per run, p10-p90 band) and a table.
void writeHistoryHtml(std::ostream& out, const std::vector<HistoryEntry>& history);

} // namespace tuneup::analysis
