#include "thread_ring.h"

#include <algorithm>
#include <cstring>

namespace tuneup::agent {

namespace {
constexpr size_t roundUp16(size_t n) {
    return (n + 15) & ~size_t(15);
}

// memcpy for the few bytes an event carries (a fixed part of 8-48 bytes, a short name), inline: two
// calls into libc cost more than the copies. Overlapping moves read and write only [0, n).
inline void copyBytes(std::byte* to, const void* fromPtr, size_t n) {
    const auto* from = static_cast<const std::byte*>(fromPtr);
    if (n > 64) [[unlikely]] {
        memcpy(to, from, n);
    } else if (n > 32) {
        __builtin_memcpy(to, from, 32);
        __builtin_memcpy(to + n - 32, from + n - 32, 32);
    } else if (n >= 16) {
        __builtin_memcpy(to, from, 16);
        __builtin_memcpy(to + n - 16, from + n - 16, 16);
    } else if (n >= 8) {
        __builtin_memcpy(to, from, 8);
        __builtin_memcpy(to + n - 8, from + n - 8, 8);
    } else if (n >= 4) {
        __builtin_memcpy(to, from, 4);
        __builtin_memcpy(to + n - 4, from + n - 4, 4);
    } else if (n > 0) {
        to[0] = from[0];
        to[n / 2] = from[n / 2];
        to[n - 1] = from[n - 1];
    }
}
} // namespace

ThreadRing::ThreadRing(int tid, size_t firstBytes, size_t segmentBytes)
    : m_tid(tid)
    , m_firstBytes(RingSegment::mappedSize(firstBytes))
    , m_segmentBytes(RingSegment::mappedSize(segmentBytes))
    , m_writeSegment(&m_stub)
    , m_readSegment(&m_stub) {
}

ThreadRing::~ThreadRing() {
    for (RingSegment* segment = m_readSegment; segment;) {
        RingSegment* next = segment->next.load(std::memory_order_acquire);
        RingSegment::free(segment); // the stub is not mapped: free() leaves it
        segment = next;
    }
    RingSegment::free(m_spare.load(std::memory_order_acquire));
}

uint64_t ThreadRing::dropped() const {
    uint64_t total = 0;
    for (const auto& count : m_droppedBy)
        total += count.load(std::memory_order_acquire);
    return total;
}

bool ThreadRing::write(EventSource source, HostEventKind kind, uint64_t timeNs, const void* fixed, size_t fixedBytes,
    std::string_view text, size_t reserveBytes) {
    bump(m_produced);
    if (text.size() > 0xffff) [[unlikely]] {
        text = text.substr(0, 0xffff);
        bump(m_truncated);
    }
    const size_t size = roundUp16(sizeof(RecordHeader) + fixedBytes + text.size());
    RingSegment* segment = m_writeSegment;
    size_t pos = m_writePos;
    if (pos + size + reserveBytes > m_writeCapacity) [[unlikely]] {
        segment = advance(size + reserveBytes);
        if (!segment) {
            bump(m_droppedBy[size_t(source)]);
            return false;
        }
        pos = 0;
    }
    std::byte* at = segment->records() + pos;
    const RecordHeader header { uint32_t(size), kind, source, uint16_t(text.size()), timeNs };
    memcpy(at, &header, sizeof header);
    copyBytes(at + sizeof header, fixed, fixedBytes);
    copyBytes(at + sizeof header + fixedBytes, text.data(), text.size());
    m_writePos = pos + size;
    segment->head.store(uint32_t(pos + size), std::memory_order_release);
    return true;
}

RingSegment* ThreadRing::advance(size_t recordBytes) {
    RingSegment* next = nullptr;
    // The writer's spare: already mapped and faulted in. Only the writer fills the slot, and only
    // when it is empty, so the segment seen here is the one the exchange takes.
    if (RingSegment* spare = m_spare.load(std::memory_order_acquire); spare && spare->capacity >= recordBytes)
        next = m_spare.exchange(nullptr, std::memory_order_acq_rel);
    if (!next) {
        const size_t regular = m_writeSegment == &m_stub ? m_firstBytes : m_segmentBytes;
        next = RingSegment::allocate(std::max(recordBytes, regular - RingSegment::kRecordsOffset));
        if (!next) return nullptr;
    }
    m_writeSegment->next.store(next, std::memory_order_release); // seals the full segment
    m_writeSegment = next;
    m_writePos = 0;
    m_writeCapacity = next->capacity;
    return next;
}

} // namespace tuneup::agent
