#include "advise/communication.h"

#include "saturating.h"

#include <algorithm>

namespace tuneup::analysis {

namespace {

constexpr size_t kEvidenceKernels = 50;

bool contains(std::string_view s, std::string_view part) {
    return s.find(part) != std::string_view::npos;
}

int64_t median(std::vector<int64_t> v) {
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
    return v[v.size() / 2];
}

} // namespace

std::string_view commKindName(CommKind kind) {
    static constexpr std::array<std::string_view, size_t(CommKind::Count)> kNames { "all-reduce", "all-gather",
        "reduce-scatter", "all-to-all/send-recv", "broadcast", "other" };
    return kind < CommKind::Count ? kNames[size_t(kind)] : "other";
}

CommKind commKind(std::string_view kernel) {
    if (contains(kernel, "AllReduce") || contains(kernel, "all_reduce") || contains(kernel, "allreduce"))
        return CommKind::AllReduce;
    if (contains(kernel, "AllGather") || contains(kernel, "all_gather") || contains(kernel, "allgather"))
        return CommKind::AllGather;
    if (contains(kernel, "ReduceScatter") || contains(kernel, "reduce_scatter")) return CommKind::ReduceScatter;
    if (contains(kernel, "SendRecv") || contains(kernel, "AllToAll") || contains(kernel, "AlltoAll")
        || contains(kernel, "_Send") || contains(kernel, "_Recv"))
        return CommKind::AllToAll;
    if (contains(kernel, "Broadcast")) return CommKind::Broadcast;
    return CommKind::Other;
}

CommProfile communicationProfile(
    const TraceModel& m, const StepAnalysis& analysis, const std::vector<KernelClass>& kernelClasses) {
    const auto& steps = analysis.detection.steps;
    CommProfile p;
    std::vector<TimeSpan> spans;
    size_t step = 0; // kernels and steps are sorted by start
    for (size_t i = 0; i < m.kernels.size(); ++i) {
        if (m.kernels.device[i] != analysis.device || kernelClasses[i] != KernelClass::Communication) continue;
        spans.push_back({ m.kernels.startNs[i], m.kernels.endNs[i] });
        while (step < steps.size() && steps[step].endNs <= m.kernels.startNs[i])
            ++step;
        const bool inStep = step < steps.size() && m.kernels.endNs[i] > steps[step].startNs;
        if (!inStep) continue;
        ++p.kernels;
        int64_t& kindNs = p.kindNs[size_t(commKind(m.str(m.kernels.name[i])))];
        kindNs = saturatingAdd(kindNs, m.kernels.endNs[i] - m.kernels.startNs[i]);
        if (p.events.size() < kEvidenceKernels) p.events.push_back({ EventTable::Kernel, RowIndex(i) });
    }
    const auto merged = mergeSpans(std::move(spans));
    std::vector<int64_t> perStep;
    perStep.reserve(steps.size());
    for (const Step& s : steps)
        perStep.push_back(coveredNs(merged, s.startNs, s.endNs));
    p.medianCommNs = median(std::move(perStep));
    std::vector<int64_t> exposed;
    exposed.reserve(analysis.perStep.size());
    for (const StepBreakdown& b : analysis.perStep)
        exposed.push_back(b.communicationNs);
    p.medianExposedNs = median(std::move(exposed));
    return p;
}

} // namespace tuneup::analysis
