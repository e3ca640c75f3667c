#include "steps/breakdown.h"

#include "advise/kernel_class.h"
#include "advise/kernel_origin.h"
#include "saturating.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace tuneup::analysis {

std::vector<TimeSpan> mergeSpans(std::vector<TimeSpan> spans) {
    // Spans from a sorted table come sorted: checking is a fraction of sorting a million again.
    const auto byStart = [](const TimeSpan& a, const TimeSpan& b) { return a.startNs < b.startNs; };
    if (!std::is_sorted(spans.begin(), spans.end(), byStart)) std::sort(spans.begin(), spans.end(), byStart);
    size_t merged = 0; // merged in place: spans[0, merged) is the result so far
    for (const TimeSpan& s : spans) {
        if (s.endNs <= s.startNs) continue;
        if (merged > 0 && s.startNs <= spans[merged - 1].endNs)
            spans[merged - 1].endNs = std::max(spans[merged - 1].endNs, s.endNs);
        else
            spans[merged++] = s;
    }
    spans.resize(merged);
    return spans;
}

int64_t coveredNs(const std::vector<TimeSpan>& merged, int64_t start, int64_t end) {
    auto it = std::lower_bound(
        merged.begin(), merged.end(), start, [](const TimeSpan& s, int64_t t) { return s.endNs <= t; });
    int64_t total = 0;
    for (; it != merged.end() && it->startNs < end; ++it)
        total += std::min(it->endNs, end) - std::max(it->startNs, start);
    return total;
}

std::string describeIdleGap(const IdleGap& gap, const HostState& mainThread, std::string_view machine) {
    if (gap.inGraph) return "inside a CUDA graph replay (queued already)";
    const bool known = mainThread.activity != HostActivity::Unknown;
    const std::string state = describeHostState(mainThread, machine);
    if (gap.dataNs >= gap.syncNs() && gap.dataNs >= gap.hostNs())
        return "main thread " + (known ? state : std::string("waiting")) + " for the DataLoader";
    if (gap.syncNs() >= gap.hostNs())
        return "after a synchronisation with the GPU" + (known ? " (main thread " + state + ")" : std::string());
    if (!known) return "launch and Python overhead";
    if (mainThread.activity == HostActivity::Running) return "launch and Python overhead (main thread running)";
    return "main thread " + state + ", not launching work";
}

bool isDataLoaderWait(std::string_view name) {
    return name == "DataLoader.next"
        || (name.find("DataLoader") != std::string_view::npos && name.find("__next__") != std::string_view::npos);
}

std::vector<TimeSpan> dataLoaderWaits(const TraceModel& model) {
    std::vector<TimeSpan> spans;
    const auto& a = model.annotations;
    for (size_t i = 0; i < a.size(); ++i) {
        const std::string_view name = model.str(a.name[i]);
        if (isDataLoaderWait(name)) spans.push_back({ a.startNs[i], a.endNs[i] });
    }
    return mergeSpans(std::move(spans));
}

std::vector<TimeSpan> hostSynchronisations(const TraceModel& model) {
    std::vector<TimeSpan> spans;
    const auto& api = model.apiCalls;
    for (size_t i = 0; i < model.syncs.size(); ++i) {
        if (model.syncs.type[i] == SyncType::StreamWaitEvent) // a GPU-side wait: the host goes on
            continue;
        const RowIndex call = model.syncs.apiCall[i]; // CUPTI also reports cudaEventQuery, which does not block
        if (call != kNoRow && model.str(api.name[size_t(call)]).find("Query") != std::string_view::npos) continue;
        spans.push_back({ model.syncs.startNs[i], model.syncs.endNs[i] });
    }
    // A million calls share a few dozen names: decide once per name.
    std::unordered_map<StringId, bool> blocks;
    for (size_t i = 0; i < api.size(); ++i) {
        auto [it, added] = blocks.try_emplace(api.name[i], false);
        if (added) {
            const std::string_view name = model.str(api.name[i]);
            it->second = name.find("Synchronize") != std::string_view::npos || name == "cudaMemcpy"
                || name.starts_with("cudaMemcpy_v") || name == "cuMemcpyDtoH_v2" || name == "cuMemcpyHtoD_v2";
        }
        if (it->second) spans.push_back({ api.startNs[i], api.endNs[i] });
    }
    return mergeSpans(std::move(spans));
}

