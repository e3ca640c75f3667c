#pragma once
// The agent's buffer memory (TUNEUP_MAX_BUFFER_MB): every thread's event segments (ring_segment.h)
// draw from it, and any other buffer pool of the agent may (CUPTI's). Lock-free and
// async-signal-safe: a producing thread reserves before it maps memory and gives back what it unmaps.

#include <cstddef>

namespace tuneup::agent {

class BufferBudget {
public:
    static void setLimit(size_t bytes);
    static size_t limit();
    static size_t used();
    // Takes `bytes`; false, taking nothing, when that would pass the limit. Never overshoots, even
    // for a moment: a thread is refused only when the others really hold the budget.
    static bool tryReserve(size_t bytes);
    static void release(size_t bytes);
};

} // namespace tuneup::agent
