#pragma once
// Turns the records that threads put in their rings into trace rows: pairs NVTX push/pop per
// thread and domain (with depth and parent), start/end by range id, resolves registered strings
// and domains, writes the interposers' GEMM and convolution calls and the Python bootstrap's watched calls and
// stack samples. Runs on the writer thread only.

#include "event_counts.h"
#include "host_events.h"
#include "trace_db.h"
#include "trace_schema.h"

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

namespace tuneup::agent {

class HostEventSink {
public:
    HostEventSink(TraceDb& db, int pid);

    void consume(int tid, const RecordHeader& header, const std::byte* body);
    // A record the writer cannot write (the file is gone, the disk is full): counted as dropped.
    void discard(int tid, const RecordHeader& header) { m_discarded.add(tid, header.source); }
    // A row the writer made itself for `source` on thread `tid` (the main thread's samples).
    void countWritten(int tid, EventSource source) { m_written.add(tid, source); }
    // Writes ranges still open (end_ns NULL): at the end of the recording.
    void closeOpenRanges();

    uint64_t consumed() const { return m_consumed; }
    uint64_t discarded() const { return m_discarded.total(); }
    uint64_t unmatchedEnds() const { return m_unmatchedEnds; }
    // By thread and source: records consumed (and rows counted by countWritten), records discarded.
    const ThreadSourceTally& written() const { return m_written; }
    const ThreadSourceTally& discardedBySource() const { return m_discarded; }

private:
    struct OpenRange {
        RangeRow row;
    };

    int64_t domainId(uint64_t handle);
    int64_t functionName(uint16_t function); // strings.id of an interposed function's name
    std::optional<int64_t> messageId(const NvtxEventFixed& event, std::string_view text);
    void noteThread(int tid);
    int64_t pythonName(int64_t id) const; // strings.id of a name the bootstrap numbered; 0 unknown
    TraceDb::PythonFrameRow pythonFrame(const PythonFrameFixed& frame);

    TraceDb& m_db;
    int m_pid;
    int64_t m_nextRangeId;
    uint64_t m_consumed = 0;
    uint64_t m_unmatchedEnds = 0;
    ThreadSourceTally m_written, m_discarded;
    std::vector<int64_t> m_functionNames; // LibraryFunction -> strings.id, -1 until interned
    std::unordered_map<uint64_t, int64_t> m_registeredStrings; // handle id -> strings.id
    std::unordered_map<uint64_t, bool> m_knownDomains;
    std::unordered_map<uint64_t, int64_t> m_pythonNames; // the bootstrap's number -> strings.id
    static constexpr std::string_view kBootstrapDomain = "tuneup"; // the Python bootstrap's NVTX domain
    uint64_t m_bootstrapDomain = 0; // its handle, once seen (0 is the default domain, never it)
    bool m_workerNoted = false; // the process was recorded as a DataLoader worker
    std::unordered_map<int, bool> m_knownThreads;
    std::map<std::pair<int, uint64_t>, std::vector<OpenRange>> m_pushStacks; // (tid, domain) -> stack
    std::unordered_map<uint64_t, OpenRange> m_startedRanges; // range id -> open range
};

} // namespace tuneup::agent