namespace {

template <class Table> void addBusyTime(std::map<int32_t, int64_t>& busy, const Table& t) {
    for (size_t i = 0; i < t.size(); ++i) {
        int64_t& ns = busy[t.device[i]];
        ns = saturatingAdd(ns, t.endNs[i] - t.startNs[i]); // a damaged trace's can wrap
    }
}

int32_t busiestDevice(const TraceModel& model) {
    std::map<int32_t, int64_t> busy;
    addBusyTime(busy, model.kernels);
    if (busy.empty()) { // copies and sets alone are GPU activity too
        addBusyTime(busy, model.memcpys);
        addBusyTime(busy, model.memsets);
    }
    if (busy.empty()) return -1;
    return std::max_element(busy.begin(), busy.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
    })->first;
}

template <class Table, class Keep> std::vector<TimeSpan> spansOf(const Table& t, int32_t device, Keep keep) {
    std::vector<TimeSpan> spans;
    spans.reserve(t.size()); // exact on one GPU; no doubling of a column-sized list
    for (size_t i = 0; i < t.size(); ++i)
        if (t.device[i] == device && keep(i)) spans.push_back({ t.startNs[i], t.endNs[i] });
    return spans;
}

// `merged` united with `spans` (sorted by start, as spansOf gives them from a sorted table), in place.
std::vector<TimeSpan> unite(std::vector<TimeSpan> merged, std::vector<TimeSpan> spans) {
    if (spans.empty()) return merged;
    const auto byStart = [](const TimeSpan& x, const TimeSpan& y) { return x.startNs < y.startNs; };
    if (!std::is_sorted(spans.begin(), spans.end(), byStart)) std::sort(spans.begin(), spans.end(), byStart);
    const auto middle = long(merged.size());
    merged.reserve(merged.size() + spans.size());
    merged.insert(merged.end(), spans.begin(), spans.end());
    spans = {};
    std::inplace_merge(merged.begin(), merged.begin() + middle, merged.end(), byStart);
    return mergeSpans(std::move(merged));
}

// Time each step's [start, end) is covered by `merged`.
std::vector<int64_t> coverage(const std::vector<TimeSpan>& merged, const std::vector<Step>& steps) {
    std::vector<int64_t> covered(steps.size());
    for (size_t i = 0; i < steps.size(); ++i)
        covered[i] = coveredNs(merged, steps[i].startNs, steps[i].endNs);
    return covered;
}

// CPU and GPU timestamps may disagree by a microsecond or two: a synchronisation that returns
// that much before the GPU's last work ends still waited for it.
constexpr int64_t kSyncSlackNs = 2'000;

// Calls f(gap) for each gap of `busy` (merged) inside [start, end).
template <class F> void forEachGap(const std::vector<TimeSpan>& busy, int64_t start, int64_t end, F&& f) {
    int64_t cursor = start;
    auto it
        = std::lower_bound(busy.begin(), busy.end(), start, [](const TimeSpan& s, int64_t t) { return s.endNs <= t; });
    for (; it != busy.end() && it->startNs < end; ++it) {
        if (it->startNs > cursor) f(TimeSpan { cursor, it->startNs });
        cursor = std::max(cursor, it->endNs);
    }
    if (cursor < end) f(TimeSpan { cursor, end });
}

} // namespace

