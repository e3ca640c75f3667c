#include "log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <unistd.h>

namespace tuneup::agent {

namespace {
std::atomic<int> s_level { int(LogLevel::Warn) };
}

void setLogLevel(LogLevel level) {
    s_level.store(int(level), std::memory_order_relaxed);
}

LogLevel logLevel() {
    return LogLevel(s_level.load(std::memory_order_relaxed));
}

void logMessage(LogLevel, const char* format, ...) {
    // One write() per line so lines from several processes do not interleave.
    char line[1024];
    int n = snprintf(line, sizeof line, "tuneup-agent[%d]: ", int(getpid()));
    va_list args;
    va_start(args, format);
    int m = vsnprintf(line + n, sizeof line - size_t(n) - 1, format, args);
    va_end(args);
    size_t len = size_t(n)
        + (m < 0                                          ? 0
                : size_t(m) < sizeof line - size_t(n) - 1 ? size_t(m)
                                                          : sizeof line - size_t(n) - 2);
    line[len++] = '\n';
    ssize_t ignored = write(STDERR_FILENO, line, len);
    (void)ignored;
}

} // namespace tuneup::agent
