#pragma once
// Hands each producing thread its own ThreadRing, lazily, within a global memory budget, and lets
// the writer visit all rings. The hot path (emit) takes no lock: the registry lock is taken only
// when a thread makes its first event, when it exits, and by the writer to list the rings.

#include "thread_ring.h"

#include <cstdint>
#include <functional>
#include <string_view>

namespace tuneup::agent {

struct RingTotals {
    uint64_t produced = 0, dropped = 0, truncated = 0;
};

class RingRegistry {
public:
    static void configure(size_t ringBytes, size_t budgetBytes);
    // Called (outside any lock) when a thread makes its first event: lets a lazily recording
    // process start its writer then.
    static void setFirstRingHook(void (*hook)());

    // Producer side: append one event to the calling thread's ring, leaving `reserveBytes` free
    // after it (ThreadRing::write). Returns false if dropped.
    static bool emit(HostEventKind kind, uint64_t timeNs, const void* fixed, size_t fixedBytes, std::string_view text,
        size_t reserveBytes = 0);

    // Producer side: counts an event as produced and dropped without writing it (a pop whose
    // push was dropped: writing it would close the wrong range).
    static void countDropped();

    // Writer side: drains every ring (calling visit for each record) and frees retired rings.
    // `visit(tid, header, fixedAndText)`.
    static size_t drainAll(const std::function<void(int, const RecordHeader&, const std::byte*)>& visit);

    // Counters over all rings ever made, plus events dropped because no ring could be made.
    static RingTotals totals();

    // In a forked child: forget the parent's rings (their events belong to the parent's file).
    static void resetAfterFork();

    // For atfork: held across fork() so no other thread is inside the registry then.
    static void lockForFork();
    static void unlockAfterFork();
};

} // namespace tuneup::agent
