#include "thread_sampler.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace tuneup::agent {

namespace {

int openProcFile(int pid, int tid, const char* name) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task/%d/%s", pid, tid, name);
    return open(path, O_RDONLY | O_CLOEXEC);
}

// Reads the whole (small) file again from its start into `buffer`, NUL-terminated: the length, or -1.
ssize_t reread(int fd, char* buffer, size_t size) {
    if (fd < 0) return -1;
    const ssize_t n = pread(fd, buffer, size - 1, 0);
    if (n < 0) return -1;
    buffer[n] = '\0';
    return n;
}

} // namespace

ThreadSampler::ThreadSampler(int pid, int tid)
    : m_pid(pid)
    , m_tid(tid)
    , m_stat(openProcFile(pid, tid, "stat"))
    , m_syscall(openProcFile(pid, tid, "syscall")) {
}

bool ThreadSampler::sample(ThreadSample& out) {
    if (m_stat.get() < 0) m_stat.reset(openProcFile(m_pid, m_tid, "stat"));
    if (m_syscall.get() < 0) m_syscall.reset(openProcFile(m_pid, m_tid, "syscall"));
    char text[512];
    if (reread(m_stat.get(), text, sizeof text) <= 0) return false;
    // "tid (comm) S ...": the command may hold spaces and parentheses, the state follows the last ')'.
    const char* close = strrchr(text, ')');
    if (!close || close[1] != ' ' || !close[2]) return false;
    out.state = close[2];
    out.syscall = -2;
    if (reread(m_syscall.get(), text, sizeof text) > 0) {
        if (strncmp(text, "running", 7) == 0)
            out.syscall = -1;
        else if (text[0] >= '0' && text[0] <= '9')
            out.syscall = strtoll(text, nullptr, 10);
    }
    return true;
}

} // namespace tuneup::agent
