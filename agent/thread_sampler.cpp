#include "thread_sampler.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

namespace tuneup::agent {

namespace {

// Reads a small /proc file into `buffer` (NUL-terminated); the length, or -1.
ssize_t readSmallFile(const char* path, char* buffer, size_t size)
{
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    const ssize_t n = read(fd, buffer, size - 1);
    close(fd);
    if (n < 0)
        return -1;
    buffer[n] = '\0';
    return n;
}

} // namespace

bool sampleThread(int pid, int tid, ThreadSample& out)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, tid);
    if (readSmallFile(path, text, sizeof text) <= 0)
        return false;
    // "tid (comm) S ...": the command may hold spaces and parentheses, the state follows the last ')'.
    const char* close = strrchr(text, ')');
    if (!close || close[1] != ' ' || !close[2])
        return false;
    out.state = close[2];
    out.syscall = -2;
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", pid, tid);
    if (readSmallFile(path, text, sizeof text) > 0) {
        if (strncmp(text, "running", 7) == 0)
            out.syscall = -1;
        else if (text[0] >= '0' && text[0] <= '9')
            out.syscall = strtoll(text, nullptr, 10);
    }
    return true;
}

} // namespace tuneup::agent
