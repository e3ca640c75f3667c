// gpu-idle: GPU idle time inside steps that no other rule explains. See gpu-idle.md.

#include "advise/call_sites.h"
#include "all_rules.h"
#include "launch_profile.h"

#include <algorithm>
#include <map>

namespace tuneup::rules {

using namespace analysis;

namespace {

constexpr double kMinShare = 0.10;
constexpr size_t kGapsShown = 5;
// A line of the user's Python the main thread sat at for this share of the sampled gaps is named in the detail.
constexpr double kMainLineShare = 0.25;

// The CPU thread that launches most GPU work: where the training loop runs.
std::optional<ThreadIndex> launchingThread(const TraceModel& m) {
    std::map<ThreadIndex, size_t> launches;
    for (size_t i = 0; i < m.kernels.size(); ++i)
        if (m.kernels.apiCall[i] != kNoRow) ++launches[m.apiCalls.thread[size_t(m.kernels.apiCall[i])]];
    if (launches.empty()) return std::nullopt;
    return std::max_element(launches.begin(), launches.end(), [](const auto& x, const auto& y) {
        return x.second < y.second;
    })->first;
}

// What the thread was doing during a gap: the most specific recorded range (Python function, operator
// or annotation) that covers at least half of it.
template <class Table>
void narrowest(
    const TraceModel& m, const Table& t, ThreadIndex thread, TimeSpan gap, int64_t& bestNs, std::string_view& best) {
    for (size_t i = 0; i < t.size() && t.startNs[i] < gap.endNs; ++i) {
        if (t.thread[i] != thread || t.endNs[i] <= gap.startNs) continue;
        const int64_t overlap = std::min(t.endNs[i], gap.endNs) - std::max(t.startNs[i], gap.startNs);
        const int64_t length = t.endNs[i] - t.startNs[i];
        if (overlap * 2 >= gap.durationNs() && length < bestNs) {
            bestNs = length;
            best = m.str(t.name[i]);
        }
    }
}

std::string hostActivity(const TraceModel& m, std::optional<ThreadIndex> thread, TimeSpan gap) {
    if (!thread) return {};
    int64_t bestNs = INT64_MAX;
    std::string_view best;
    narrowest(m, m.pythonFunctions, *thread, gap, bestNs, best);
    narrowest(m, m.cpuOps, *thread, gap, bestNs, best);
    narrowest(m, m.annotations, *thread, gap, bestNs, best);
    if (best.starts_with("ProfilerStep#"))
        return "no operator recorded on the training thread (Python code between operators)";
    return best.empty() ? "no operator recorded on the training thread (Python code between operators)"
                        : "training thread in " + std::string(best.substr(0, 160));
}

class GpuIdle final : public Rule {
public:
    const RuleInfo& info() const override {
        static const RuleInfo info { "gpu-idle", "GPU idle time no other rule explains",
            "The GPU idles inside steps while the host neither waits for data nor synchronises: host-side work "
            "between kernels and operators.",
            { Input::GpuKernels, Input::Steps } };
        return info;
    }

