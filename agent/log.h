#pragma once
// Agent diagnostics on stderr, prefixed "tuneup-agent:". Never allocates, safe before init.
// Level from TUNEUP_LOG: quiet, warn (default), info, debug.

namespace tuneup::agent {

enum class LogLevel { Quiet = 0, Warn = 1, Info = 2, Debug = 3 };

void setLogLevel(LogLevel);
LogLevel logLevel();
void logMessage(LogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

} // namespace tuneup::agent

#define TUNEUP_LOG(level, ...)                                                                                         \
    do {                                                                                                               \
        if (::tuneup::agent::logLevel() >= ::tuneup::agent::LogLevel::level)                                           \
            ::tuneup::agent::logMessage(::tuneup::agent::LogLevel::level, __VA_ARGS__);                                \
    } while (0)
