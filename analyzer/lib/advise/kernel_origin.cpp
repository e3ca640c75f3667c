#include "advise/kernel_origin.h"

#include "cuda_api.h"
#include "steps/breakdown.h"

#include <algorithm>
#include <unordered_map>

namespace tuneup::analysis {

bool isGraphLaunch(std::string_view name) {
    if (name.ends_with("_spt")) name.remove_suffix(4); // HIP's per-thread default stream variant
    const std::string_view base = cuda_api::baseName(name);
    return base == "cudaGraphLaunch" || base == "cuGraphLaunch" || base == "hipGraphLaunch";
}

bool isGraphLaunchCall(const TraceModel& model, RowIndex apiCall) {
    return apiCall != kNoRow && isGraphLaunch(model.str(model.apiCalls.name[size_t(apiCall)]));
}

namespace {

// Per row of a table of GPU work (kernels, copies, sets): its launch call replays a graph.
template <class Table> std::vector<char> launchedByGraphLaunch(const TraceModel& model, const Table& t) {
    // Decided once per call name: a trace has millions of launches and a few dozen names.
    std::unordered_map<StringId, bool> byName;
    std::vector<char> replayed(t.size(), 0);
    for (size_t i = 0; i < t.size(); ++i) {
        const RowIndex call = t.apiCall[i];
        if (call == kNoRow) continue;
        const StringId name = model.apiCalls.name[size_t(call)];
        auto [it, added] = byName.try_emplace(name, false);
        if (added) it->second = isGraphLaunch(model.str(name));
        replayed[i] = it->second;
    }
    return replayed;
}

} // namespace

std::vector<char> graphReplayedKernels(const TraceModel& model) {
    std::vector<char> replayed = launchedByGraphLaunch(model, model.kernels);
    for (size_t i = 0; i < replayed.size(); ++i)
        replayed[i] |= model.kernels.graphId[i] != 0;
    return replayed;
}

std::vector<TimeSpan> graphReplays(const TraceModel& model, int32_t device) {
    // By launch call where it is known (a merged trace of several processes may repeat correlation ids),
    // else by correlation id.
    std::unordered_map<RowIndex, TimeSpan> byCall;
    std::unordered_map<uint64_t, TimeSpan> byCorrelation;
    std::vector<TimeSpan> replays; // those without a correlation id, a node each
    auto extend = [](auto& map, auto key, const TimeSpan& node) {
        auto [it, first] = map.try_emplace(key, node);
        if (!first) {
            it->second.startNs = std::min(it->second.startNs, node.startNs);
            it->second.endNs = std::max(it->second.endNs, node.endNs);
        }
    };
    auto add = [&](const auto& table, const std::vector<char>& replayed) {
        for (size_t i = 0; i < table.size(); ++i) {
            if (!replayed[i] || table.device[i] != device) continue;
            const TimeSpan node { table.startNs[i], table.endNs[i] };
            if (table.apiCall[i] != kNoRow)
                extend(byCall, table.apiCall[i], node);
            else if (table.correlation[i] != 0)
                extend(byCorrelation, table.correlation[i], node);
            else
                replays.push_back(node);
        }
    };
    add(model.kernels, graphReplayedKernels(model));
    add(model.memcpys, launchedByGraphLaunch(model, model.memcpys));
    add(model.memsets, launchedByGraphLaunch(model, model.memsets));
    replays.reserve(replays.size() + byCall.size() + byCorrelation.size());
    for (const auto& [call, span] : byCall)
        replays.push_back(span);
    for (const auto& [correlation, span] : byCorrelation)
        replays.push_back(span);
    std::sort(replays.begin(), replays.end(), [](const TimeSpan& a, const TimeSpan& b) {
        return a.startNs != b.startNs ? a.startNs < b.startNs : a.endNs < b.endNs;
    });
    return replays;
}

bool isCompiledRegion(std::string_view name) {
    // Not "autograd::engine::evaluate_function: CompiledFunctionBackward": beyond the compiled backward it
    // holds the engine's eager gradient accumulation (aten::add into the next node's inputs).
    return name == "CompiledFunction" || name == "CompiledFunctionBackward" || name.starts_with("Torch-Compiled Region")
        || name.find("CompiledFxGraph") != std::string_view::npos;
}

namespace {

// The compiled regions of each thread, merged, from a table of ranges (CPU ops or annotations).
template <class Table>
void addRegions(const TraceModel& model, const Table& t, std::vector<std::vector<TimeSpan>>& byThread) {
    std::unordered_map<StringId, bool> byName;
    for (size_t i = 0; i < t.size(); ++i) {
        auto [it, added] = byName.try_emplace(t.name[i], false);
        if (added) it->second = isCompiledRegion(model.str(t.name[i]));
        if (!it->second) continue;
        if (t.thread[i] >= byThread.size()) byThread.resize(size_t(t.thread[i]) + 1);
        byThread[t.thread[i]].push_back({ t.startNs[i], t.endNs[i] });
    }
}

bool inside(const std::vector<TimeSpan>& merged, int64_t t) {
    auto it
        = std::upper_bound(merged.begin(), merged.end(), t, [](int64_t v, const TimeSpan& s) { return v < s.startNs; });
    return it != merged.begin() && t < std::prev(it)->endNs;
}

} // namespace

std::vector<char> launchedInCompiledRegion(const TraceModel& model) {
    std::vector<char> compiled(model.kernels.size(), 0);
    std::vector<std::vector<TimeSpan>> regions; // by thread
    addRegions(model, model.cpuOps, regions);
    addRegions(model, model.annotations, regions);
    if (regions.empty()) return compiled;
    for (auto& spans : regions)
        spans = mergeSpans(std::move(spans));
    for (size_t i = 0; i < model.kernels.size(); ++i) {
        const RowIndex call = model.kernels.apiCall[i];
        if (call == kNoRow) continue;
        const ThreadIndex thread = model.apiCalls.thread[size_t(call)];
        compiled[i] = thread < regions.size() && inside(regions[thread], model.apiCalls.startNs[size_t(call)]);
    }
    return compiled;
}

} // namespace tuneup::analysis
