#pragma once
// A word threads and signal handlers can wait on and wake through, with no file descriptor: the
// program may close or reuse any descriptor (daemons and test runners close what they inherit), so
// the writer's wake-ups and hand-shakes must not depend on one. Built on the futex system call;
// every member is async-signal-safe and every wait is bounded.

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <ctime>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace tuneup::agent {

class WakeWord {
public:
    uint32_t load() const { return m_word.load(std::memory_order_acquire); }

    // Changes the word and wakes every waiter.
    void post() {
        m_word.fetch_add(1, std::memory_order_acq_rel);
        syscall(SYS_futex, &m_word, FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
    }

    // Sleeps while the word still equals `seen`, at most `timeoutMs`. Returns at once when it
    // already changed; may also return early (signals), so callers re-check their condition.
    void wait(uint32_t seen, int timeoutMs) const {
        timespec timeout { timeoutMs / 1000, long(timeoutMs % 1000) * 1'000'000 };
        syscall(SYS_futex, &m_word, FUTEX_WAIT_PRIVATE, seen, &timeout, nullptr, 0);
    }

    // Waits until `done()` holds or `timeoutMs` passed (CLOCK_MONOTONIC); returns done().
    template <typename Done> bool waitUntil(Done done, int timeoutMs) const {
        const int64_t deadline = nowMs() + timeoutMs;
        for (;;) {
            const uint32_t seen = load();
            if (done()) return true;
            const int64_t left = deadline - nowMs();
            if (left <= 0) return done();
            wait(seen, int(left));
        }
    }

    // In a forked child: nobody waits on the parent's word here.
    void reset() { m_word.store(0, std::memory_order_relaxed); }

private:
    static int64_t nowMs() {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
    }

    // futex(2) takes a plain 32-bit word: the atomic must be exactly that.
    static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
    mutable std::atomic<uint32_t> m_word { 0 };
};

} // namespace tuneup::agent
