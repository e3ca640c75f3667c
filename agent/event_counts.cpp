#include "event_counts.h"

#include "ring_registry.h"

#include <algorithm>
#include <map>

namespace tuneup::agent {

namespace {
std::atomic<uint64_t> s_written[kEventSourceCount];
std::atomic<uint64_t> s_dropped[kEventSourceCount];
} // namespace

uint64_t ThreadSourceTally::total() const {
    uint64_t total = 0;
    for (const auto& [tid, counts] : m_counts)
        for (uint64_t n : counts)
            total += n;
    return total;
}

void SourceCounts::addWritten(EventSource source, uint64_t n) {
    s_written[size_t(source)].fetch_add(n, std::memory_order_relaxed);
}

void SourceCounts::addDropped(EventSource source, uint64_t n) {
    s_dropped[size_t(source)].fetch_add(n, std::memory_order_relaxed);
}

void SourceCounts::setTotals(EventSource source, uint64_t written, uint64_t dropped) {
    s_written[size_t(source)].store(written, std::memory_order_relaxed);
    s_dropped[size_t(source)].store(dropped, std::memory_order_relaxed);
}

uint64_t SourceCounts::written(EventSource source) {
    return s_written[size_t(source)].load(std::memory_order_relaxed);
}

uint64_t SourceCounts::dropped(EventSource source) {
    return s_dropped[size_t(source)].load(std::memory_order_relaxed);
}

void SourceCounts::resetAfterFork() {
    for (size_t s = 0; s < kEventSourceCount; ++s) {
        s_written[s].store(0);
        s_dropped[s].store(0);
    }
}

std::vector<EventCountRow> collectEventCounts(const ThreadSourceTally& written, const ThreadSourceTally& discarded) {
    std::map<std::pair<EventSource, int>, EventCountRow> rows;
    const auto row = [&](EventSource source, int tid) -> EventCountRow& {
        EventCountRow& r = rows[{ source, tid }];
        r.source = source;
        r.tid = tid;
        return r;
    };
    for (const auto& [tid, counts] : written.counts())
        for (size_t s = 0; s < kEventSourceCount; ++s)
            if (counts[s]) row(EventSource(s), tid).written += counts[s];
    for (const auto& [tid, counts] : discarded.counts())
        for (size_t s = 0; s < kEventSourceCount; ++s)
            if (counts[s]) row(EventSource(s), tid).dropped += counts[s];
    for (const ThreadDrops& drops : RingRegistry::drops())
        for (size_t s = 0; s < kEventSourceCount; ++s)
            if (drops.dropped[s]) row(EventSource(s), drops.tid).dropped += drops.dropped[s];
    for (size_t s = 0; s < kEventSourceCount; ++s) {
        const uint64_t w = SourceCounts::written(EventSource(s)), d = SourceCounts::dropped(EventSource(s));
        if (w || d) {
            EventCountRow& r = row(EventSource(s), 0);
            r.written += w;
            r.dropped += d;
        }
    }
    std::vector<EventCountRow> out;
    out.reserve(rows.size());
    for (auto& [key, r] : rows)
        out.push_back(r);
    return out;
}

} // namespace tuneup::agent
