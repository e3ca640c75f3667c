#pragma once
// A single-producer, single-consumer byte ring: one per producing thread. The producer (the
// thread being recorded) never blocks and never locks: when the ring is full the event is
// dropped and counted. The consumer (the writer thread) reads whatever has been published.

#include "host_events.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

namespace tuneup::agent {

class ThreadRing {
public:
    ThreadRing(size_t capacityBytes, int tid);
    // The capacity a ring asked to hold `bytes` gets: a power of two, at least 4096.
    static size_t capacityFor(size_t bytes);

    int tid() const { return m_tid; }
    size_t capacity() const { return m_capacity; }

    // Producer side. Copies `fixed` and `text` (truncated to 65535 bytes) into one record.
    // Returns false, and counts a drop, when the ring has no room for it plus `reserveBytes`
    // left free after it (room the producer keeps for records it must not lose, see nvtx_source).
    bool write(HostEventKind kind, uint64_t timeNs, const void* fixed, size_t fixedBytes, std::string_view text,
        size_t reserveBytes = 0);

    // Producer side: an event produced and dropped on purpose.
    void countDropped() {
        bump(m_produced);
        bump(m_dropped);
    }

    // Consumer side: calls visit(const RecordHeader&, const std::byte* fixedAndText) for every
    // published record, then frees their space. Returns the number of records visited.
    template <typename Visitor> size_t drain(Visitor&& visit);

    // Counters, exact: produced() == consumed() + dropped() once drained.
    uint64_t produced() const { return m_produced.load(std::memory_order_acquire); }
    uint64_t dropped() const { return m_dropped.load(std::memory_order_acquire); }
    uint64_t truncated() const { return m_truncated.load(std::memory_order_acquire); }

    // Set by the owning thread when it exits; the writer frees the ring after a last drain.
    void retire() { m_retired.store(true, std::memory_order_release); }
    bool retired() const { return m_retired.load(std::memory_order_acquire); }

private:
    static void bump(std::atomic<uint64_t>& counter) {
        // Only the producer writes the counters: a plain load/store pair, no locked instruction.
        counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }

    std::unique_ptr<std::byte[]> m_data;
    size_t m_capacity;
    int m_tid;
    alignas(64) std::atomic<uint64_t> m_head { 0 }; // bytes published by the producer
    std::atomic<uint64_t> m_produced { 0 };
    std::atomic<uint64_t> m_dropped { 0 };
    std::atomic<uint64_t> m_truncated { 0 };
    uint64_t m_cachedTail = 0; // producer's last view of m_tail
    alignas(64) std::atomic<uint64_t> m_tail { 0 }; // bytes freed by the consumer
    std::atomic<bool> m_retired { false };
};

template <typename Visitor> size_t ThreadRing::drain(Visitor&& visit) {
    const uint64_t head = m_head.load(std::memory_order_acquire);
    uint64_t tail = m_tail.load(std::memory_order_relaxed);
    size_t visited = 0;
    while (tail < head) {
        const std::byte* at = m_data.get() + (tail & (m_capacity - 1));
        RecordHeader header;
        __builtin_memcpy(&header, at, sizeof header);
        if (header.kind != HostEventKind::Padding) {
            visit(header, at + sizeof header);
            ++visited;
        }
        tail += header.size;
    }
    m_tail.store(tail, std::memory_order_release);
    return visited;
}

} // namespace tuneup::agent
