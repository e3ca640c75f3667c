#include "thread_ring.h"

#include <cstring>

namespace tuneup::agent {

namespace {
// 16-byte records keep room for a padding header at the end of the ring.
constexpr size_t roundUp16(size_t n) {
    return (n + 15) & ~size_t(15);
}

} // namespace

size_t ThreadRing::capacityFor(size_t bytes) {
    size_t p = 4096;
    while (p < bytes)
        p <<= 1;
    return p;
}

ThreadRing::ThreadRing(size_t capacityBytes, int tid)
    : m_data(new std::byte[capacityFor(capacityBytes)])
    , m_capacity(capacityFor(capacityBytes))
    , m_tid(tid) {
}

bool ThreadRing::write(HostEventKind kind, uint64_t timeNs, const void* fixed, size_t fixedBytes, std::string_view text,
    size_t reserveBytes) {
    bump(m_produced);
    if (text.size() > 0xffff) {
        text = text.substr(0, 0xffff);
        bump(m_truncated);
    }
    const size_t size = roundUp16(sizeof(RecordHeader) + fixedBytes + text.size());
    const uint64_t head = m_head.load(std::memory_order_relaxed);
    const size_t offset = head & (m_capacity - 1);
    const size_t untilEnd = m_capacity - offset;
    // A record never wraps: if it does not fit before the end, pad to the end and start at 0.
    const size_t needed = size <= untilEnd ? size : untilEnd + size;
    if (head + needed + reserveBytes - m_cachedTail > m_capacity) {
        m_cachedTail = m_tail.load(std::memory_order_acquire);
        if (head + needed + reserveBytes - m_cachedTail > m_capacity || size > m_capacity / 2) {
            bump(m_dropped);
            return false;
        }
    }
    std::byte* at = m_data.get() + offset;
    if (size > untilEnd) {
        RecordHeader padding { uint32_t(untilEnd), HostEventKind::Padding, 0, 0 };
        memcpy(at, &padding, sizeof padding);
        at = m_data.get();
    }
    RecordHeader header { uint32_t(size), kind, uint16_t(text.size()), timeNs };
    memcpy(at, &header, sizeof header);
    if (fixedBytes) memcpy(at + sizeof header, fixed, fixedBytes);
    if (!text.empty()) memcpy(at + sizeof header + fixedBytes, text.data(), text.size());
    m_head.store(head + needed, std::memory_order_release);
    return true;
}

} // namespace tuneup::agent