StepAnalysis analyzeSteps(
    const TraceModel& model, std::string_view userRange, const std::vector<KernelClass>* kernelClasses) {
    StepAnalysis result;
    result.detection = detectSteps(model, userRange);
    result.device = busiestDevice(model);
    const int32_t device = result.device;

    // Work counts once, in order of precedence: compute, then communication, copies and sets over
    // what is still free. One merged list lives at a time, grown level by level (memory: a trace of
    // millions of kernels).
    const std::vector<Step>& steps = result.detection.steps;
    std::vector<int64_t> compute, withComm, withCopies;
    std::vector<TimeSpan> busy;
    {
        const std::vector<KernelClass> computed = kernelClasses ? std::vector<KernelClass>() : classifyKernels(model);
        const std::vector<KernelClass>& classes = kernelClasses ? *kernelClasses : computed;
        busy = mergeSpans(
            spansOf(model.kernels, device, [&](size_t i) { return classes[i] != KernelClass::Communication; }));
        compute = coverage(busy, steps);
        busy = unite(std::move(busy),
            spansOf(model.kernels, device, [&](size_t i) { return classes[i] == KernelClass::Communication; }));
    }
    withComm = coverage(busy, steps);
    busy = unite(std::move(busy), spansOf(model.memcpys, device, [](size_t) { return true; }));
    withCopies = coverage(busy, steps);
    busy = unite(std::move(busy), spansOf(model.memsets, device, [](size_t) { return true; }));
    const auto data = dataLoaderWaits(model);
    const auto syncs = hostSynchronisations(model);
    const auto replays = mergeSpans(graphReplays(model, device));

    size_t gapCount = 0;
    for (const Step& step : steps)
        forEachGap(busy, step.startNs, step.endNs, [&](const TimeSpan&) { ++gapCount; });
    result.gaps.reserve(gapCount);
    result.perStep.reserve(steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
        StepBreakdown b;
        const int64_t s = steps[i].startNs, e = steps[i].endNs;
        const int64_t all = coveredNs(busy, s, e);
        b.stepNs = e - s;
        b.computeNs = compute[i];
        b.communicationNs = withComm[i] - compute[i];
        b.memcpyNs = withCopies[i] - withComm[i];
        b.memsetNs = all - withCopies[i];
        b.idleNs = b.stepNs - all;
        forEachGap(busy, s, e, [&](const TimeSpan& gap) {
            IdleGap g;
            g.step = int32_t(i);
            g.span = gap;
            // Between two nodes of one replay: the launch call had queued every node before the first
            // ran, so the GPU waited on the graph's own dependencies, not on the host.
            auto replay = std::upper_bound(replays.begin(), replays.end(), gap.startNs,
                [](int64_t t, const TimeSpan& x) { return t < x.startNs; });
            g.inGraph = replay != replays.begin() && gap.endNs <= std::prev(replay)->endNs;
            if (g.inGraph) {
                b.idleGraphNs += g.graphNs();
                result.gaps.push_back(g);
                return;
            }
            g.dataNs = coveredNs(data, gap.startNs, gap.endNs);
            // The GPU ran dry while the host sat in a synchronisation (it entered before the gap
            // opened and still waited then): the rest of the gap, until the host queued new work,
            // is the price of that synchronisation. One that starts inside the gap (the host
            // syncing after CPU work) did not cause it.
            auto sync = std::upper_bound(
                syncs.begin(), syncs.end(), gap.startNs, [](int64_t t, const TimeSpan& x) { return t < x.startNs; });
            // Without GPU work there is nothing to synchronise with: the host's own time.
            g.afterSync = device >= 0 && sync != syncs.begin() && std::prev(sync)->endNs + kSyncSlackNs >= gap.startNs;
            b.idleDataNs += g.dataNs;
            b.idleSyncNs += g.syncNs();
            b.idleHostNs += g.hostNs();
            result.gaps.push_back(g);
        });
        result.perStep.push_back(b);
    }
    result.hostStates = HostStateTimeline(model);
    // The median step's own breakdown (not per-field medians), so its parts add up to its time.
    if (!result.perStep.empty()) {
        std::vector<size_t> order(result.perStep.size());
        for (size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::nth_element(order.begin(), order.begin() + long(order.size() / 2), order.end(),
            [&](size_t x, size_t y) { return result.perStep[x].stepNs < result.perStep[y].stepNs; });
        result.median = result.perStep[order[order.size() / 2]];
    }
    return result;
}

} // namespace tuneup::analysis
