#pragma once
// TraceBuilder: the one way an importer fills a TraceModel (Perfetto's "trackers" idea). Importers
// append rows in file order; finish() sorts every table by time and builds the links between them
// (kernel -> launching API call -> CPU op, nesting of ops and ranges).

#include "model/trace_model.h"

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tuneup::analysis {

class TraceBuilder {
public:
    TraceBuilder(SourceFormat format, std::string path);

    StringId intern(std::string_view s) { return m_model.strings.intern(s); }
    // The row of a CPU thread in TraceModel::threads, added on first use.
    ThreadIndex thread(int64_t pid, int64_t tid);
    // Names may arrive before or after the thread's events; both orders work.
    void setThreadName(int64_t pid, int64_t tid, std::string_view name);
    void setProcessName(int64_t pid, std::string_view name);
    void setProcessLabels(int64_t pid, std::string_view labels);
    void addDevice(DeviceInfo device);

    TraceInfo& info() { return m_model.info; }
    ImportStats& stats() { return m_model.stats; }

    // Each returns the row's index *before* finish() sorts; use it only to link rows added to this
    // builder (Collective::eventRow, CounterValue::range), which finish() renumbers.
    RowIndex addKernel(const Kernel& row) { return append(m_model.kernels, row); }
    RowIndex addMemcpy(const Memcpy& row) { return append(m_model.memcpys, row); }
    RowIndex addMemset(const Memset& row) { return append(m_model.memsets, row); }
    RowIndex addSync(const Sync& row) { return append(m_model.syncs, row); }
    RowIndex addApiCall(const ApiCall& row) { return append(m_model.apiCalls, row); }
    RowIndex addCpuOp(const CpuOp& row) { return append(m_model.cpuOps, row); }
    RowIndex addAnnotation(const Annotation& row) { return append(m_model.annotations, row); }
    RowIndex addGpuAnnotation(const GpuAnnotation& row) { return append(m_model.gpuAnnotations, row); }
    RowIndex addCollective(const Collective& row) { return append(m_model.collectives, row); }
    RowIndex addFlow(const Flow& row) { return append(m_model.flows, row); }
    RowIndex addCounterRange(const CounterRange& row, std::span<const std::pair<StringId, double>> values);
    RowIndex addPythonFunction(const PythonFunction& row) { return append(m_model.pythonFunctions, row); }
    // A framework setting observed at row.timeNs (the agent's torch probes); see FrameworkFlagTable.
    RowIndex addFrameworkFlag(const FrameworkFlag& row) { return append(m_model.frameworkFlags, row); }
    // A fact the Python bootstrap recorded (see ProgramFactTable).
    RowIndex addProgramFact(const ProgramFact& row) { return append(m_model.programFacts, row); }
    // A thread's sampled scheduler state (see ThreadStateTable).
    RowIndex addThreadState(const ThreadState& row) { return append(m_model.threadStates, row); }
    // The main thread's sampled Python frame (see PythonSampleTable).
    RowIndex addPythonSample(const PythonSample& row) { return append(m_model.pythonSamples, row); }
    // A GEMM / convolution call the agent's interposers recorded, and CUPTI's link from a CUDA call to the
    // library call it ran in (see GemmCallTable, ConvCallTable, ExternalCorrelationTable).
    RowIndex addGemmCall(const GemmCall& row) { return append(m_model.gemmCalls, row); }
    RowIndex addConvCall(const ConvCall& row) { return append(m_model.convCalls, row); }
    RowIndex addExternalCorrelation(const ExternalCorrelation& row) {
        return append(m_model.externalCorrelations, row);
    }
    // An allocation or free the trace recorded, with the allocator's totals when known (see MemoryEventTable).
    RowIndex addMemoryEvent(const MemoryEvent& row) { return append(m_model.memoryEvents, row); }
    RowIndex addMemoryPeak(const MemoryPeak& row) { return append(m_model.memoryPeaks, row); }

    // Room for rows about to be added, when the importer knows how many (saves regrowing columns).
    struct RowCounts {
        size_t kernels = 0, memcpys = 0, memsets = 0, syncs = 0, apiCalls = 0, annotations = 0;
    };
    void reserve(const RowCounts& counts);

    // Adds the rows of a builder filled from a later part of the same file (a window of a Kineto
    // trace read on another thread) as if they had been added here: strings and threads renumbered,
    // links between its rows (Collective::eventRow, CounterValue::range) kept. Its devices, thread
    // names, process names and labels (when set), profiler windows and events read come along; its
    // other info and stats do not. Returns the part's StringId -> this builder's, and leaves the part
    // empty. Defined in model/trace_merge.cpp.
    std::vector<StringId> append(TraceBuilder& part);

    size_t eventCount() const { return m_model.eventCount(); }
    // Adds deltaNs to every time added so far (Kineto's baseTimeNanoseconds may follow the events).
    void shiftTimes(int64_t deltaNs);

    // Sorts, links and hands over the model; the builder is empty afterwards.
    TraceModel finish();

private:
    template <class Table> RowIndex append(Table& table, const typename Table::RowType& row) {
        table.append(row);
        return static_cast<RowIndex>(table.size() - 1);
    }
    ProcessInfo& process(int64_t pid);

    struct PidTidHash {
        size_t operator()(const std::pair<int64_t, int64_t>& k) const {
            return std::hash<uint64_t>()(static_cast<uint64_t>(k.first) * 1000003u ^ static_cast<uint64_t>(k.second));
        }
    };
    TraceModel m_model;
    std::unordered_map<std::pair<int64_t, int64_t>, ThreadIndex, PidTidHash> m_threadIndex;
    std::unordered_map<std::pair<int64_t, int64_t>, std::string, PidTidHash> m_threadNames;
    std::pair<int64_t, int64_t> m_lastThreadKey { 0, 0 };
    ThreadIndex m_lastThread = 0;
    bool m_haveLastThread = false;
};

} // namespace tuneup::analysis
