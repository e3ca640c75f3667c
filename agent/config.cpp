#include "config.h"
#include "log.h"

#include <cstdlib>
#include <cstring>

namespace tuneup::agent {

namespace {

const char* env(const char* name) {
    const char* value = getenv(name);
    return value && *value ? value : nullptr;
}

uint32_t envNumber(const char* name, uint32_t fallback, uint32_t min, uint32_t max) {
    const char* text = env(name);
    if (!text) return fallback;
    char* end = nullptr;
    unsigned long value = strtoul(text, &end, 10);
    if (*end != '\0' || value < min || value > max) {
        TUNEUP_LOG(Warn, "%s=%s is not a number in [%u, %u]; using %u", name, text, min, max, fallback);
        return fallback;
    }
    return uint32_t(value);
}

} // namespace

bool parseTraceSelection(const std::string& text, TraceSelection& out, std::string& error) {
    TraceSelection selection;
    selection.nvtx = selection.torch = selection.gemm = selection.conv = selection.kernel = selection.memcpy
        = selection.memset = selection.sync = selection.runtime = selection.driver = false;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t comma = text.find(',', pos);
        std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        pos = comma == std::string::npos ? text.size() + 1 : comma + 1;
        if (item == "nvtx")
            selection.nvtx = true;
        else if (item == "torch")
            selection.torch = true;
        else if (item == "gemm")
            selection.gemm = true;
        else if (item == "conv")
            selection.conv = true;
        else if (item == "cuda")
            selection.kernel = selection.memcpy = selection.memset = selection.sync = selection.runtime
                = selection.driver = true;
        else if (item == "kernel")
            selection.kernel = true;
        else if (item == "memcpy")
            selection.memcpy = true;
        else if (item == "memset")
            selection.memset = true;
        else if (item == "sync")
            selection.sync = true;
        else if (item == "runtime")
            selection.runtime = true;
        else if (item == "driver")
            selection.driver = true;
        else if (item == "noisy-api")
            selection.noisyApi = true;
        else if (item == "none")
            ;
        else {
            error = "unknown trace item '" + item
                + "' (known: nvtx, torch, cuda, kernel, memcpy, memset, sync, runtime, driver, gemm, conv, noisy-api, "
                  "none)";
            return false;
        }
    }
    out = selection;
    return true;
}

Config configFromEnvironment() {
    Config config;
    if (const char* level = env("TUNEUP_LOG")) {
        if (!strcmp(level, "quiet"))
            setLogLevel(LogLevel::Quiet);
        else if (!strcmp(level, "info"))
            setLogLevel(LogLevel::Info);
        else if (!strcmp(level, "debug"))
            setLogLevel(LogLevel::Debug);
    }
    config.disabled = env("TUNEUP_DISABLE") && strcmp(env("TUNEUP_DISABLE"), "0") != 0;
    config.outputBase = env("TUNEUP_OUTPUT") ? env("TUNEUP_OUTPUT") : "tuneup.db";
    if (const char* pid = env("TUNEUP_MAIN_PID")) {
        // -1: no process takes run.db (a launcher's run); -N: neither, and process N is the launcher.
        config.mainPid = strtol(pid, nullptr, 10);
        if (config.mainPid < -1) config.launcherPid = -config.mainPid, config.mainPid = -1;
    }
    if (const char* trace = env("TUNEUP_TRACE")) {
        std::string error;
        if (!parseTraceSelection(trace, config.trace, error))
            TUNEUP_LOG(Warn, "TUNEUP_TRACE: %s; recording the defaults", error.c_str());
    }
    config.threadBufferKiB = envNumber("TUNEUP_BUFFER_KB", config.threadBufferKiB, 16, 1u << 20);
    config.maxBufferMiB = envNumber("TUNEUP_MAX_BUFFER_MB", config.maxBufferMiB, 1, 1u << 16);
    config.flushIntervalMs = envNumber("TUNEUP_FLUSH_MS", config.flushIntervalMs, 10, 60000);
    if (const char* path = env("TUNEUP_CUPTI_PATH")) config.cuptiPath = path;
    return config;
}

} // namespace tuneup::agent
