#pragma once
// One rank's trace, analysed: its steps with their breakdown and the class of every kernel. What a
// per-rank rule reads, beside the trace itself.

#include "advise/kernel_class.h"
#include "steps/breakdown.h"
#include "steps/loader_workers.h"

#include <vector>

namespace tuneup::analysis {

struct RankAnalysis {
    const TraceModel* model = nullptr;
    StepAnalysis steps;
    std::vector<KernelClass> kernelClasses; // parallel to model->kernels
    int rank = -1; // from the trace, else the file's position in the job
    // Its DataLoader worker processes, from their recordings beside a tuneup file (the job core reads
    // them); empty for other traces, or when none were recorded.
    std::vector<LoaderWorker> loaderWorkers;
};

// Finds the steps, breaks them down and classifies the kernels. `stepRange`: --step-range.
RankAnalysis analyzeRank(const TraceModel& model, int defaultRank, std::string_view stepRange = {});

} // namespace tuneup::analysis
