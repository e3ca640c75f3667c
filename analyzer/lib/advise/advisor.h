#pragma once
// Runs the rules over a job: each rank's trace through the per-rank rules (adviseRank), then every
// rank's summary through the job-wide rules (finishAdvice). The two halves let a job's ranks be read one
// at a time and dropped (analyzer/lib/job/), or advised on different machines and merged.

#include "advise/materiality.h"
#include "advise/rule_context.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tuneup::analysis {

using RuleSet = std::vector<std::unique_ptr<Rule>>;

struct AdviseOptions {
    std::string stepRange; // --step-range NAME
    // Threads a rank's rules are evaluated on, side by side (the findings come out the same, in rule order).
    // 0: by the machine's cores, shared among the job's ranks (which are advised side by side too).
    unsigned ruleThreads = 0;
};

// One rank, advised on its own.
struct RankAdvice {
    RankAnalysis analysis; // points into the model
    RankSummary summary;
    std::vector<RuleOutcome> outcomes; // per-rank rules, in rule order
};

struct AdviceReport {
    std::vector<RankSummary> ranks; // in job order
    std::vector<RuleOutcome> outcomes; // per rule in rule order (per rank for per-rank rules)
    std::vector<int> outcomeRank; // parallel to outcomes: the index in `ranks` of a per-rank rule's outcome, else -1
    std::optional<MaterialityFloor> floor; // the floor the findings went through, if any
    size_t findingsBelowFloor = 0; // left out by it (in the outcomes' belowFloor)
    std::vector<const Finding*> ranked() const; // raised findings, largest gain first
    int64_t medianStepNs() const; // over ranks: the median of their medians
};

// `defaultRank`: the rank when the trace does not say (its place in the job); `jobRanks`: how many ranks
// the job has; `loaderWorkers`: its DataLoader workers' activity, when recorded. The result points into
// `model`.
RankAdvice adviseRank(const TraceModel& model, int defaultRank, size_t jobRanks, const RuleSet& rules,
    const AdviseOptions& options, std::vector<LoaderWorker> loaderWorkers = {});

// The job-wide rules over the ranks' summaries, and the report. `rankOutcomes[i]` are rank i's
// per-rank outcomes, as adviseRank made them (or as a summary file holds them).
AdviceReport finishAdvice(
    std::vector<RankSummary> ranks, std::vector<std::vector<RuleOutcome>> rankOutcomes, const RuleSet& rules);

// Both, over traces in memory (one per rank).
AdviceReport advise(const std::vector<TraceModel>& models, const RuleSet& rules, const AdviseOptions& options);

} // namespace tuneup::analysis
