#include "config.h"

#include "log.h"
#include "trace_items.h"

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace tuneup::agent {

namespace {

const char* env(const char* name) {
    const char* value = getenv(name);
    return value && *value ? value : nullptr;
}

// Plain decimal digits only: strtoul alone takes " 5", "+5" and "-1" (as a huge number).
bool decimal(const char* text, uint64_t& value) {
    value = 0;
    size_t digits = 0;
    for (; text[digits]; ++digits) {
        if (text[digits] < '0' || text[digits] > '9' || digits >= 18) return false;
        value = value * 10 + uint64_t(text[digits] - '0');
    }
    return digits > 0;
}

uint32_t envNumber(Config& config, const char* name, uint32_t fallback, uint32_t min, uint32_t max) {
    const char* text = env(name);
    if (!text) return fallback;
    uint64_t value = 0;
    if (!decimal(text, value) || value < min || value > max) {
        config.warnings.push_back(std::string(name) + "=" + text + " is not a number in [" + std::to_string(min) + ", "
            + std::to_string(max) + "]; using " + std::to_string(fallback));
        return fallback;
    }
    return uint32_t(value);
}

} // namespace

bool parseTraceSelection(const std::string& text, TraceSelection& out, std::string& error) {
    TraceSelection selection;
    selection.nvtx = selection.torch = selection.gemm = selection.conv = selection.kernel = selection.memcpy
        = selection.memset = selection.sync = selection.runtime = selection.driver = selection.memory = false;
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
                = selection.driver = selection.memory = true;
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
        else if (item == "memory")
            selection.memory = true;
        else if (item == "noisy-api")
            selection.noisyApi = true;
        else if (item == "none")
            ;
        else {
            error = "unknown trace item '" + item + "' (known: " + traceItemNames() + ")";
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
        else if (!strcmp(level, "warn"))
            setLogLevel(LogLevel::Warn);
        else if (!strcmp(level, "info"))
            setLogLevel(LogLevel::Info);
        else if (!strcmp(level, "debug"))
            setLogLevel(LogLevel::Debug);
        else
            config.warnings.push_back(
                std::string("TUNEUP_LOG=") + level + " is not one of quiet, warn, info, debug; using warn");
    }
    config.disabled = env("TUNEUP_DISABLE") && strcmp(env("TUNEUP_DISABLE"), "0") != 0;
    config.outputBase = env("TUNEUP_OUTPUT") ? env("TUNEUP_OUTPUT") : "tuneup.db";
    if (const char* pid = env("TUNEUP_MAIN_PID")) {
        // -1: no process takes run.db (a launcher's run, set by tuneup record); -N: neither, and process N
        // is the launcher itself.
        uint64_t value = 0;
        if (!strcmp(pid, "-1")) {
            config.mainPid = -1;
        } else if (pid[0] == '-' && decimal(pid + 1, value) && value > 1 && value <= uint64_t(INT32_MAX)) {
            config.mainPid = -1;
            config.launcherPid = long(value);
        } else if (decimal(pid, value) && value <= uint64_t(INT32_MAX))
            config.mainPid = long(value);
        else
            config.warnings.push_back(std::string("TUNEUP_MAIN_PID=") + pid
                + " is not a process id; the first process to record takes the main file");
    }
    if (const char* trace = env("TUNEUP_TRACE")) {
        std::string error;
        if (!parseTraceSelection(trace, config.trace, error))
            config.warnings.push_back("TUNEUP_TRACE=" + std::string(trace) + ": " + error + "; recording the defaults");
    }
    config.threadBufferKiB = envNumber(config, "TUNEUP_BUFFER_KB", config.threadBufferKiB, 16, 1u << 20);
    config.maxBufferMiB = envNumber(config, "TUNEUP_MAX_BUFFER_MB", config.maxBufferMiB, 1, 1u << 16);
    config.flushIntervalMs = envNumber(config, "TUNEUP_FLUSH_MS", config.flushIntervalMs, 10, 60000);
    config.samplePeriodMs = envNumber(config, "TUNEUP_SAMPLE_MS", config.samplePeriodMs, 0, 10000);
    if (const char* path = env("TUNEUP_CUPTI_PATH")) config.cuptiPath = path;
    if (const char* dir = env("TUNEUP_CUPTI_DUMP")) config.cuptiDumpDir = dir;
    config.cuptiDumpMiB = envNumber(config, "TUNEUP_CUPTI_DUMP_MB", config.cuptiDumpMiB, 1, 1u << 16);
    return config;
}

void logConfigWarnings(Config& config) {
    for (const std::string& warning : config.warnings)
        TUNEUP_LOG(Warn, "%s", warning.c_str());
    config.warnings.clear();
}

} // namespace tuneup::agent
