#include "ring_registry.h"

#include "buffer_budget.h"
#include "event_counts.h"
#include "log.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <new>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace tuneup::agent {

namespace {

// A thread's first segment: most threads make few events, so they take little of the budget.
constexpr size_t kFirstSegmentBytes = 64 << 10;
// Emptied segments the writer keeps for the spares of busy threads; the rest go back to the system.
constexpr size_t kPooledSegments = 4;

// Heap objects that are never destroyed: threads may still emit while the process exits.
std::mutex& s_mutex = *new std::mutex; // guards what follows; never held over I/O or mmap
std::vector<ThreadRing*>& s_rings = *new std::vector<ThreadRing*>;
std::vector<RingSegment*>& s_pool = *new std::vector<RingSegment*>; // emptied regular segments
std::vector<ThreadDrops>& s_retiredDrops = *new std::vector<ThreadDrops>; // freed rings that dropped
RingTotals s_retiredTotals; // totals of rings already freed
std::atomic<void (*)()> s_firstRingHook { nullptr };
std::atomic<size_t> s_segmentBytes { 1u << 20 };
// Events of threads that got no ring, by source.
std::atomic<uint64_t> s_noRingDropped[kEventSourceCount];

// A thread that could not get a ring points here, so it does not retry each event.
ThreadRing* const kNoRing = reinterpret_cast<ThreadRing*>(uintptr_t(1));

// initial-exec: one plain TLS load on the hot path, also when the agent was dlopen'ed by NVTX.
__attribute__((tls_model("initial-exec"))) thread_local ThreadRing* t_ring = nullptr;

struct RingOwner {
    ~RingOwner() {
        if (t_ring && t_ring != kNoRing) t_ring->retire();
        t_ring = kNoRing; // late events (other TLS destructors) are counted, not lost silently
    }
};
thread_local RingOwner t_owner;

ThreadRing* makeRing() {
    const size_t segment = s_segmentBytes.load(std::memory_order_relaxed);
    // The ring maps nothing yet: its first write takes a segment from the budget, or counts a drop.
    ThreadRing* ring
        = new (std::nothrow) ThreadRing(int(syscall(SYS_gettid)), std::min(segment, kFirstSegmentBytes), segment);
    if (ring) {
        (void)&t_owner; // touching it registers its destructor for this thread
        std::lock_guard lock(s_mutex);
        s_rings.push_back(ring);
    }
    // Even a thread with no ring starts the writer: the file must still say what was dropped.
    if (auto hook = s_firstRingHook.load()) hook();
    return ring ? ring : kNoRing;
}

void addTotals(RingTotals& into, const ThreadRing& ring) {
    into.produced += ring.produced();
    into.dropped += ring.dropped();
    into.truncated += ring.truncated();
}

ThreadDrops dropsOf(const ThreadRing& ring) {
    ThreadDrops drops;
    drops.tid = ring.tid();
    for (size_t s = 0; s < kEventSourceCount; ++s)
        drops.dropped[s] = ring.dropped(EventSource(s));
    return drops;
}

void warnOnceWhenFull() {
    static std::atomic<bool> warned { false };
    if (BufferBudget::used() * 4 >= BufferBudget::limit() * 3 && !warned.exchange(true))
        TUNEUP_LOG(Warn,
            "event buffers hold three quarters of their budget (TUNEUP_MAX_BUFFER_MB): the writer is "
            "behind; events beyond the budget are dropped and counted");
}

} // namespace

void RingRegistry::configure(size_t segmentBytes, size_t budgetBytes) {
    s_segmentBytes.store(segmentBytes);
    BufferBudget::setLimit(budgetBytes);
}

void RingRegistry::setFirstRingHook(void (*hook)()) {
    s_firstRingHook.store(hook);
}

