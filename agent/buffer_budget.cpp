#include "buffer_budget.h"

#include <atomic>

namespace tuneup::agent {

namespace {
std::atomic<size_t> s_limit { size_t(32) << 20 };
std::atomic<size_t> s_used { 0 };
} // namespace

void BufferBudget::setLimit(size_t bytes) {
    s_limit.store(bytes, std::memory_order_relaxed);
}

size_t BufferBudget::limit() {
    return s_limit.load(std::memory_order_relaxed);
}

size_t BufferBudget::used() {
    return s_used.load(std::memory_order_relaxed);
}

bool BufferBudget::tryReserve(size_t bytes) {
    // A compare-and-swap loop rather than add-then-undo: an add that overshoots, even briefly,
    // could make another thread's reservation fail while the budget is not really spent.
    size_t used = s_used.load(std::memory_order_relaxed);
    do {
        if (bytes > s_limit.load(std::memory_order_relaxed) || used > s_limit.load(std::memory_order_relaxed) - bytes)
            return false;
    } while (!s_used.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
    return true;
}

void BufferBudget::release(size_t bytes) {
    s_used.fetch_sub(bytes, std::memory_order_relaxed);
}

} // namespace tuneup::agent
