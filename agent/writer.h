#pragma once
// The writer thread: the only code that touches the trace file. It drains the threads' rings and
// the GPU capture's completed buffers, writes them in large transactions and commits at least every
// flush interval, so a killed process leaves a file holding every event older than about that.

#include "gpu_records.h"

#include <cstdint>
#include <functional>
#include <string>

namespace tuneup::agent {

class TraceDb;

class Writer {
public:
    // Called on the writer thread at every pass: hand decoded GPU records to the sink.
    // `final` is true on the last pass before the file is closed.
    using GpuDrain = std::function<void(ActivitySink& sink, bool final)>;
    // Called on the writer thread when the file is finalised: returns stats to store as
    // (name, severity, value, description) through `setStat`.
    using StatsReporter
        = std::function<void(const std::function<void(const char*, const char*, int64_t, const char*)>& setStat)>;

    // Writes the file's metadata when the writer creates (or reopens) it.
    using OnOpen = std::function<void(TraceDb& db, bool reopened)>;

    struct Settings {
        uint32_t flushIntervalMs = 200; // TUNEUP_FLUSH_MS
        uint32_t samplePeriodMs = 10; // TUNEUP_SAMPLE_MS; 0: the main thread is not sampled
    };

    // Starts the thread. `path` is opened now if `eager`, else on the first event (forked children).
    // The thread never touches a descriptor the program could have closed or reused, and if a write
    // fails (a full disk) it stops writing events, keeps what was committed, counts the rest as
    // dropped and still tries the file's final record (with space it held back for it).
    static void start(const std::string& path, bool eager, const Settings& settings, OnOpen onOpen);
    // The file being written, empty before it is opened.
    static std::string path();
    static bool running();

    static void setGpuDrain(GpuDrain drain);
    static void addStatsReporter(StatsReporter reporter);
    // Thread-safe: stored with the next commit.
    static void setMeta(const std::string& key, const std::string& value);

    // Writes everything produced so far and commits; blocks the caller until done (or 2 s).
    static void flush();
    // Final flush, stats, close; idempotent; waits at most 10 s. After it, events are no longer written.
    static void stop();
    // Async-signal-safe: asks the writer to finalise and waits for it (at most 2 s).
    static void flushFromSignalHandler();

    // Async-signal-safe, for exec(): writes everything so far and the file's end, and pauses the
    // writer (waits at most 10 s). Returns false when this process has no writer; when true, call
    // resumeAfterFailedExec() if exec() returns.
    static bool finishForExec();
    // The exec() failed and the program goes on: the writer resumes.
    static void resumeAfterFailedExec();

    // In a forked child: forget the parent's writer (thread, file handle) without touching them.
    static void abandonAfterFork();
};

} // namespace tuneup::agent
