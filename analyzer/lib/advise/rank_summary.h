#pragma once
// What a job keeps of one rank once its own rules have run: what the reports show, and what the
// job-wide rules (rank-straggler, communication-bound) compare across ranks. It holds no events, so a
// job of a thousand ranks fits in memory, and it is written to and read from summary files
// (`tuneup advise --summary-out`) for jobs larger than one machine.

#include "advise/communication.h"
#include "advise/rank_analysis.h"
#include "advise/rule.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tuneup::analysis {

struct KernelTotal {
    std::string name;
    int64_t count = 0;
    int64_t totalNs = 0;
    int64_t meanNs() const { return count ? totalNs / count : 0; }
};

struct RankSummary {
    std::string path; // the trace file
    SourceFormat format = SourceFormat::Unknown;
    int rank = -1; // from the trace, else the file's place in the job
    size_t eventCount = 0;
    std::optional<TimeSpan> span; // first to last event
    std::string deviceName; // the breakdown device's model ("NVIDIA H100 80GB HBM3"), "" when unknown
    StepAnalysis steps; // steps and breakdowns; without the idle gaps and host states
    CommProfile communication;
    size_t collectiveCount = 0; // collective operations (record_param_comms, NVTX), kernels or not
    uint32_t inputs = 0; // one bit per Input the trace holds
    // What the program ran with: torch flags ("cudnn.benchmark" -> "on"), then the Python bootstrap's facts.
    std::vector<std::pair<std::string, std::string>> settings;
    int64_t kernelCount = 0, kernelNs = 0; // over the whole trace
    std::vector<KernelTotal> topKernels; // by total time, largest first (kTopKernels at most)
    // What recording or reading the trace lost, repaired or could not read: its data_loss and error stats
    // with a count (the recording's own drops among them, as recording.*). Every report shows them.
    std::vector<ImportStat> losses;

    bool has(Input input) const { return (inputs >> unsigned(input)) & 1u; }
};

inline constexpr size_t kTopKernels = 15;

// The summary of an analysed rank. `jobRanks` is the number of ranks in its job.
RankSummary summarizeRank(const RankAnalysis& rank, size_t jobRanks);

// What the recording says the program ran with, last value of each: the torch probes' flags
// ("cudnn.benchmark" -> "on", "off" or "unknown") then the Python bootstrap's facts without their
// "tuneup." prefix ("dataloader.num_workers" -> "0"). Empty for traces that record neither.
std::vector<std::pair<std::string, std::string>> recordedSettings(const TraceModel& model);

// The `n` kernels (by name) with the most time, largest first; `count` and `totalNs` get all kernels'.
std::vector<KernelTotal> topKernels(
    const TraceModel& model, size_t n, int64_t* count = nullptr, int64_t* totalNs = nullptr);

} // namespace tuneup::analysis
