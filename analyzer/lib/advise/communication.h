#pragma once
// One rank's collective communication on its breakdown device, per step: what the communication rules
// (communication-bound, rank-straggler) compare across ranks. Kept in every rank's summary, so a job's
// ranks compare without holding their events.

#include "advise/finding.h"
#include "advise/kernel_class.h"
#include "steps/breakdown.h"

#include <array>
#include <string_view>
#include <vector>

namespace tuneup::analysis {

enum class CommKind { AllReduce, AllGather, ReduceScatter, AllToAll, Broadcast, Other, Count };
std::string_view commKindName(CommKind kind); // "all-reduce"
CommKind commKind(std::string_view kernelName);

struct CommProfile {
    size_t kernels = 0; // communication kernels within the steps
    int64_t medianCommNs = 0; // communication time per step (merged spans, waiting included), median over steps
    int64_t medianExposedNs = 0; // not overlapped by compute (the breakdown's communicationNs), median over steps
    std::array<int64_t, size_t(CommKind::Count)> kindNs {}; // kernel time by kind, within the steps
    std::vector<EventRef> events; // the first kernels, for evidence
};

// `kernelClasses` is parallel to model.kernels (classifyKernels).
CommProfile communicationProfile(
    const TraceModel& model, const StepAnalysis& steps, const std::vector<KernelClass>& kernelClasses);

} // namespace tuneup::analysis
