#pragma once
// What a rule sees: one rank's trace with its steps and breakdown (per-rank rules), or every rank's
// summary (job-wide rules); and shared helpers (kernel classes, which inputs are present, settings).

#include "advise/kernel_class.h"
#include "advise/rank_summary.h"
#include "advise/rule.h"
#include "units.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tuneup::analysis {

class RuleContext {
public:
    RuleContext(const RankAnalysis& rank, size_t jobRanks)
        : m_rank(rank)
        , m_jobRanks(jobRanks) { }

    const TraceModel& model() const { return *m_rank.model; }
    const StepAnalysis& steps() const { return m_rank.steps; }
    const RankAnalysis& rank() const { return m_rank; }
    size_t jobRanks() const { return m_jobRanks; } // how many ranks the job has
    bool has(Input input) const;
    KernelClass kernelClass(size_t kernel) const { return m_rank.kernelClasses[kernel]; }

    // Median step time, 0 when no steps were found.
    int64_t stepNs() const { return m_rank.steps.medianStepNs(); }
    size_t stepCount() const { return m_rank.steps.detection.steps.size(); }
    // A per-step figure from a total over the trace (divides by the number of steps, or 1).
    int64_t perStep(int64_t totalNs) const { return stepCount() ? totalNs / int64_t(stepCount()) : totalNs; }
    // The gain of saving `perStepNs`, as a share of the median step.
    Gain gain(int64_t perStepNs, std::string model, std::string confidence) const;
    // Sum of the steps' times, 0 when no steps were found.
    int64_t totalStepNs() const;
    // The gain of saving `totalNs` over all steps: perStepNs is its mean per step and stepShare its
    // share of the total step time (for savings concentrated in some steps, such as a DataLoader that
    // stalls every few batches, where a share of the median step would overstate it).
    Gain gainOverSteps(int64_t totalNs, std::string model, std::string confidence) const;

private:
    const RankAnalysis& m_rank;
    size_t m_jobRanks;
};

// What a job-wide rule sees: every rank's summary, in job order.
class JobContext {
public:
    explicit JobContext(std::span<const RankSummary> ranks)
        : m_ranks(ranks) { }
    std::span<const RankSummary> ranks() const { return m_ranks; }

private:
    std::span<const RankSummary> m_ranks;
};

// Whether a rank's trace holds an input. `jobRanks`: how many ranks its job has (Input::MultipleRanks).
bool hasInput(const RankAnalysis& rank, size_t jobRanks, Input input);

// What the torch probes recorded for one framework flag ("cudnn.benchmark"; see FrameworkFlagTable).
struct FlagSummary {
    size_t observations = 0; // rows with this name
    bool everOn = false; // a value > 0 was seen
    bool everOff = false; // a value of 0 was seen
    bool everUnknown = false; // a -1 (the probe could not read it) was seen
    int64_t lastValue = -1; // the value of the last observation
    RowIndex firstRow = kNoRow; // the first observation, for evidence
    bool recorded() const { return observations > 0; }
    // Proven off for the whole recording: every observation read, and all of them 0.
    bool provenOff() const { return everOff && !everOn && !everUnknown; }
};
FlagSummary frameworkFlag(const TraceModel& model, std::string_view name);

// The last value of a fact the Python bootstrap recorded ("tuneup.dataloader.num_workers"), if any.
std::optional<int64_t> programFact(const TraceModel& model, std::string_view name);
// Every value a fact took, in time order (a fact is recorded each time it changes).
std::vector<ProgramFact> programFactSeries(const TraceModel& model, std::string_view name);

} // namespace tuneup::analysis