    void evaluate(const RuleContext& context, RuleOutcome& outcome) const override {
        const LaunchProfile p = launchProfile(context);
        const StepAnalysis& steps = context.steps();
        const TraceModel& m = context.model();
        // A profiler that runs out of buffer stops recording CUDA calls and GPU work while CPU ops go
        // on: a gap after the last recorded CUDA call is missing data, not idle.
        int64_t lastCallNs = INT64_MAX;
        if (!m.apiCalls.empty()) lastCallNs = m.apiCalls.startNs.back();
        auto cutOff = [&](const IdleGap& g) { return g.span.startNs >= lastCallNs; };
        std::vector<int64_t> unclaimed(p.steps);
        int64_t cutNs = 0;
        for (size_t s = 0; s < p.steps; ++s)
            unclaimed[s] = p.unclaimedHostNs(s);
        for (const IdleGap& g : steps.gaps) {
            if (g.hostNs() > 0 && cutOff(g) // a graph's own gaps have none (IdleGap::inGraph)
                && !(p.launchBound && g.span.durationNs() < kLaunchGapNs)) {
                unclaimed[size_t(g.step)] -= g.hostNs();
                cutNs += g.hostNs();
            }
        }
        const std::string cutText = cutNs > 0 ? "; " + formatDuration(cutNs)
                + " after the last recorded CUDA call left out (the trace stops recording GPU work there)"
                                              : std::string();
        // Gaps between the nodes of a CUDA graph replay: the host had queued the whole graph.
        const int64_t graphGapNs = medianOf(p.graphGapNs);
        const std::string graphText = graphGapNs > 0
            ? "; " + formatDuration(graphGapNs) + " per step inside CUDA graph replays left out (queued already)"
            : std::string();
        const int64_t perStepNs = medianOf(unclaimed);
        const double share = p.medianStepNs > 0 ? double(perStepNs) / double(p.medianStepNs) : 0.0;
        const std::string claimed = p.launchBound ? " (short gaps between kernels left to low-gpu-utilization)" : "";
        if (share < kMinShare) {
            outcome.reason = "GPU idle not explained by data loading or synchronisation: " + formatDuration(perStepNs)
                + " in the median step (" + formatPercent(share) + ", below the " + formatPercent(kMinShare)
                + " threshold)" + claimed + cutText + graphText;
            return;
        }

        // The gaps this rule owns, biggest first.
        std::vector<const IdleGap*> gaps;
        int64_t longNs = 0, shortNs = 0;
        size_t longCount = 0, shortCount = 0;
        for (const IdleGap& g : steps.gaps) {
            if (g.hostNs() <= 0 || cutOff(g)) continue; // a graph's own gaps are not the host's (inGraph: hostNs 0)
            const bool isShort = g.span.durationNs() < kLaunchGapNs;
            if (isShort && p.launchBound) continue;
            gaps.push_back(&g);
            (isShort ? shortNs : longNs) += g.hostNs();
            ++(isShort ? shortCount : longCount);
        }
        std::stable_sort(
            gaps.begin(), gaps.end(), [](const IdleGap* x, const IdleGap* y) { return x->hostNs() > y->hostNs(); });

        const auto thread = launchingThread(m);
        Evidence evidence;
        evidence.facts = { { "unexplained GPU idle",
                               formatDuration(perStepNs) + " in the median step of " + formatDuration(p.medianStepNs)
                                   + " (" + formatPercent(share) + ")" },
            { "gaps of " + formatDuration(kLaunchGapNs) + " or more",
                std::to_string(longCount) + ", " + formatDuration(context.perStep(longNs)) + " per step" } };
        if (graphGapNs > 0)
            evidence.facts.push_back({ "inside CUDA graph replays (not counted)",
                formatDuration(graphGapNs) + " per step: the host had queued the whole graph" });
        if (cutNs > 0)
            evidence.facts.push_back(
                { "left out", formatDuration(cutNs) + " after the last recorded CUDA call (missing data)" });
        if (!p.launchBound)
            evidence.facts.push_back({ "shorter gaps",
                std::to_string(shortCount) + ", " + formatDuration(context.perStep(shortNs)) + " per step" });
        // What the main thread did in these gaps, from the agent's samples (tuneup recordings only).
        std::vector<TimeSpan> gapSpans;
        gapSpans.reserve(gaps.size());
        for (const IdleGap* g : gaps)
            gapSpans.push_back(g->span);
        const HostTime hostTime = steps.hostStates.timeIn(gapSpans);
        if (const std::string sampled = describeHostTime(hostTime); !sampled.empty())
            evidence.facts.push_back({ "main thread in these gaps (sampled)", sampled });
        SampledSites lines = sampledSites(m, gapSpans);
        if (const std::string text = describeSampledSites(lines); !text.empty())
            evidence.facts.push_back({ "main thread's code in these gaps (sampled)", text });
        std::string biggest;
        for (size_t i = 0; i < gaps.size() && i < kGapsShown; ++i) {
            const IdleGap& g = *gaps[i];
            std::string activity = hostActivity(m, thread, g.span);
            if (const HostState state = steps.hostStateDuring(size_t(gaps[i] - steps.gaps.data()));
                state.activity != HostActivity::Unknown)
                activity += (activity.empty() ? "main thread " : "; main thread ")
                    + describeHostState(state, m.info.machine);
            const int64_t offset = g.span.startNs - steps.detection.steps[size_t(g.step)].startNs;
            evidence.facts.push_back({ "gap " + std::to_string(i + 1),
                formatDuration(g.hostNs()) + " at " + formatDuration(offset) + " into step "
                    + std::to_string(steps.detection.steps[size_t(g.step)].number)
                    + (activity.empty() ? "" : ": " + activity) });
            if (i == 0) biggest = formatDuration(g.hostNs()) + (activity.empty() ? "" : ", " + activity);
        }
        for (size_t i = 0; i < gaps.size() && evidence.spans.size() < 20; ++i)
            evidence.spans.push_back(gaps[i]->span);
        // Events: the kernel that ends each of the biggest gaps (the GUI jumps to it).
        for (size_t i = 0; i < gaps.size() && evidence.events.size() < 50; ++i) {
            const auto& k = m.kernels;
            auto it = std::lower_bound(k.startNs.begin(), k.startNs.end(), gaps[i]->span.endNs);
            for (; it != k.startNs.end() && *it == gaps[i]->span.endNs; ++it)
                if (k.device[size_t(it - k.startNs.begin())] == steps.device) {
                    evidence.events.push_back({ EventTable::Kernel, RowIndex(it - k.startNs.begin()) });
                    break;
                }
        }
        evidence.eventsTotal = gaps.size();

        Finding f;
        f.sources = std::move(lines.sites);
        f.gain = context.gain(perStepNs,
            "the host-caused idle of the median step that neither data loading, synchronisation nor launch overhead "
            "explains; how much of it can go depends on what the host does then",
            "low");
        f.severity = share >= 0.30 ? Severity::Error : Severity::Warning;
        f.title = "the GPU idles " + formatDuration(perStepNs) + " per step (" + formatPercent(share)
            + ") while the host prepares work; biggest gap " + biggest;
        f.detail = "Idle stretches of the GPU inside steps while the host neither waited for the DataLoader nor sat in "
                   "a synchronisation"
            + claimed
            + ". The host was busy elsewhere: Python code, CPU-side pre- or post-processing, logging, allocations, or "
              "operators that run on the CPU. The evidence lists the biggest gaps and what the training thread was "
              "doing then.";
        if (const std::string why = explainHostTime(hostTime); !why.empty()) f.detail += " " + why;
        if (!f.sources.empty() && f.sources.front().share >= kMainLineShare)
            f.detail += " The main thread's code was mostly at " + f.sources.front().file + ":"
                + std::to_string(f.sources.front().line) + " (" + f.sources.front().function + "), "
                + formatPercent(f.sources.front().share) + " of the samples in these gaps.";
        f.evidence = std::move(evidence);
        f.fixPython = "# Find what the host does in the gaps (with_stack shows the Python lines):\n"
                      "with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],\n"
                      "                            with_stack=True) as prof:\n"
                      "    train_step()\n"
                      "# Then move CPU work out of the step (into DataLoader workers or another thread), keep\n"
                      "# tensors on the GPU, and let torch.compile(model) fuse what remains of the Python overhead.";
        f.fixCpp = "// Move CPU-side work out of the loop (pre-processing into DataLoader workers, logging to\n"
                   "// another thread) so the next kernels are queued before the GPU runs dry:\n"
                   "auto loader = torch::data::make_data_loader(std::move(dataset),\n"
                   "    torch::data::DataLoaderOptions().batch_size(64).workers(8));";
        outcome.findings.push_back(std::move(f));
    }
};

} // namespace

std::unique_ptr<Rule> makeGpuIdle() {
    return std::make_unique<GpuIdle>();
}

} // namespace tuneup::rules
