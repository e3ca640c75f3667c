#pragma once
// What each source wrote and dropped, per thread: the file's event_counts table. Host events are
// counted where they end (ThreadRing for drops, HostEventSink for rows written); sources that do not
// pass through the rings (CUPTI's activity buffers) report into SourceCounts.

#include "event_source.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace tuneup::agent {

// Counts per (thread, source), kept by the writer thread only.
class ThreadSourceTally {
public:
    void add(int tid, EventSource source, uint64_t n = 1) {
        if (tid != m_lastTid || !m_last) {
            m_last = &m_counts[tid]; // node-based map: the pointer stays valid as it grows
            m_lastTid = tid;
        }
        (*m_last)[size_t(source)] += n;
    }
    uint64_t total() const;
    const std::unordered_map<int, std::array<uint64_t, kEventSourceCount>>& counts() const { return m_counts; }

private:
    std::unordered_map<int, std::array<uint64_t, kEventSourceCount>> m_counts;
    int m_lastTid = 0;
    std::array<uint64_t, kEventSourceCount>* m_last = nullptr;
};

// Events of sources not tied to a recording thread. Lock-free: callable from any thread, signal
// handlers included.
class SourceCounts {
public:
    static void addWritten(EventSource source, uint64_t n);
    static void addDropped(EventSource source, uint64_t n);
    // For a source that keeps its own running totals (CUPTI's decoder): replaces what it said before.
    static void setTotals(EventSource source, uint64_t written, uint64_t dropped);
    static uint64_t written(EventSource source);
    static uint64_t dropped(EventSource source);
    // In a forked child: the parent's counts are the parent's.
    static void resetAfterFork();
};

// One row of event_counts. tid 0: not tied to a thread (stored as NULL).
struct EventCountRow {
    EventSource source;
    int tid = 0;
    uint64_t written = 0, dropped = 0;
};

// Every (source, thread) that wrote or dropped anything: `written` and `discarded` from the writer's
// sink, the threads' drops from RingRegistry, and SourceCounts. Ordered by source, then thread.
std::vector<EventCountRow> collectEventCounts(const ThreadSourceTally& written, const ThreadSourceTally& discarded);

} // namespace tuneup::agent
