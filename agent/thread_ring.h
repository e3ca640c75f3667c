#pragma once
// One producing thread's event buffer: a single-producer, single-consumer chain of segments
// (ring_segment.h) that grows from the shared BufferBudget. The producer (the thread being recorded)
// never blocks and takes no lock: when its segment is full it takes the spare segment the writer
// left it, else maps a new one; only when the budget is spent is the event dropped, and counted by
// its source. The consumer (the writer thread) reads what has been published and hands back the
// segments it has emptied.

#include "event_source.h"
#include "host_events.h"
#include "ring_segment.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tuneup::agent {

class ThreadRing {
public:
    // The first segment maps `firstBytes`, later ones `segmentBytes` (or more, for a record that
    // needs it). Nothing is mapped before the first write.
    ThreadRing(int tid, size_t firstBytes, size_t segmentBytes);
    // Frees every segment still held. Only once neither side uses the ring any more.
    ~ThreadRing();
    ThreadRing(const ThreadRing&) = delete;
    ThreadRing& operator=(const ThreadRing&) = delete;

    int tid() const { return m_tid; }
    // What a regular (not first, not oversized) segment of this ring maps.
    size_t segmentBytes() const { return m_segmentBytes; }

    // Producer side. Copies `fixed` and `text` (truncated to 65535 bytes) into one record. Returns
    // false, and counts a drop for `source`, when no memory is left for it plus `reserveBytes` kept
    // free after it in the same segment (room the producer keeps for records it must not lose, see
    // nvtx_source).
    bool write(EventSource source, HostEventKind kind, uint64_t timeNs, const void* fixed, size_t fixedBytes,
        std::string_view text, size_t reserveBytes = 0);

    // Producer side: an event produced and dropped on purpose.
    void countDropped(EventSource source) {
        bump(m_produced);
        bump(m_droppedBy[size_t(source)]);
    }

    // Consumer side: calls visit(const RecordHeader&, const std::byte* fixedAndText) for every
    // record published when the drain began, and recycle(RingSegment*) for each segment it has
    // emptied and left (no longer reachable from the ring), as soon as it has. Returns the number of
    // records visited.
    template <typename Visitor, typename Recycler> size_t drain(Visitor&& visit, Recycler&& recycle);
    // The same, unmapping emptied segments.
    template <typename Visitor> size_t drain(Visitor&& visit) {
        return drain(visit, [](RingSegment* segment) { RingSegment::free(segment); });
    }

    // Consumer side: the spare segment the producer takes before it maps one. `offerSpare` only
    // when `hasSpare()` is false; `takeSpareBack` returns it (or null if the producer took it).
    bool hasSpare() const { return m_spare.load(std::memory_order_acquire) != nullptr; }
    void offerSpare(RingSegment* segment) { m_spare.store(segment, std::memory_order_release); }
    RingSegment* takeSpareBack() { return m_spare.exchange(nullptr, std::memory_order_acq_rel); }

    // Consumer side: every record published so far has been drained. Once the ring is retired,
    // nothing more will come.
    bool drainedAll() const {
        return m_readSegment->next.load(std::memory_order_acquire) == nullptr
            && m_readPos == m_readSegment->head.load(std::memory_order_acquire);
    }

    // Counters, exact: produced() == consumed + dropped() once drained.
    uint64_t produced() const { return m_produced.load(std::memory_order_acquire); }
    uint64_t dropped() const;
    uint64_t dropped(EventSource source) const { return m_droppedBy[size_t(source)].load(std::memory_order_acquire); }
    uint64_t truncated() const { return m_truncated.load(std::memory_order_acquire); }

    // Set by the owning thread when it exits; the writer frees the ring after a last drain.
    void retire() { m_retired.store(true, std::memory_order_release); }
    bool retired() const { return m_retired.load(std::memory_order_acquire); }

private:
    static void bump(std::atomic<uint64_t>& counter) {
        // Only the producer writes the counters: a plain load/store pair, no locked instruction.
        counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
    // Links a segment with room for `recordBytes` after the current one; null when none can be had.
    RingSegment* advance(size_t recordBytes);

    // An empty segment of no capacity: where both sides start, so the first write takes the
    // ordinary path to a real segment.
    RingSegment m_stub;
    const int m_tid;
    const size_t m_firstBytes, m_segmentBytes;

    // Producer side.
    alignas(64) RingSegment* m_writeSegment;
    size_t m_writePos = 0; // == m_writeSegment->head
    size_t m_writeCapacity = 0; // == m_writeSegment->capacity: the hot path reads only this line
    std::atomic<uint64_t> m_produced { 0 };
    std::atomic<uint64_t> m_truncated { 0 };
    std::atomic<uint64_t> m_droppedBy[kEventSourceCount] = {};

    // Consumer side.
    alignas(64) RingSegment* m_readSegment;
    size_t m_readPos = 0;
    std::atomic<RingSegment*> m_spare { nullptr };
    std::atomic<bool> m_retired { false };
};

template <typename Visitor, typename Recycler> size_t ThreadRing::drain(Visitor&& visit, Recycler&& recycle) {
    // Only what was published when the drain began: a producer that keeps writing cannot make it
    // last forever. `next` before `head`: once a segment has a next, its head is final.
    RingSegment* last = m_readSegment;
    while (RingSegment* next = last->next.load(std::memory_order_acquire))
        last = next;
    const size_t lastHead = last->head.load(std::memory_order_acquire);
    RingSegment* segment = m_readSegment;
    size_t pos = m_readPos;
    size_t visited = 0;
    for (;;) {
        const size_t head = segment == last ? lastHead : segment->head.load(std::memory_order_acquire);
        while (pos < head) {
            const std::byte* at = segment->records() + pos;
            RecordHeader header;
            __builtin_memcpy(&header, at, sizeof header);
            visit(header, at + sizeof header);
            ++visited;
            pos += header.size;
        }
        if (segment == last) break;
        RingSegment* next = segment->next.load(std::memory_order_acquire);
        m_readSegment = next; // before recycling: the ring never reaches a segment given away
        m_readPos = 0;
        if (segment != &m_stub) recycle(segment);
        segment = next;
        pos = 0;
    }
    m_readSegment = segment;
    m_readPos = pos;
    return visited;
}

} // namespace tuneup::agent
