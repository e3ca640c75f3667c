#include "advise/library_kernels.h"

#include <algorithm>
#include <unordered_map>

namespace tuneup::analysis {

namespace {

template <class Table> CallKernels link(const TraceModel& m, const Table& calls) {
    std::vector<std::vector<RowIndex>> perCall(calls.size());
    // 1. External correlation: the ids the agent pushed to CUPTI around each call.
    std::unordered_map<uint64_t, size_t> callOfId;
    for (size_t i = 0; i < calls.size(); ++i)
        if (calls.externalId[i] != 0) callOfId.emplace(calls.externalId[i], i);
    const ExternalCorrelationTable& e = m.externalCorrelations;
    if (!callOfId.empty())
        for (size_t i = 0; i < e.size(); ++i) {
            auto call = callOfId.find(e.externalId[i]);
            const auto kernel = m.kernelByCorrelation(e.correlation[i]);
            if (call != callOfId.end() && kernel) perCall[call->second].push_back(*kernel);
        }
    CallKernels out;
    for (const auto& k : perCall)
        out.byExternalId += !k.empty();

    // 2. Launches on the call's thread inside its window (api calls are sorted by start).
    std::vector<std::vector<RowIndex>> apisByThread(m.threads.size());
    for (size_t i = 0; i < m.apiCalls.size(); ++i)
        if (m.apiCalls.thread[i] < apisByThread.size() && m.apiCalls.correlation[i] != 0)
            apisByThread[m.apiCalls.thread[i]].push_back(RowIndex(i));
    for (size_t c = 0; c < calls.size(); ++c) {
        if (!perCall[c].empty() || calls.thread[c] >= apisByThread.size()) continue;
        const auto& apis = apisByThread[calls.thread[c]];
        auto it = std::lower_bound(apis.begin(), apis.end(), calls.startNs[c],
            [&m](RowIndex api, int64_t t) { return m.apiCalls.startNs[size_t(api)] < t; });
        for (; it != apis.end() && m.apiCalls.startNs[size_t(*it)] <= calls.endNs[c]; ++it)
            if (const auto kernel = m.kernelByCorrelation(m.apiCalls.correlation[size_t(*it)]))
                perCall[c].push_back(*kernel);
        out.byTimeWindow += !perCall[c].empty();
    }

    out.offsets.reserve(calls.size() + 1);
    out.offsets.push_back(0);
    for (auto& k : perCall) {
        std::sort(k.begin(), k.end());
        k.erase(std::unique(k.begin(), k.end()), k.end());
        out.kernels.insert(out.kernels.end(), k.begin(), k.end());
        out.offsets.push_back(uint32_t(out.kernels.size()));
    }
    return out;
}

} // namespace

CallKernels gemmCallKernels(const TraceModel& model) {
    return link(model, model.gemmCalls);
}
CallKernels convCallKernels(const TraceModel& model) {
    return link(model, model.convCalls);
}

} // namespace tuneup::analysis
