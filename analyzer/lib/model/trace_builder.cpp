#include "model/trace_builder.h"

#include "model/parallel_for.h"
#include "model/sort_runs.h"
#include "saturating.h"

#include <algorithm>
#include <numeric>

namespace tuneup::analysis {

namespace {

using Permutation = std::vector<uint32_t>;

// Rows (kernels, API calls, CPU ops, annotations) from which finish() sorts on two threads: below, the
// thread would cost about what it saves.
constexpr size_t kParallelRows = 10000;

// Order by start, the longer event first when two start together (so an enclosing range precedes
// what it encloses), then by arrival: a deterministic order that nesting can be read from.
Permutation sortOrder(const std::vector<int64_t>& start, const std::vector<int64_t>& end) {
    Permutation order(start.size());
    std::iota(order.begin(), order.end(), 0u);
    bool sorted = true;
    for (size_t i = 1; i < start.size() && sorted; ++i)
        sorted = start[i - 1] < start[i] || (start[i - 1] == start[i] && end[i - 1] >= end[i]);
    if (sorted) return {}; // identity: most tables arrive nearly sorted per track, often fully
    stableSortRuns(order, [&](uint32_t a, uint32_t b) {
        if (start[a] != start[b]) return start[a] < start[b];
        return end[a] > end[b];
    });
    return order;
}

// What finish() repaired: rows dropped for a time beyond kMaxTimeNs, ends before starts clamped.
struct TimeRepairs {
    int64_t dropped = 0, clamped = 0;
};

constexpr uint32_t kDroppedRow = UINT32_MAX; // in an old row -> new row map

// Sorts a table by time, leaving out (and counting) rows with an implausible time and clamping (and
// counting) ends before starts; returns old row -> new row, kDroppedRow for rows left out (empty when
// nothing moved).
template <class Table> Permutation sortTable(Table& table, TimeRepairs& repairs) {
    const size_t rows = table.size();
    const auto plausible
        = [&table](size_t i) { return isPlausibleTime(table.startNs[i]) && isPlausibleTime(table.endNs[i]); };
    const auto clamp = [&table, &repairs](size_t i) {
        if (table.endNs[i] >= table.startNs[i]) return;
        table.endNs[i] = table.startNs[i]; // read as instantaneous
        ++repairs.clamped;
    };
    size_t implausible = 0;
    for (size_t i = 0; i < rows; ++i)
        implausible += plausible(i) ? 0 : 1;
    Permutation order;
    if (implausible == 0) {
        for (size_t i = 0; i < rows; ++i)
            clamp(i);
        order = sortOrder(table.startNs, table.endNs);
        if (order.empty()) return {};
    } else {
        repairs.dropped += int64_t(implausible);
        order.reserve(rows - implausible);
        for (uint32_t i = 0; i < rows; ++i)
            if (plausible(i)) {
                clamp(i);
                order.push_back(i);
            }
        stableSortRuns(order, [&table](uint32_t a, uint32_t b) {
            if (table.startNs[a] != table.startNs[b]) return table.startNs[a] < table.startNs[b];
            return table.endNs[a] > table.endNs[b];
        });
    }
    table.select(order);
    Permutation newIndex(rows, kDroppedRow);
    for (uint32_t newRow = 0; newRow < order.size(); ++newRow)
        newIndex[order[newRow]] = newRow;
    return newIndex;
}

// Sorts a table of observations at one instant (timeNs) by time, leaving out (and counting) rows with an
// implausible time; stable, so same-time rows keep their arrival order.
template <class Table> void sortInstants(Table& table, TimeRepairs& repairs) {
    Permutation order;
    for (uint32_t i = 0; i < table.size(); ++i)
        if (isPlausibleTime(table.timeNs[i]))
            order.push_back(i);
        else
            ++repairs.dropped;
    if (order.size() == table.size() && std::is_sorted(table.timeNs.begin(), table.timeNs.end())) return;
    stableSortRuns(order, [&t = table.timeNs](uint32_t x, uint32_t y) { return t[x] < t[y]; });
    table.select(order);
}

// Counter values whose range was left out go with it.
void dropValuesOfDroppedRanges(CounterValueTable& values) {
    if (std::none_of(values.range.begin(), values.range.end(), [](RowIndex r) { return r == kNoRow; })) return;
    Permutation kept;
    for (uint32_t i = 0; i < values.size(); ++i)
        if (values.range[i] != kNoRow) kept.push_back(i);
    values.select(kept);
}

// Moves links to their rows' new places; a link to a row left out becomes kNoRow.
void renumber(std::vector<RowIndex>& links, const Permutation& newIndex) {
    if (newIndex.empty()) return;
    for (auto& link : links)
        if (link >= 0 && static_cast<size_t>(link) < newIndex.size())
            link = newIndex[static_cast<size_t>(link)] == kDroppedRow
                ? kNoRow
                : static_cast<RowIndex>(newIndex[static_cast<size_t>(link)]);
}

// depth/parent by nesting per thread; rows must be sorted by (start, longer first).
void computeNesting(const std::vector<int64_t>& start, const std::vector<int64_t>& end,
    const std::vector<ThreadIndex>& thread, size_t threadCount, std::vector<int32_t>& depth,
    std::vector<RowIndex>& parent) {
    std::vector<std::vector<RowIndex>> stacks(std::max<size_t>(threadCount, 1));
    for (size_t i = 0; i < start.size(); ++i) {
        auto& stack = stacks[thread[i] < stacks.size() ? thread[i] : 0];
        // Pop what ended before this row starts; a row that only overlaps is treated as a sibling.
        while (!stack.empty() && end[static_cast<size_t>(stack.back())] <= start[i])
            stack.pop_back();
        while (!stack.empty() && end[static_cast<size_t>(stack.back())] < end[i])
            stack.pop_back();
        parent[i] = stack.empty() ? kNoRow : stack.back();
        depth[i] = static_cast<int32_t>(stack.size());
        stack.push_back(static_cast<RowIndex>(i));
    }
}

// An API call whose External id names no CPU op (traces rewritten by HTA, where kernels and runtime
// calls carry their correlation id instead) belongs to the innermost CPU op of its thread that
// encloses it in time. Needs cpuOps and apiCalls sorted and the ops' nesting computed.
void linkApiCallsByNesting(TraceModel& m) {
    std::vector<std::vector<RowIndex>> opsByThread(m.threads.size());
    for (size_t i = 0; i < m.cpuOps.size(); ++i)
        if (m.cpuOps.thread[i] < opsByThread.size())
            opsByThread[m.cpuOps.thread[i]].push_back(static_cast<RowIndex>(i));
    // Calls come sorted by start, so each thread's ops that start at or before the call only grow:
    // one cursor per thread walks them once.
    std::vector<size_t> started(m.threads.size(), 0);
    for (size_t i = 0; i < m.apiCalls.size(); ++i) {
        if (m.apiCalls.cpuOp[i] != kNoRow || m.apiCalls.thread[i] >= opsByThread.size()) continue;
        const auto& ops = opsByThread[m.apiCalls.thread[i]];
        const int64_t start = m.apiCalls.startNs[i], end = m.apiCalls.endNs[i];
        // The last op that starts at or before the call, then up its parents to one that encloses it.
        size_t& n = started[m.apiCalls.thread[i]];
        while (n < ops.size() && m.cpuOps.startNs[static_cast<size_t>(ops[n])] <= start)
            ++n;
        if (n == 0) continue;
        RowIndex op = ops[n - 1];
        while (op != kNoRow && m.cpuOps.endNs[static_cast<size_t>(op)] < end)
            op = m.cpuOps.parent[static_cast<size_t>(op)];
        m.apiCalls.cpuOp[i] = op;
    }
}

// The first row with a key, for the links finish() makes (hundreds of thousands of lookups in a large
// trace): a table indexed by the key where the keys are dense enough (CUPTI's correlation ids and
// PyTorch's external ids are counted up), else a binary search of the model's index.
class KeyLookup {
public:
    KeyLookup(const std::vector<RowIndex>& index, const std::vector<uint64_t>& keys)
        : m_index(index)
        , m_keys(keys) {
        if (index.empty()) return;
        m_lowest = keys[static_cast<size_t>(index.front())];
        const uint64_t range = keys[static_cast<size_t>(index.back())] - m_lowest;
        if (range >= 4 * index.size() + 4096) return; // sparse: the index is searched
        m_direct.assign(range + 1, kNoRow);
        for (RowIndex row : index) { // (key, row) order: the first row of each key comes first
            RowIndex& slot = m_direct[keys[static_cast<size_t>(row)] - m_lowest];
            if (slot == kNoRow) slot = row;
        }
    }
    RowIndex operator()(uint64_t key) const {
        if (key == 0) return kNoRow; // "unknown", never a key
        if (!m_direct.empty())
            return key >= m_lowest && key - m_lowest < m_direct.size() ? m_direct[key - m_lowest] : kNoRow;
        const auto it = std::lower_bound(m_index.begin(), m_index.end(), key,
            [this](RowIndex row, uint64_t k) { return m_keys[static_cast<size_t>(row)] < k; });
        return it != m_index.end() && m_keys[static_cast<size_t>(*it)] == key ? *it : kNoRow;
    }

private:
    const std::vector<RowIndex>& m_index;
    const std::vector<uint64_t>& m_keys;
    uint64_t m_lowest = 0;
    std::vector<RowIndex> m_direct; // key - m_lowest -> first row, kNoRow for none
};

// apiCall and cpuOp for GPU-side tables: the API call by correlation, the op by external id or via the call.
template <class Table>
void linkGpuRows(Table& table, const TraceModel& m, const KeyLookup& callByCorrelation, const KeyLookup& opById) {
    for (size_t i = 0; i < table.size(); ++i) {
        const RowIndex api = callByCorrelation(table.correlation[i]);
        table.apiCall[i] = api;
        RowIndex op = opById(table.externalId[i]);
        if (op == kNoRow && api != kNoRow) op = m.apiCalls.cpuOp[static_cast<size_t>(api)];
        table.cpuOp[i] = op;
    }
}

} // namespace

TraceBuilder::TraceBuilder(SourceFormat format, std::string path) {
    m_model.info.format = format;
    m_model.info.path = std::move(path);
}

ThreadIndex TraceBuilder::thread(int64_t pid, int64_t tid) {
    const std::pair<int64_t, int64_t> key(pid, tid);
    if (m_haveLastThread && key == m_lastThreadKey) return m_lastThread; // consecutive events mostly share a thread
    auto [it, added] = m_threadIndex.try_emplace(key, static_cast<ThreadIndex>(m_model.threads.size()));
    if (added) m_model.threads.push_back({ pid, tid, kEmptyString });
    m_lastThreadKey = key;
    m_lastThread = it->second;
    m_haveLastThread = true;
    return it->second;
}

void TraceBuilder::setThreadName(int64_t pid, int64_t tid, std::string_view name) {
    m_threadNames[{ pid, tid }] = std::string(name);
}

ProcessInfo& TraceBuilder::process(int64_t pid) {
    for (auto& p : m_model.processes)
        if (p.pid == pid) return p;
    m_model.processes.push_back({ pid, {}, {} });
    return m_model.processes.back();
}

void TraceBuilder::setProcessName(int64_t pid, std::string_view name) {
    process(pid).name = std::string(name);
}

void TraceBuilder::setProcessLabels(int64_t pid, std::string_view labels) {
    process(pid).labels = std::string(labels);
}

void TraceBuilder::addDevice(DeviceInfo device) {
    for (auto& d : m_model.devices) {
        if (d.id == device.id) {
            d = std::move(device);
            return;
        }
    }
    m_model.devices.push_back(std::move(device));
}

RowIndex TraceBuilder::addCounterRange(const CounterRange& row, std::span<const std::pair<StringId, double>> values) {
    const RowIndex range = append(m_model.counterRanges, row);
    for (const auto& [metric, value] : values)
        m_model.counterValues.append({ range, metric, value });
    return range;
}

void TraceBuilder::shiftTimes(int64_t deltaNs) {
    if (deltaNs == 0) return;
    // Saturating: a time pushed past the ends of int64 stays implausible, and finish() leaves it out.
    auto shift = [deltaNs](std::vector<int64_t>& column) {
        for (auto& t : column)
            t = saturatingAdd(t, deltaNs);
    };
    auto shiftTable = [&shift](auto& table) {
        shift(table.startNs);
        shift(table.endNs);
    };
    TraceModel& m = m_model;
    shiftTable(m.kernels);
    shiftTable(m.memcpys);
    shiftTable(m.memsets);
    shiftTable(m.syncs);
    shiftTable(m.apiCalls);
    shiftTable(m.cpuOps);
    shiftTable(m.annotations);
    shiftTable(m.gpuAnnotations);
    shiftTable(m.collectives);
    shiftTable(m.flows);
    shiftTable(m.counterRanges);
    shiftTable(m.pythonFunctions);
    shiftTable(m.gemmCalls);
    shiftTable(m.convCalls);
    shift(m.frameworkFlags.timeNs);
    shift(m.programFacts.timeNs);
    shift(m.threadStates.timeNs);
    shift(m.pythonSamples.timeNs);
    shift(m.memoryEvents.timeNs);
    shiftTable(m.memoryPeaks);
    for (auto& w : m.info.profilerWindows) {
        w.startNs = saturatingAdd(w.startNs, deltaNs);
        w.endNs = saturatingAdd(w.endNs, deltaNs);
    }
}

void TraceBuilder::reserve(const RowCounts& counts) {
    m_model.kernels.reserve(counts.kernels);
    m_model.memcpys.reserve(counts.memcpys);
    m_model.memsets.reserve(counts.memsets);
    m_model.syncs.reserve(counts.syncs);
    m_model.apiCalls.reserve(counts.apiCalls);
    m_model.annotations.reserve(counts.annotations);
}

TraceModel TraceBuilder::finish() {
    TraceModel& m = m_model;

    // Thread names only for threads that produced events (Kineto also names GPU streams this way).
    for (auto& t : m.threads) {
        auto it = m_threadNames.find({ t.pid, t.tid });
        if (it != m_threadNames.end()) t.name = m.strings.intern(it->second);
    }
    std::sort(m.devices.begin(), m.devices.end(), [](const DeviceInfo& a, const DeviceInfo& b) { return a.id < b.id; });

    // The CPU ops (the largest table of most traces) with their nesting and the annotations on one thread,
    // every other table on another, where the trace is large enough for a thread to pay: each side writes
    // only its own tables and key indexes.
    TimeRepairs repairs, gpuRepairs;
    Permutation kernelIndex, opIndex;
    const auto gpuSide = [&] {
        kernelIndex = sortTable(m.kernels, gpuRepairs);
        sortTable(m.memcpys, gpuRepairs);
        sortTable(m.memsets, gpuRepairs);
        sortTable(m.syncs, gpuRepairs);
        sortTable(m.apiCalls, gpuRepairs);
        m.m_apiCallByCorrelation = TraceModel::buildKeyIndex(m.apiCalls.correlation);
        m.m_kernelByCorrelation = TraceModel::buildKeyIndex(m.kernels.correlation);
        sortTable(m.gpuAnnotations, gpuRepairs);
        sortTable(m.flows, gpuRepairs);
        sortTable(m.pythonFunctions, gpuRepairs);
        sortTable(m.gemmCalls, gpuRepairs);
        sortTable(m.convCalls, gpuRepairs);
        sortInstants(m.frameworkFlags, gpuRepairs);
        sortInstants(m.programFacts, gpuRepairs);
        sortInstants(m.threadStates, gpuRepairs);
        sortInstants(m.pythonSamples, gpuRepairs);
        sortInstants(m.memoryEvents, gpuRepairs);
        sortTable(m.memoryPeaks, gpuRepairs);
        const Permutation rangeIndex = sortTable(m.counterRanges, gpuRepairs);
        renumber(m.counterValues.range, rangeIndex);
        dropValuesOfDroppedRanges(m.counterValues);
    };
    const auto hostSide = [&] {
        opIndex = sortTable(m.cpuOps, repairs);
        m.m_cpuOpByExternalId = TraceModel::buildKeyIndex(m.cpuOps.externalId);
        computeNesting(
            m.cpuOps.startNs, m.cpuOps.endNs, m.cpuOps.thread, m.threads.size(), m.cpuOps.depth, m.cpuOps.parent);
        sortTable(m.annotations, repairs);
        computeNesting(m.annotations.startNs, m.annotations.endNs, m.annotations.thread, m.threads.size(),
            m.annotations.depth, m.annotations.parent);
    };
    const size_t rows = m.kernels.size() + m.apiCalls.size() + m.cpuOps.size() + m.annotations.size();
    parallelFor(2, rows >= kParallelRows ? 2 : 1, [&](size_t side) { side == 0 ? gpuSide() : hostSide(); });
    repairs.dropped += gpuRepairs.dropped;
    repairs.clamped += gpuRepairs.clamped;
    std::erase_if(m.info.profilerWindows,
        [](const TimeSpan& w) { return !isPlausibleTime(w.startNs) || !isPlausibleTime(w.endNs); });

    // Collectives point at kernels or ops by their pre-sort rows (kNoRow once that row is left out).
    for (size_t i = 0; i < m.collectives.size(); ++i) {
        const Permutation& newIndex = m.collectives.origin[i] == CollectiveOrigin::Kernel ? kernelIndex : opIndex;
        RowIndex& row = m.collectives.eventRow[i];
        if (!newIndex.empty() && row >= 0 && static_cast<size_t>(row) < newIndex.size())
            row = newIndex[static_cast<size_t>(row)] == kDroppedRow
                ? kNoRow
                : static_cast<RowIndex>(newIndex[static_cast<size_t>(row)]);
    }
    sortTable(m.collectives, repairs);
    if (repairs.dropped)
        m.stats.add("times.out_of_range", StatSeverity::DataLoss, repairs.dropped,
            "events with a time 2^62 ns (146 years) or more from the clock's origin, which no clock gives: left out");
    if (repairs.clamped)
        m.stats.add("times.end_before_start", StatSeverity::DataLoss, repairs.clamped,
            "events that end before they start: read as instantaneous (their end set to their start)");

    // Links: kernel/copy/set/sync -> API call (correlation) -> CPU op (external id).
    const KeyLookup opById(m.m_cpuOpByExternalId, m.cpuOps.externalId);
    for (size_t i = 0; i < m.apiCalls.size(); ++i)
        m.apiCalls.cpuOp[i] = opById(m.apiCalls.externalId[i]);
    linkApiCallsByNesting(m);
    const KeyLookup callByCorrelation(m.m_apiCallByCorrelation, m.apiCalls.correlation);
    linkGpuRows(m.kernels, m, callByCorrelation, opById);
    linkGpuRows(m.memcpys, m, callByCorrelation, opById);
    linkGpuRows(m.memsets, m, callByCorrelation, opById);
    linkGpuRows(m.syncs, m, callByCorrelation, opById);

    TraceModel result = std::move(m_model);
    m_model = TraceModel();
    m_threadIndex.clear();
    m_threadNames.clear();
    m_haveLastThread = false;
    return result;
}

} // namespace tuneup::analysis