bool RingRegistry::emit(EventSource source, HostEventKind kind, uint64_t timeNs, const void* fixed, size_t fixedBytes,
    std::string_view text, size_t reserveBytes) {
    ThreadRing* ring = t_ring;
    if (__builtin_expect(ring == nullptr, 0)) ring = t_ring = makeRing();
    if (__builtin_expect(ring == kNoRing, 0)) {
        s_noRingDropped[size_t(source)].fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    return ring->write(source, kind, timeNs, fixed, fixedBytes, text, reserveBytes);
}

void RingRegistry::countDropped(EventSource source) {
    ThreadRing* ring = t_ring;
    if (ring && ring != kNoRing)
        ring->countDropped(source);
    else
        s_noRingDropped[size_t(source)].fetch_add(1, std::memory_order_relaxed);
}

size_t RingRegistry::drainAll(const std::function<void(int, const RecordHeader&, const std::byte*)>& visit) {
    std::vector<ThreadRing*> rings;
    {
        std::lock_guard lock(s_mutex);
        rings = s_rings;
    }
    size_t count = 0;
    const size_t regular = RingSegment::mappedSize(s_segmentBytes.load(std::memory_order_relaxed));
    // Emptied segments: a few are kept for the pool and the spares; the others are unmapped at once,
    // so that while the writer works through a long backlog the threads can grow again.
    std::vector<RingSegment*> emptied;
    const size_t keep = kPooledSegments + rings.size();
    size_t recycled = 0;
    const auto recycle = [&](RingSegment* segment) {
        ++recycled;
        if (segment->mappedBytes == regular && emptied.size() < keep)
            emptied.push_back(segment);
        else
            RingSegment::free(segment);
    };
    std::vector<ThreadRing*> finished, advanced, idle;
    for (ThreadRing* ring : rings) {
        // Read `retired` before draining: a ring retired after this drain is drained again next time.
        const bool retired = ring->retired();
        const int tid = ring->tid();
        const size_t recycledBefore = recycled;
        count += ring->drain(
            [&](const RecordHeader& header, const std::byte* body) { visit(tid, header, body); }, recycle);
        if (retired) {
            if (ring->drainedAll()) finished.push_back(ring);
        } else if (recycled > recycledBefore) {
            advanced.push_back(ring); // it filled a segment since the last pass: it may soon fill another
        } else {
            idle.push_back(ring);
        }
    }

    // Under pressure, memory kept for reuse goes back to the budget first: events come before spares.
    const bool pressed = BufferBudget::used() * 2 > BufferBudget::limit();
    std::vector<RingSegment*> toFree;
    std::vector<ThreadRing*> wantSpare;
    {
        std::lock_guard lock(s_mutex);
        for (ThreadRing* ring : finished) {
            std::erase(s_rings, ring);
            addTotals(s_retiredTotals, *ring);
            if (ring->dropped() > 0) s_retiredDrops.push_back(dropsOf(*ring));
        }
        for (RingSegment* segment : emptied) {
            segment->reset();
            s_pool.push_back(segment);
        }
        for (ThreadRing* ring : advanced) {
            if (ring->hasSpare()) continue;
            if (s_pool.empty()) {
                wantSpare.push_back(ring);
                continue;
            }
            ring->offerSpare(s_pool.back());
            s_pool.pop_back();
        }
        const size_t pooled = pressed ? 0 : kPooledSegments;
        while (s_pool.size() > pooled) {
            toFree.push_back(s_pool.back());
            s_pool.pop_back();
        }
    }
    if (pressed) {
        for (ThreadRing* ring : idle)
            if (RingSegment* spare = ring->takeSpareBack()) toFree.push_back(spare);
        warnOnceWhenFull();
    } else {
        // Mapped here rather than by the busy thread, while the budget has room to spare.
        for (ThreadRing* ring : wantSpare)
            if (RingSegment* spare = RingSegment::allocate(ring->segmentBytes() - RingSegment::kRecordsOffset))
                ring->offerSpare(spare);
    }
    for (RingSegment* segment : toFree)
        RingSegment::free(segment);
    for (ThreadRing* ring : finished)
        delete ring; // unreachable now: unmaps what it still holds
    return count;
}

void RingRegistry::releaseSpareSegments() {
    std::vector<RingSegment*> toFree;
    {
        std::lock_guard lock(s_mutex);
        toFree.swap(s_pool);
        for (ThreadRing* ring : s_rings)
            if (RingSegment* spare = ring->takeSpareBack()) toFree.push_back(spare);
    }
    for (RingSegment* segment : toFree)
        RingSegment::free(segment);
}

RingTotals RingRegistry::totals() {
    std::lock_guard lock(s_mutex);
    RingTotals totals = s_retiredTotals;
    for (const ThreadRing* ring : s_rings)
        addTotals(totals, *ring);
    for (const auto& count : s_noRingDropped) {
        const uint64_t noRing = count.load(std::memory_order_relaxed);
        totals.produced += noRing;
        totals.dropped += noRing;
    }
    return totals;
}

std::vector<ThreadDrops> RingRegistry::drops() {
    std::lock_guard lock(s_mutex);
    std::vector<ThreadDrops> drops = s_retiredDrops;
    for (const ThreadRing* ring : s_rings)
        if (ring->dropped() > 0) drops.push_back(dropsOf(*ring));
    ThreadDrops noRing;
    for (size_t s = 0; s < kEventSourceCount; ++s)
        noRing.dropped[s] = s_noRingDropped[s].load(std::memory_order_relaxed);
    if (std::any_of(noRing.dropped.begin(), noRing.dropped.end(), [](uint64_t n) { return n > 0; }))
        drops.push_back(noRing);
    return drops;
}

void RingRegistry::lockForFork() {
    s_mutex.lock();
}

void RingRegistry::unlockAfterFork() {
    s_mutex.unlock();
}

void RingRegistry::resetAfterFork() {
    // Called in the child with s_mutex held by lockForFork. The parent's rings belong to threads
    // that do not exist here; their events are the parent's to write. A segment the parent's
    // writer or a parent thread held in hand at the fork stays mapped here, unused.
    for (ThreadRing* ring : s_rings)
        delete ring;
    s_rings.clear();
    for (RingSegment* segment : s_pool)
        RingSegment::free(segment);
    s_pool.clear();
    s_retiredDrops.clear();
    s_retiredTotals = {};
    for (auto& count : s_noRingDropped)
        count.store(0);
    SourceCounts::resetAfterFork();
    t_ring = nullptr;
}

} // namespace tuneup::agent
