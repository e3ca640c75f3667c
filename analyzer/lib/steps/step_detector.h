#pragma once
// Training steps in a trace. In order of preference: a range the user names (--step-range),
// ProfilerStep#N (torch.profiler), the tuneup Python bootstrap's "tuneup.step" ranges, ranges named as
// people name iterations ("step", "Step 12", "iteration_5", "train_step"), PyTorch Lightning's training
// batches, the optimizer's ranges (one Optimizer.zero_grad or Optimizer.step per step), ranges that
// frameworks open once per iteration (FSDP2's root pre-forward, DeepSpeed's ZeRO-3 optimizer step and
// forward), then the repeating kernel pattern (a kernel launched once per step at a regular place in the
// sequence), else the whole window as one span.

#include "model/trace_model.h"

#include <string>
#include <string_view>
#include <vector>

namespace tuneup::analysis {

// WholeWindow: nothing marks steps, so the trace's whole window is one span (a short Nsight Systems
// capture, a profile of one layer): the breakdown and the rules still run, on that span. New sources come
// last so that job summaries written before them keep their numbers.
enum class StepSource {
    UserRange,
    ProfilerStep,
    BootstrapRange,
    StepRange,
    OptimizerRanges,
    KernelPattern,
    None,
    WholeWindow,
    FrameworkRanges, // a framework's range around each iteration (PyTorch Lightning)
    FrameworkMarks, // a framework's range at the start of each iteration (FSDP2, DeepSpeed)
};
inline constexpr StepSource kLastStepSource = StepSource::FrameworkMarks;
std::string_view stepSourceName(StepSource s); // "ProfilerStep#N ranges"
// Steps found where each begins run to the next one's start: the last one to the end of the trace, so it is
// no whole step (compare and bench leave it out).
bool lastStepRunsToTheEnd(StepSource s);

struct Step {
    int64_t number = 0; // ProfilerStep#N's N, else the index
    int64_t startNs = 0;
    int64_t endNs = 0;
    RowIndex annotation = kNoRow; // the range that defines it, when there is one
    int64_t durationNs() const { return endNs - startNs; }
};

struct StepDetection {
    StepSource source = StepSource::None;
    std::string detail; // e.g. the range name, or why no steps were found
    std::vector<Step> steps;
};

// `userRange`: a range name given by the user; matches the name exactly or as "NAME#...".
StepDetection detectSteps(const TraceModel& model, std::string_view userRange = {});

} // namespace tuneup::analysis
