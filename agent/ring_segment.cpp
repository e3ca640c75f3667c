#include "ring_segment.h"

#include "buffer_budget.h"

#include <algorithm>
#include <new>
#include <sys/mman.h>

namespace tuneup::agent {

namespace {
constexpr size_t kPageBytes = 4096;
std::atomic<uint64_t> s_mapped { 0 };
} // namespace

size_t RingSegment::mappedSize(size_t bytes) {
    return std::max(kPageBytes, (bytes + kPageBytes - 1) & ~(kPageBytes - 1));
}

RingSegment* RingSegment::allocate(size_t recordBytes) {
    const size_t bytes = mappedSizeFor(recordBytes);
    if (bytes - kRecordsOffset > UINT32_MAX || !BufferBudget::tryReserve(bytes)) return nullptr;
    // MAP_POPULATE: the pages are faulted in by one system call instead of one fault each as the
    // records reach them; the budget counts them all anyway.
    void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (memory == MAP_FAILED) {
        BufferBudget::release(bytes);
        return nullptr;
    }
    s_mapped.fetch_add(1, std::memory_order_relaxed);
    auto* segment = new (memory) RingSegment;
    segment->capacity = uint32_t(bytes - kRecordsOffset);
    segment->mappedBytes = bytes;
    return segment;
}

uint64_t RingSegment::mappedCount() {
    return s_mapped.load(std::memory_order_relaxed);
}

void RingSegment::free(RingSegment* segment) {
    if (!segment || segment->mappedBytes == 0) return;
    const size_t bytes = segment->mappedBytes;
    segment->~RingSegment();
    munmap(segment, bytes);
    BufferBudget::release(bytes);
}

} // namespace tuneup::agent
