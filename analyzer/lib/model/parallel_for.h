#pragma once
// Runs independent pieces of work on a few threads: the model's tables sorted side by side, a rank's
// rules evaluated side by side. Each piece must touch only what no other piece writes.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace tuneup::analysis {

// How many threads make sense for `pieces` independent pieces on this machine, at most `limit`.
inline unsigned usefulThreads(size_t pieces, unsigned limit) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return static_cast<unsigned>(std::min<size_t>({ pieces, cores, std::max(limit, 1u) }));
}

// Calls work(i) for every i in [0, count) on up to `threads` threads, this one among them, each taking
// the next i not taken; returns when all are done. What work(i) throws is rethrown here once every piece
// has finished: the exception of the lowest i, as a loop would have thrown it. Where no thread can be
// started the pieces run on this one.
template <class Work> void parallelFor(size_t count, unsigned threads, Work&& work) {
    std::vector<std::exception_ptr> errors(count);
    std::atomic<size_t> next { 0 };
    auto run = [&] {
        for (size_t i = next++; i < count; i = next++) {
            try {
                work(i);
            } catch (...) {
                errors[i] = std::current_exception();
            }
        }
    };
    std::vector<std::thread> helpers;
    const size_t wanted = std::min<size_t>(count, std::max(threads, 1u)) - (count > 0 ? 1 : 0);
    for (size_t t = 0; t < wanted; ++t) {
        try {
            helpers.emplace_back(run);
        } catch (const std::system_error&) {
            break; // no more threads: the ones started and this one share the pieces
        }
    }
    run();
    for (std::thread& helper : helpers)
        helper.join();
    for (std::exception_ptr& error : errors)
        if (error) std::rethrow_exception(error);
}

} // namespace tuneup::analysis
