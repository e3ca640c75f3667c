#include "ring_registry.h"

#include "log.h"

#include <atomic>
#include <mutex>
#include <new>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

namespace tuneup::agent {

namespace {

// Heap objects that are never destroyed: threads may still emit while the process exits.
std::mutex& s_mutex = *new std::mutex; // guards s_rings; never held over I/O
std::vector<ThreadRing*>& s_rings = *new std::vector<ThreadRing*>;
std::atomic<void (*)()> s_firstRingHook { nullptr };
std::atomic<size_t> s_ringBytes { 1u << 20 };
std::atomic<size_t> s_budgetBytes { 32u << 20 };
std::atomic<size_t> s_allocatedBytes { 0 };
// Totals of rings already freed, and of events from threads that got no ring.
RingTotals s_retiredTotals;
std::atomic<uint64_t> s_noRingProduced { 0 };

// A thread that could not get a ring (budget spent) points here, so it does not retry each event.
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

ThreadRing* allocateRing() {
    const size_t bytes = s_ringBytes.load(std::memory_order_relaxed);
    if (s_allocatedBytes.fetch_add(bytes) + bytes > s_budgetBytes.load(std::memory_order_relaxed)) {
        s_allocatedBytes.fetch_sub(bytes);
        static std::atomic<bool> warned { false };
        if (!warned.exchange(true))
            TUNEUP_LOG(Warn,
                "event buffers use their whole budget (TUNEUP_MAX_BUFFER_MB); events of further "
                "threads are dropped and counted");
        return kNoRing;
    }
    ThreadRing* ring = new (std::nothrow) ThreadRing(bytes, int(syscall(SYS_gettid)));
    if (!ring) {
        s_allocatedBytes.fetch_sub(bytes);
        return kNoRing;
    }
    (void)&t_owner; // touching it registers its destructor for this thread
    std::lock_guard lock(s_mutex);
    s_rings.push_back(ring);
    return ring;
}

ThreadRing* makeRing() {
    ThreadRing* ring = allocateRing();
    // Even a thread with no ring starts the writer: the file must still say what was dropped.
    if (auto hook = s_firstRingHook.load()) hook();
    return ring;
}

void addTotals(RingTotals& into, const ThreadRing& ring) {
    into.produced += ring.produced();
    into.dropped += ring.dropped();
    into.truncated += ring.truncated();
}

} // namespace

void RingRegistry::configure(size_t ringBytes, size_t budgetBytes) {
    // The budget counts what a ring really takes: freeing subtracts its capacity.
    s_ringBytes.store(ThreadRing::capacityFor(ringBytes));
    s_budgetBytes.store(budgetBytes);
}

void RingRegistry::setFirstRingHook(void (*hook)()) {
    s_firstRingHook.store(hook);
}

bool RingRegistry::emit(HostEventKind kind, uint64_t timeNs, const void* fixed, size_t fixedBytes,
    std::string_view text, size_t reserveBytes) {
    ThreadRing* ring = t_ring;
    if (__builtin_expect(ring == nullptr, 0)) ring = t_ring = makeRing();
    if (__builtin_expect(ring == kNoRing, 0)) {
        s_noRingProduced.fetch_add(1, std::memory_order_relaxed);
        return false;
    }
    return ring->write(kind, timeNs, fixed, fixedBytes, text, reserveBytes);
}

void RingRegistry::countDropped() {
    ThreadRing* ring = t_ring;
    if (ring && ring != kNoRing)
        ring->countDropped();
    else
        s_noRingProduced.fetch_add(1, std::memory_order_relaxed);
}

size_t RingRegistry::drainAll(const std::function<void(int, const RecordHeader&, const std::byte*)>& visit) {
    std::vector<ThreadRing*> rings;
    {
        std::lock_guard lock(s_mutex);
        rings = s_rings;
    }
    size_t count = 0;
    std::vector<ThreadRing*> finished;
    for (ThreadRing* ring : rings) {
        // Read `retired` before draining: a ring retired after this drain is drained again next time.
        const bool retired = ring->retired();
        const int tid = ring->tid();
        count += ring->drain([&](const RecordHeader& header, const std::byte* body) { visit(tid, header, body); });
        if (retired) finished.push_back(ring);
    }
    if (!finished.empty()) {
        std::lock_guard lock(s_mutex);
        for (ThreadRing* ring : finished) {
            std::erase(s_rings, ring);
            addTotals(s_retiredTotals, *ring);
            s_allocatedBytes.fetch_sub(ring->capacity());
            delete ring;
        }
    }
    return count;
}

RingTotals RingRegistry::totals() {
    std::lock_guard lock(s_mutex);
    RingTotals totals = s_retiredTotals;
    for (const ThreadRing* ring : s_rings)
        addTotals(totals, *ring);
    const uint64_t noRing = s_noRingProduced.load(std::memory_order_relaxed);
    totals.produced += noRing;
    totals.dropped += noRing;
    return totals;
}

void RingRegistry::lockForFork() {
    s_mutex.lock();
}

void RingRegistry::unlockAfterFork() {
    s_mutex.unlock();
}

void RingRegistry::resetAfterFork() {
    // Called in the child with s_mutex held by lockForFork. The parent's rings belong to threads
    // that do not exist here; their events are the parent's to write.
    for (ThreadRing* ring : s_rings)
        delete ring;
    s_rings.clear();
    s_retiredTotals = {};
    s_allocatedBytes.store(0);
    s_noRingProduced.store(0);
    t_ring = nullptr;
}

} // namespace tuneup::agent
