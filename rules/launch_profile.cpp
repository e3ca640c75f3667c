#include "launch_profile.h"

#include "advise/kernel_origin.h"

#include <algorithm>
#include <cstdio>
#include <optional>

namespace tuneup::rules {

using namespace analysis;

int64_t medianOf(std::vector<int64_t> values) {
    if (values.empty()) return 0;
    std::nth_element(values.begin(), values.begin() + long(values.size() / 2), values.end());
    return values[values.size() / 2];
}

namespace {

std::string count(double n, int decimals) {
    char text[32];
    snprintf(text, sizeof text, "%.*f", decimals, n);
    return text;
}

} // namespace

std::string LaunchProfile::launchesText(int decimals) const {
    const double n = double(std::max<size_t>(steps, 1));
    if (!usesGraphs()) return count(double(kernels) / n, decimals) + " kernels";
    return count(launchesPerStep, decimals) + " launches (" + count(double(graphReplays) / n, decimals)
        + " CUDA graph replays of " + count(double(graphKernels) / n, decimals) + " kernels, "
        + count(double(kernels) / n, decimals) + " kernels launched one by one)";
}

LaunchProfile launchProfile(const RuleContext& context) {
    LaunchProfile p;
    const TraceModel& m = context.model();
    const StepAnalysis& analysis = context.steps();
    const auto& steps = analysis.detection.steps;
    p.steps = steps.size();
    p.launchGapNs.assign(steps.size(), 0);
    p.otherHostNs.assign(steps.size(), 0);
    p.graphGapNs.assign(steps.size(), 0);
    p.launchGapCount.assign(steps.size(), 0);
    if (steps.empty()) return p;

    // Which step a time falls in, or none (steps are sorted and do not overlap).
    auto stepOf = [&](int64_t t) -> std::optional<size_t> {
        auto it
            = std::upper_bound(steps.begin(), steps.end(), t, [](int64_t v, const Step& s) { return v < s.startNs; });
        if (it == steps.begin() || t >= std::prev(it)->endNs) return std::nullopt;
        return size_t(std::prev(it) - steps.begin());
    };

    // Launches whose GPU work starts inside a step: kernels launched one by one, and graph replays.
    const std::vector<TimeSpan> replays = graphReplays(m, analysis.device);
    const std::vector<char> replayed = graphReplayedKernels(m);
    std::vector<int64_t> durations, launchCalls;
    int64_t launchNs = 0, smallNs = 0;
    auto addLaunch = [&](int64_t d) {
        durations.push_back(d);
        launchNs += d;
        smallNs += d < kSmallKernelNs ? d : 0;
    };
    const auto& k = m.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
        if (k.device[i] != analysis.device || !stepOf(k.startNs[i])) continue;
        if (replayed[i]) {
            ++p.graphKernels;
            continue;
        }
        const RowIndex call = k.apiCall[i];
        ++p.kernels;
        addLaunch(k.endNs[i] - k.startNs[i]);
        if (call != kNoRow) launchCalls.push_back(m.apiCalls.endNs[size_t(call)] - m.apiCalls.startNs[size_t(call)]);
    }
    for (const TimeSpan& span : replays) {
        if (!stepOf(span.startNs)) continue;
        ++p.graphReplays;
        addLaunch(span.durationNs());
    }
    p.launchesPerStep = double(p.kernels + p.graphReplays) / double(steps.size());
    p.medianLaunchNs = medianOf(std::move(durations));
    p.smallLaunchTimeShare = launchNs > 0 ? double(smallNs) / double(launchNs) : 0.0;
    p.medianLaunchCallNs = medianOf(std::move(launchCalls));

    for (const IdleGap& g : analysis.gaps) {
        const auto step = size_t(g.step);
        // Between two nodes of one replay (the breakdown's own part): the host had queued all of it already.
        if (g.inGraph) {
            p.graphGapNs[step] += g.graphNs();
        } else if (g.span.durationNs() < kLaunchGapNs && g.hostNs() > 0) {
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

    if (p.launchesPerStep < kMinLaunchesPerStep) {
        p.why = p.launchesText(1) + " per step: too few to be launch-bound";
    } else if (p.medianLaunchNs >= kSmallKernelNs) {
        p.why = (p.usesGraphs() ? "launches are not small (median " : "kernels are not small (median ")
            + formatDuration(p.medianLaunchNs) + ", limit " + formatDuration(kSmallKernelNs) + ")";
    } else if (p.busyShare >= kMaxBusyShare) {
        p.why = "the GPU is busy " + formatPercent(p.busyShare) + " of the median step (launch-bound below "
            + formatPercent(kMaxBusyShare) + ")";
    } else if (p.launchGapShare < kMinLaunchGapShare) {
        p.why = "short gaps between kernels idle the GPU " + formatPercent(p.launchGapShare)
            + " of the median step (limit " + formatPercent(kMinLaunchGapShare) + ")";
    } else {
        p.launchBound = true;
        p.why = p.launchesText(0) + " per step, median " + formatDuration(p.medianLaunchNs) + "; GPU busy "
            + formatPercent(p.busyShare) + "; " + formatPercent(p.launchGapShare) + " of the step idle in short gaps";
    }
    return p;
}

} // namespace tuneup::rules
