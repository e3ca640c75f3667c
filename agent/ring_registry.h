#pragma once
// Hands each producing thread its own ThreadRing, lazily, and lets the writer visit all rings.
// A ring grows segment by segment from the shared BufferBudget, so nothing is dropped while the
// process is under its budget. The hot path (emit) takes no lock: the registry lock is taken only
// when a thread makes its first event, when it exits, and by the writer to list the rings and to
// recycle segments. The writer keeps a few emptied segments and leaves one as the spare of each
// thread that filled a segment since its last pass, so a busy thread rarely maps memory itself.

#include "event_source.h"
#include "thread_ring.h"

#include <array>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace tuneup::agent {

struct RingTotals {
    uint64_t produced = 0, dropped = 0, truncated = 0;
};

// Events one thread dropped, by source. tid 0: threads that could not get a ring at all (out of
// memory, or events made while the thread was exiting).
struct ThreadDrops {
    int tid = 0;
    std::array<uint64_t, kEventSourceCount> dropped {};
};

class RingRegistry {
public:
    // `segmentBytes` (TUNEUP_BUFFER_KB): how much a thread's buffer grows by at a time (its first
    // segment is at most 64 KiB); `budgetBytes` (TUNEUP_MAX_BUFFER_MB): BufferBudget's limit.
    static void configure(size_t segmentBytes, size_t budgetBytes);
    // Called (outside any lock) when a thread makes its first event: lets a lazily recording
    // process start its writer then.
    static void setFirstRingHook(void (*hook)());

    // Producer side: append one event to the calling thread's ring, leaving `reserveBytes` free
    // after it (ThreadRing::write). Returns false if dropped (counted for `source`).
    static bool emit(EventSource source, HostEventKind kind, uint64_t timeNs, const void* fixed, size_t fixedBytes,
        std::string_view text, size_t reserveBytes = 0);

    // Producer side: counts an event as produced and dropped without writing it (a pop whose
    // push was dropped: writing it would close the wrong range).
    static void countDropped(EventSource source);

    // Writer side (one thread at a time): drains every ring (calling visit for each record),
    // recycles emptied segments and frees retired rings. `visit(tid, header, fixedAndText)`.
    static size_t drainAll(const std::function<void(int, const RecordHeader&, const std::byte*)>& visit);

    // Gives back the memory kept for reuse: the writer's pooled segments and the spares left to
    // threads. Writer side.
    static void releaseSpareSegments();

    // Counters over all rings ever made, plus events dropped because no ring could be made.
    static RingTotals totals();
    // Drops per thread and source, for every thread that dropped anything (freed rings included).
    static std::vector<ThreadDrops> drops();

    // In a forked child: forget the parent's rings (their events belong to the parent's file).
    static void resetAfterFork();

    // For atfork: held across fork() so no other thread is inside the registry then.
    static void lockForFork();
    static void unlockAfterFork();
};

} // namespace tuneup::agent
