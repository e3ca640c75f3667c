#pragma once
// What a rule sees: one rank's trace with its steps and breakdown, the whole job for job-wide rules,
// and shared helpers (kernel classes, precision, which inputs are present).

#include "advise/kernel_class.h"
#include "advise/rule.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tuneup::analysis {

struct RankAnalysis {
    const TraceModel* model = nullptr;
    StepAnalysis steps;
    std::vector<KernelClass> kernelClasses; // parallel to model->kernels
    int rank = -1; // from the trace, else the file's position in the job
};

class RuleContext {
public:
    RuleContext(const RankAnalysis& rank, std::span<const RankAnalysis> job)
        : m_rank(rank)
        , m_job(job) { }

    const TraceModel& model() const { return *m_rank.model; }
    const StepAnalysis& steps() const { return m_rank.steps; }
    const RankAnalysis& rank() const { return m_rank; }
    std::span<const RankAnalysis> job() const { return m_job; }
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
    std::span<const RankAnalysis> m_job;
};

// Whether a rank's trace holds an input, and why not when it does not.
bool hasInput(const RankAnalysis& rank, std::span<const RankAnalysis> job, Input input);

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

// Helpers many rules share.
std::string formatDuration(int64_t ns); // "61.2 ms", "850 us"
std::string formatBytes(int64_t bytes); // "1.5 GB"
std::string formatPercent(double share); // "40%"

} // namespace tuneup::analysis
