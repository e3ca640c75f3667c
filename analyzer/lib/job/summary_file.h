#pragma once
// Job summary files: what a machine keeps of the ranks it advised (`tuneup advise --summary-out
// node3.json`), so that the summaries of a job larger than one machine merge into its findings
// (`tuneup advise node*.json`) without moving any trace. JSON, versioned; documented in
// docs/multi-node.md.

#include "advise/advisor.h"

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tuneup::analysis {

// 2: step breakdowns gain the idle inside CUDA graph replays (10 numbers; version 1's 9 are still read).
inline constexpr int kJobSummaryVersion = 2;
// Larger is not a summary (a thousand ranks take a few MB): /dev/zero or an endless pipe must not fill memory.
inline constexpr size_t kMaxJobSummaryBytes = size_t(1) << 30;

class SummaryFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// One rank as a summary file holds it: its summary and its per-rank rules' outcomes.
struct SummarizedRank {
    RankSummary summary;
    std::vector<RuleOutcome> outcomes;
};

// Writes the ranks of `report` with their per-rank rules' outcomes (job-wide rules run again over the
// merged job).
void writeJobSummary(std::ostream& out, const AdviceReport& report, const std::string& toolVersion);

// Throws SummaryFileError saying which file, where and what is wrong.
std::vector<SummarizedRank> readJobSummary(const std::string& path);

} // namespace tuneup::analysis
