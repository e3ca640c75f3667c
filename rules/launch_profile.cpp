#include "launch_profile.h"

#include <algorithm>
#include <cstdio>

namespace tuneup::rules {

using namespace analysis;

int64_t medianOf(std::vector<int64_t> values) {
    if (values.empty()) return 0;
    std::nth_element(values.begin(), values.begin() + long(values.size() / 2), values.end());
    return values[values.size() / 2];
}

LaunchProfile launchProfile(const RuleContext& context) {
    LaunchProfile p;
    const TraceModel& m = context.model();
    const StepAnalysis& analysis = context.steps();
    const auto& steps = analysis.detection.steps;
    p.steps = steps.size();
    p.launchGapNs.assign(steps.size(), 0);
    p.otherHostNs.assign(steps.size(), 0);
    p.launchGapCount.assign(steps.size(), 0);
    if (steps.empty()) return p;

    // Kernels on the step device that start inside a step (steps are sorted and do not overlap).
    std::vector<int64_t> durations, launchCalls;
    int64_t kernelNs = 0, smallNs = 0;
    const auto& k = m.kernels;
    size_t s = 0;
    for (size_t i = 0; i < k.size(); ++i) { // kernels are sorted by start
        if (k.device[i] != analysis.device) continue;
        while (s < steps.size() && steps[s].endNs <= k.startNs[i])
            ++s;
        if (s == steps.size()) break;
        if (k.startNs[i] < steps[s].startNs) continue;
        const int64_t d = k.endNs[i] - k.startNs[i];
        durations.push_back(d);
        kernelNs += d;
        smallNs += d < kSmallKernelNs ? d : 0;
        if (k.apiCall[i] != kNoRow)
            launchCalls.push_back(m.apiCalls.endNs[size_t(k.apiCall[i])] - m.apiCalls.startNs[size_t(k.apiCall[i])]);
    }
    p.kernels = durations.size();
    p.kernelsPerStep = double(p.kernels) / double(steps.size());
    p.medianKernelNs = medianOf(std::move(durations));
    p.smallKernelTimeShare = kernelNs > 0 ? double(smallNs) / double(kernelNs) : 0.0;
    p.medianLaunchCallNs = medianOf(std::move(launchCalls));

    for (const IdleGap& g : analysis.gaps) {
        const auto step = size_t(g.step);
        if (g.span.durationNs() < kLaunchGapNs && g.hostNs() > 0) {
            p.launchGapNs[step] += g.hostNs();
            ++p.launchGapCount[step];
        } else {
            p.otherHostNs[step] += g.hostNs();
        }
    }
    std::vector<int64_t> stepNs, busy;
    for (const StepBreakdown& b : analysis.perStep) {
        stepNs.push_back(b.stepNs);
        busy.push_back(b.stepNs - b.idleNs);
    }
    p.medianStepNs = medianOf(stepNs);
    p.medianBusyNs = medianOf(busy);
    p.medianLaunchGapNs = medianOf(p.launchGapNs);
    p.launchGapShare = p.medianStepNs > 0 ? double(p.medianLaunchGapNs) / double(p.medianStepNs) : 0.0;
    p.busyShare = p.medianStepNs > 0 ? double(p.medianBusyNs) / double(p.medianStepNs) : 0.0;

    char text[256];
    if (p.kernelsPerStep < kMinKernelsPerStep) {
        snprintf(text, sizeof text, "%.1f kernels per step: too few to be launch-bound", p.kernelsPerStep);
    } else if (p.medianKernelNs >= kSmallKernelNs) {
        snprintf(text, sizeof text, "kernels are not small (median %s, limit %s)",
            formatDuration(p.medianKernelNs).c_str(), formatDuration(kSmallKernelNs).c_str());
    } else if (p.busyShare >= kMaxBusyShare) {
        snprintf(text, sizeof text, "the GPU is busy %s of the median step (launch-bound below %s)",
            formatPercent(p.busyShare).c_str(), formatPercent(kMaxBusyShare).c_str());
    } else if (p.launchGapShare < kMinLaunchGapShare) {
        snprintf(text, sizeof text, "short gaps between kernels idle the GPU %s of the median step (limit %s)",
            formatPercent(p.launchGapShare).c_str(), formatPercent(kMinLaunchGapShare).c_str());
    } else {
        p.launchBound = true;
        snprintf(text, sizeof text, "%.0f kernels per step, median %s; GPU busy %s; %s of the step idle in short gaps",
            p.kernelsPerStep, formatDuration(p.medianKernelNs).c_str(), formatPercent(p.busyShare).c_str(),
            formatPercent(p.launchGapShare).c_str());
    }
    p.why = text;
    return p;
}

} // namespace tuneup::rules
