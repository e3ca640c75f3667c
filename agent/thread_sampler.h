#pragma once
// Samples a thread's scheduler state and the system call it is blocked in, from /proc, so that the
// analyzer can tell a training thread that waits (for a batch from the DataLoader's queue, a lock, the
// GPU) from one that is busy (Python, launching work). Used by the writer thread, never the sampled one.

#include "owned_fd.h"

#include <cstdint>

namespace tuneup::agent {

struct ThreadSample {
    char state = '?'; // /proc/<tid>/stat: R running, S sleeping, D disk wait, ...
    int64_t syscall = -2; // the system call it is in; -1 running in user space; -2 unknown
    bool operator==(const ThreadSample&) const = default;
};

class ThreadSampler {
public:
    // Keeps the thread's /proc files open: a sample is then two preads, no path lookups (and an fstat
    // each, as the program may have closed them and reused the numbers: owned_fd.h).
    ThreadSampler(int pid, int tid);
    ThreadSampler(const ThreadSampler&) = delete;
    ThreadSampler& operator=(const ThreadSampler&) = delete;

    // False when the thread is gone or /proc cannot be read.
    bool sample(ThreadSample& out);

private:
    int m_pid, m_tid;
    OwnedFd m_stat, m_syscall; // opened again when the program closed them
};

} // namespace tuneup::agent
