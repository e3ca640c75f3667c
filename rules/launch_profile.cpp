#include "launch_profile.h"

#include "advise/kernel_origin.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <unordered_map>

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

// Each graph replay on `device`: from its first node's start to its last node's end (kernels, copies
// and sets of one launch call), keyed by the call.
std::unordered_map<RowIndex, TimeSpan> graphReplays(const TraceModel& m, int32_t device) {
    std::unordered_map<RowIndex, bool> isGraph; // by launch call
    std::unordered_map<RowIndex, TimeSpan> replays;
    auto add = [&](const auto& table) {
        for (size_t i = 0; i < table.size(); ++i) {
            const RowIndex call = table.apiCall[i];
            if (call == kNoRow || table.device[i] != device) continue;
            auto [known, added] = isGraph.try_emplace(call, false);
            if (added) known->second = isGraphLaunchCall(m, call);
            if (!known->second) continue;
            auto [it, first] = replays.try_emplace(call, TimeSpan { table.startNs[i], table.endNs[i] });
            if (!first) {
                it->second.startNs = std::min(it->second.startNs, table.startNs[i]);
                it->second.endNs = std::max(it->second.endNs, table.endNs[i]);
            }
        }
    };
    add(m.kernels);
    add(m.memcpys);
    add(m.memsets);
    return replays;
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
    p.gapInGraph.assign(analysis.gaps.size(), 0);
    if (steps.empty()) return p;

    // Which step a time falls in, or none (steps are sorted and do not overlap).
    auto stepOf = [&](int64_t t) -> std::optional<size_t> {
        auto it
            = std::upper_bound(steps.begin(), steps.end(), t, [](int64_t v, const Step& s) { return v < s.startNs; });
        if (it == steps.begin() || t >= std::prev(it)->endNs) return std::nullopt;
        return size_t(std::prev(it) - steps.begin());
    };

    // Launches whose GPU work starts inside a step: kernels launched one by one, and graph replays.
    const auto replays = graphReplays(m, analysis.device);
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
        const RowIndex call = k.apiCall[i];
        if (call != kNoRow && replays.count(call)) {
            ++p.graphKernels;
            continue;
        }
        ++p.kernels;
        addLaunch(k.endNs[i] - k.startNs[i]);
        if (call != kNoRow) launchCalls.push_back(m.apiCalls.endNs[size_t(call)] - m.apiCalls.startNs[size_t(call)]);
    }
    std::vector<TimeSpan> replaySpans;
    replaySpans.reserve(replays.size());
    for (const auto& [call, span] : replays) {
        replaySpans.push_back(span);
        if (!stepOf(span.startNs)) continue;
        ++p.graphReplays;
        addLaunch(span.durationNs());
    }
    replaySpans = mergeSpans(std::move(replaySpans));
    p.launchesPerStep = double(p.kernels + p.graphReplays) / double(steps.size());
    p.medianLaunchNs = medianOf(std::move(durations));
    p.smallLaunchTimeShare = launchNs > 0 ? double(smallNs) / double(launchNs) : 0.0;
    p.medianLaunchCallNs = medianOf(std::move(launchCalls));

    for (size_t i = 0; i < analysis.gaps.size(); ++i) {
        const IdleGap& g = analysis.gaps[i];
        const auto step = size_t(g.step);
        // Between two nodes of one replay: the host had queued all of it already.
        auto replay = std::upper_bound(replaySpans.begin(), replaySpans.end(), g.span.startNs,
            [](int64_t t, const TimeSpan& s) { return t < s.startNs; });
        if (replay != replaySpans.begin() && g.span.endNs <= std::prev(replay)->endNs) {
            p.gapInGraph[i] = 1;
            p.graphGapNs[step] += g.hostNs();
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
