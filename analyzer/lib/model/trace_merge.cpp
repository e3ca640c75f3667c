// TraceBuilder::append: the rows of a builder filled from a later part of the same file, added as if
// they had come here in the first place, so that parts read on several threads make the model one
// thread would have made. Every table of TraceModel is listed: a new table goes here too, with its
// StringId, ThreadIndex and RowIndex columns renumbered.

#include "model/trace_builder.h"

#include <algorithm>
#include <cstdint>

namespace tuneup::analysis {

namespace {

// Appends every row of `from`, each passed through fix(row) first.
template <class Table, class Fix> void appendRows(Table& into, const Table& from, Fix&& fix) {
    // Room for them first, growing geometrically as push_back would, so that no column is moved
    // while the rows go in.
    size_t capacity = SIZE_MAX;
    into.forEachColumn([&capacity](const auto& column) { capacity = std::min(capacity, column.capacity()); });
    if (const size_t needed = into.size() + from.size(); capacity < needed)
        into.reserve(std::max(needed, 2 * into.size()));
    for (size_t i = 0; i < from.size(); ++i) {
        auto row = from.row(i);
        fix(row);
        into.append(row);
    }
}

RowIndex shifted(RowIndex row, size_t base) {
    return row == kNoRow ? kNoRow : static_cast<RowIndex>(static_cast<size_t>(row) + base);
}

} // namespace

std::vector<StringId> TraceBuilder::append(TraceBuilder& part) {
    TraceModel& into = m_model;
    TraceModel& from = part.m_model;

    // Strings in the part's order: interned after this builder's, they get the ids one builder
    // reading the whole file would have given them.
    std::vector<StringId> s(from.strings.size());
    for (StringId id = 0; id < s.size(); ++id)
        s[id] = into.strings.intern(from.strings.get(id));
    std::vector<ThreadIndex> t(from.threads.size());
    for (size_t i = 0; i < t.size(); ++i)
        t[i] = thread(from.threads[i].pid, from.threads[i].tid);
    for (auto& [key, name] : part.m_threadNames)
        m_threadNames[key] = std::move(name);
    for (DeviceInfo& d : from.devices)
        addDevice(std::move(d));
    for (const ProcessInfo& p : from.processes) {
        ProcessInfo& mine = process(p.pid);
        if (!p.name.empty()) mine.name = p.name;
        if (!p.labels.empty()) mine.labels = p.labels;
    }

    const size_t kernelBase = into.kernels.size(), cpuOpBase = into.cpuOps.size();
    const size_t rangeBase = into.counterRanges.size();
    appendRows(into.kernels, from.kernels, [&](Kernel& r) { r.name = s[r.name]; });
    appendRows(into.memcpys, from.memcpys, [](Memcpy&) {});
    appendRows(into.memsets, from.memsets, [](Memset&) {});
    appendRows(into.syncs, from.syncs, [](Sync&) {});
    appendRows(into.apiCalls, from.apiCalls, [&](ApiCall& r) {
        r.thread = t[r.thread];
        r.name = s[r.name];
    });
    appendRows(into.cpuOps, from.cpuOps, [&](CpuOp& r) {
        r.thread = t[r.thread];
        r.name = s[r.name];
        r.inputDims = s[r.inputDims];
        r.inputTypes = s[r.inputTypes];
    });
    appendRows(into.annotations, from.annotations, [&](Annotation& r) {
        r.thread = t[r.thread];
        r.name = s[r.name];
    });
    appendRows(into.gpuAnnotations, from.gpuAnnotations, [&](GpuAnnotation& r) { r.name = s[r.name]; });
    appendRows(into.collectives, from.collectives, [&](Collective& r) {
        r.eventRow = shifted(r.eventRow, r.origin == CollectiveOrigin::Kernel ? kernelBase : cpuOpBase);
        r.name = s[r.name];
        r.dtype = s[r.dtype];
        r.processGroup = s[r.processGroup];
        r.groupRanks = s[r.groupRanks];
    });
    appendRows(into.flows, from.flows, [&](Flow& r) { r.category = s[r.category]; });
    appendRows(into.counterRanges, from.counterRanges, [&](CounterRange& r) { r.name = s[r.name]; });
    appendRows(into.counterValues, from.counterValues, [&](CounterValue& r) {
        r.range = shifted(r.range, rangeBase);
        r.metric = s[r.metric];
    });
    appendRows(into.pythonFunctions, from.pythonFunctions, [&](PythonFunction& r) {
        r.thread = t[r.thread];
        r.name = s[r.name];
        r.call = s[r.call];
    });
    appendRows(into.pythonSamples, from.pythonSamples, [&](PythonSample& r) {
        r.thread = t[r.thread];
        r.frame = s[r.frame];
    });
    appendRows(into.frameworkFlags, from.frameworkFlags, [&](FrameworkFlag& r) { r.name = s[r.name]; });
    appendRows(into.programFacts, from.programFacts, [&](ProgramFact& r) { r.name = s[r.name]; });
    appendRows(into.threadStates, from.threadStates, [&](ThreadState& r) { r.thread = t[r.thread]; });
    appendRows(into.gemmCalls, from.gemmCalls, [&](GemmCall& r) {
        r.thread = t[r.thread];
        r.name = s[r.name];
    });
    appendRows(into.convCalls, from.convCalls, [&](ConvCall& r) {
        r.thread = t[r.thread];
        r.name = s[r.name];
    });
    appendRows(into.externalCorrelations, from.externalCorrelations, [](ExternalCorrelation&) {});
    appendRows(into.memoryEvents, from.memoryEvents, [&](MemoryEvent& r) {
        if (r.thread != kNoThread) r.thread = t[r.thread];
    });
    appendRows(into.memoryPeaks, from.memoryPeaks, [&](MemoryPeak& r) {
        if (r.thread != kNoThread) r.thread = t[r.thread];
    });

    into.info.profilerWindows.insert(
        into.info.profilerWindows.end(), from.info.profilerWindows.begin(), from.info.profilerWindows.end());
    into.stats.eventsRead += from.stats.eventsRead;

    part.m_model = TraceModel();
    part.m_threadIndex.clear();
    part.m_threadNames.clear();
    part.m_haveLastThread = false;
    return s;
}

} // namespace tuneup::analysis
