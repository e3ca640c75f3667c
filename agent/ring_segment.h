#pragma once
// One block of a thread's event buffer (thread_ring.h). The producer appends records until the next
// one does not fit, then links a new segment: linking seals this one (its `head` is final). Segments
// are mapped with mmap within BufferBudget: unmapping gives the memory back to the system, and mmap
// is async-signal-safe and takes no lock of the agent (an NVTX call may come from a signal handler).

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace tuneup::agent {

struct RingSegment {
    std::atomic<RingSegment*> next { nullptr }; // set once, by the producer, when it moves on
    std::atomic<uint32_t> head { 0 }; // bytes of records published
    uint32_t capacity = 0; // bytes of record space
    size_t mappedBytes = 0; // what the segment takes from the budget; 0 for a ring's empty stub

    static constexpr size_t kRecordsOffset = 64; // records start 16-byte aligned, past this header
    std::byte* records() { return reinterpret_cast<std::byte*>(this) + kRecordsOffset; }

    // What a segment of about `bytes` maps: whole pages, at least one, header included.
    static size_t mappedSize(size_t bytes);
    // What a segment with room for `recordBytes` maps.
    static size_t mappedSizeFor(size_t recordBytes) { return mappedSize(kRecordsOffset + recordBytes); }
    // A new empty segment with room for at least `recordBytes`, taken from BufferBudget; null when
    // the budget or the system refuses.
    static RingSegment* allocate(size_t recordBytes);
    // Unmaps it and returns its bytes to the budget.
    static void free(RingSegment* segment);
    // Segments mapped so far in this process (for tests and benchmarks: reuse shows as none new).
    static uint64_t mappedCount();

    // Empty and unlinked again, for reuse. Only for a segment no producer or consumer can reach.
    void reset() {
        next.store(nullptr, std::memory_order_relaxed);
        head.store(0, std::memory_order_relaxed);
    }
};

} // namespace tuneup::agent
