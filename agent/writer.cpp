#include "writer.h"

#include "clock.h"
#include "event_counts.h"
#include "host_event_sink.h"
#include "log.h"
#include "ring_registry.h"
#include "thread_sampler.h"
#include "trace_db.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <poll.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace tuneup::agent {

namespace {

// Bytes written to the wake pipe.
constexpr char kWakeFlush = 'f';
constexpr char kWakeSignal = 's';
constexpr char kWakeStop = 'q';

struct WriterState {
    std::string path;
    bool eager = false;
    Writer::OnOpen onOpen;
    Writer::GpuDrain gpuDrain;
    std::vector<Writer::StatsReporter> reporters;
    std::vector<std::pair<std::string, std::string>> pendingMeta;
    std::unique_ptr<TraceDb> db;
    std::unique_ptr<HostEventSink> sink;
    bool openFailed = false;
    uint64_t flushIntervalNs = 200'000'000;
    uint64_t samplePeriodNs = 10'000'000; // the main thread's state (TUNEUP_SAMPLE_MS, 0 = off)
    uint64_t nextSampleNs = 0;
    std::unique_ptr<ThreadSampler> sampler; // opened by the writer thread at its first sample
    ThreadSample lastSample;
    bool sampled = false;
    int pid = 0;
};

std::mutex s_mutex; // guards s_state's callbacks and pending meta, and the flush handshake
WriterState* s_state = nullptr;
std::atomic<bool> s_running { false };
std::atomic<bool> s_finished { false };
pthread_t s_thread;
int s_wakePipe[2] = { -1, -1 };
int s_ackPipe[2] = { -1, -1 };
std::condition_variable s_flushed;
uint64_t s_flushRequested = 0, s_flushDone = 0;

bool fileExists(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

std::string withPidSuffix(const std::string& path, int pid) {
    const std::string ext = ".db";
    std::string stem
        = path.size() > ext.size() && path.ends_with(ext) ? path.substr(0, path.size() - ext.size()) : path;
    return stem + ".pid" + std::to_string(pid) + ext;
}

// Opens the trace file. A file this very process wrote before exec() is continued; any other
// existing file is left alone and a pid-suffixed name is used instead.
bool openFile(WriterState& state) {
    std::string error;
    bool reopened = false, fellBack = false;
    const auto useFallback = [&] {
        fellBack = true;
        const std::string fallback = withPidSuffix(state.path, state.pid);
        TUNEUP_LOG(
            Warn, "%s exists and belongs to another recording; writing %s", state.path.c_str(), fallback.c_str());
        state.path = fallback;
    };
    if (fileExists(state.path)) {
        if (auto existing = TraceDb::reopen(state.path, error);
            existing && existing->metaValue("pid") == std::to_string(state.pid)) {
            state.db = std::move(existing);
            reopened = true;
        } else {
            useFallback();
        }
    }
    if (!state.db) {
        bool existed = false;
        state.db = TraceDb::create(state.path, error, &existed);
        if (!state.db && existed && !fellBack) {
            useFallback(); // another process created it just now
            state.db = TraceDb::create(state.path, error);
        }
    }
    if (!state.db) {
        TUNEUP_LOG(Warn, "%s; nothing will be recorded", error.c_str());
        state.openFailed = true;
        return false;
    }
    state.db->begin();
    if (state.onOpen) state.onOpen(*state.db, reopened);
    state.sink = std::make_unique<HostEventSink>(*state.db, state.pid);
    state.db->commit();
    state.db->begin();
    return true;
}

size_t drainRings(WriterState& state) {
    size_t count = 0;
    RingRegistry::drainAll([&](int tid, const RecordHeader& header, const std::byte* body) {
        if (!state.db && !state.openFailed) openFile(state);
        if (state.sink) state.sink->consume(tid, header, body);
        ++count;
    });
    return count;
}

void applyPendingMeta(WriterState& state) {
    std::vector<std::pair<std::string, std::string>> meta;
    {
        std::lock_guard lock(s_mutex);
        meta.swap(state.pendingMeta);
    }
    if (state.db)
        for (auto& [key, value] : meta)
            state.db->setMeta(key, value);
    else if (!meta.empty()) {
        std::lock_guard lock(s_mutex); // keep them for when the file opens
        state.pendingMeta.insert(state.pendingMeta.begin(), meta.begin(), meta.end());
    }
}

void drainGpu(WriterState& state, bool final) {
    Writer::GpuDrain drain;
    {
        std::lock_guard lock(s_mutex);
        drain = state.gpuDrain;
    }
    if (!drain) return;
    if (!state.db && !state.openFailed)
        openFile(state); // GPU records only exist in the main process, whose file is eager anyway
    if (state.db) drain(*state.db, final);
}

// Last pass: open ranges, counters and the end time, then commit.
void finalize(WriterState& state) {
    drainRings(state);
    drainGpu(state, true);
    applyPendingMeta(state);
    if (!state.db) return;
    state.sink->closeOpenRanges();
    const RingTotals totals = RingRegistry::totals();
    const uint64_t written = state.sink->consumed();
    const uint64_t dropped = totals.dropped + state.sink->discarded();
    const uint64_t accounted = written + dropped;
    TraceDb& db = *state.db;
    db.setStat("events.produced", "info", int64_t(totals.produced), "host events produced by the recorded threads");
    db.setStat("events.written", "info", int64_t(written), "host events written to this file");
    db.setStat("events.dropped", "data_loss", int64_t(dropped),
        "host events dropped: the event buffers were full (TUNEUP_MAX_BUFFER_MB); by source and thread in "
        "event_counts");
    db.setStat("events.unwritten_at_exit", "data_loss",
        int64_t(totals.produced > accounted ? totals.produced - accounted : 0),
        "host events still in flight when the file was closed");
    db.setStat("events.truncated_text", "info", int64_t(totals.truncated), "messages cut to 65535 bytes");
    db.setStat("nvtx.unmatched_end", "info", int64_t(state.sink->unmatchedEnds()),
        "NVTX pops or range ends with no open range");
    std::vector<Writer::StatsReporter> reporters;
    {
        std::lock_guard lock(s_mutex);
        reporters = state.reporters;
    }
    for (auto& report : reporters)
        report([&](const char* name, const char* severity, int64_t value, const char* description) {
            db.setStat(name, severity, value, description);
        });
    // After the reporters: a source outside the rings (CUPTI) adds its counts as it reports.
    for (const EventCountRow& row : collectEventCounts(state.sink->written(), state.sink->discardedBySource()))
        db.addEventCount(eventSourceName(row.source), row.tid, row.written, row.dropped);
    const uint64_t end = nowNs();
    db.setMeta("end_ns", std::to_string(end));
    db.endProcess(state.pid, end);
    db.commit();
}

// The main thread's state, when a sample is due: written when it changed.
void sampleMainThread(WriterState& state, uint64_t now) {
    if (!state.db || state.samplePeriodNs == 0 || now < state.nextSampleNs) return;
    state.nextSampleNs = now + state.samplePeriodNs;
    if (!state.sampler) state.sampler = std::make_unique<ThreadSampler>(state.pid, state.pid);
    ThreadSample sample;
    if (!state.sampler->sample(sample) || (state.sampled && sample == state.lastSample)) return;
    state.db->addThreadState(now, state.pid, sample.state, sample.syscall);
    if (state.sink) state.sink->countWritten(state.pid, EventSource::HostSampler);
    state.lastSample = sample;
    state.sampled = true;
}

void* writerMain(void*) {
    WriterState& state = *s_state;
    // A first sample of the main thread at once: a program that ends before the first tick still has one.
    if (state.eager && openFile(state)) sampleMainThread(state, nowNs());
    uint64_t lastCommit = nowNs();
    bool busy = false, signalled = false;
    for (;;) {
        pollfd wake { s_wakePipe[0], POLLIN, 0 };
        // Busy: loop again at once so rings never fill while there is data. Idle: a short tick, short
        // enough for the main thread's samples.
        uint64_t tickNs = state.flushIntervalNs / 4;
        if (state.samplePeriodNs > 0) tickNs = std::min(tickNs, state.samplePeriodNs);
        const int timeoutMs = busy ? 0 : int(std::clamp<uint64_t>(tickNs / 1'000'000, 1, 50));
        const int ready = poll(&wake, 1, timeoutMs);
        bool flush = false, signal = false, stop = false;
        if (ready > 0) {
            char requests[64];
            const ssize_t n = read(s_wakePipe[0], requests, sizeof requests);
            for (ssize_t i = 0; i < n; ++i) {
                flush |= requests[i] == kWakeFlush;
                signal |= requests[i] == kWakeSignal;
                stop |= requests[i] == kWakeStop;
            }
        }
        if (signal || stop) {
            finalize(state);
            signalled = signal;
            break;
        }
        uint64_t requested;
        {
            std::lock_guard lock(s_mutex);
            requested = s_flushRequested;
        }
        busy = drainRings(state) > 0;
        drainGpu(state, false);
        applyPendingMeta(state);
        const uint64_t now = nowNs();
        sampleMainThread(state, now);
        if (state.db && (flush || now - lastCommit >= state.flushIntervalNs)) {
            state.db->commit();
            state.db->begin();
            lastCommit = now;
        }
        if (flush) {
            std::lock_guard lock(s_mutex);
            s_flushDone = requested;
            s_flushed.notify_all();
        }
    }
    state.sink.reset();
    state.db.reset(); // closes the file, checkpointing the WAL into it
    if (signalled) {
        // The process is about to die (a signal, or _exit): the file is committed and closed, with no
        // -wal left beside it to copy along; say so.
        const char ack = 'a';
        ssize_t ignored = write(s_ackPipe[1], &ack, 1);
        (void)ignored;
    }
    s_finished.store(true);
    {
        std::lock_guard lock(s_mutex);
        s_flushDone = s_flushRequested;
        s_flushed.notify_all();
    }
    return nullptr;
}

void wake(char request) {
    if (s_wakePipe[1] >= 0) {
        ssize_t ignored = write(s_wakePipe[1], &request, 1);
        (void)ignored;
    }
}

} // namespace

void Writer::start(const std::string& path, bool eager, OnOpen onOpen) {
    if (s_running.load()) return;
    if (pipe2(s_wakePipe, O_CLOEXEC | O_NONBLOCK) != 0 || pipe2(s_ackPipe, O_CLOEXEC) != 0) {
        TUNEUP_LOG(Warn, "cannot create the writer's pipes (errno %d); nothing will be recorded", errno);
        return;
    }
    if (!s_state) s_state = new WriterState; // never freed: threads may still call in during exit
    s_state->path = path;
    s_state->eager = eager;
    s_state->onOpen = std::move(onOpen);
    s_state->pid = int(getpid());
    // A forked child samples its own main thread: close its copies of the parent's /proc files.
    s_state->sampler.reset();
    s_state->sampled = false;
    s_state->nextSampleNs = 0;
    if (const char* ms = getenv("TUNEUP_FLUSH_MS"))
        s_state->flushIntervalNs = std::clamp<uint64_t>(strtoull(ms, nullptr, 10), 10, 60000) * 1'000'000;
    if (const char* ms = getenv("TUNEUP_SAMPLE_MS"))
        s_state->samplePeriodNs = std::min<uint64_t>(strtoull(ms, nullptr, 10), 10000) * 1'000'000;
    s_finished.store(false);
    TraceDb::initializeLibrary();

    // The writer must never receive the process's signals: block them all while it is created.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    const int rc = pthread_create(&s_thread, nullptr, writerMain, nullptr);
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    if (rc != 0) {
        TUNEUP_LOG(Warn, "cannot start the writer thread (error %d); nothing will be recorded", rc);
        return;
    }
    pthread_setname_np(s_thread, "tuneup-writer");
    s_running.store(true);
}

bool Writer::running() {
    return s_running.load() && !s_finished.load();
}

std::string Writer::path() {
    std::lock_guard lock(s_mutex);
    return s_state && s_state->db ? s_state->db->path() : std::string();
}

void Writer::setGpuDrain(GpuDrain drain) {
    std::lock_guard lock(s_mutex);
    if (!s_state) s_state = new WriterState;
    s_state->gpuDrain = std::move(drain);
}

void Writer::addStatsReporter(StatsReporter reporter) {
    std::lock_guard lock(s_mutex);
    if (!s_state) s_state = new WriterState;
    s_state->reporters.push_back(std::move(reporter));
}

void Writer::setMeta(const std::string& key, const std::string& value) {
    std::lock_guard lock(s_mutex);
    if (!s_state) s_state = new WriterState;
    s_state->pendingMeta.emplace_back(key, value);
}

void Writer::flush() {
    if (!running() || pthread_equal(pthread_self(), s_thread)) return;
    std::unique_lock lock(s_mutex);
    const uint64_t ticket = ++s_flushRequested;
    wake(kWakeFlush);
    s_flushed.wait_for(lock, std::chrono::seconds(2), [&] { return s_flushDone >= ticket || s_finished.load(); });
}

void Writer::stop() {
    bool expected = true;
    if (!s_running.compare_exchange_strong(expected, false)) return;
    if (pthread_equal(pthread_self(), s_thread)) return;
    wake(kWakeStop);
    pthread_join(s_thread, nullptr);
}

void Writer::flushFromSignalHandler() {
    // Only async-signal-safe calls: write, poll, read. Not in a vfork() child, which shares the
    // parent's memory but not its writer.
    if (!s_running.load() || s_finished.load() || pthread_equal(pthread_self(), s_thread)
        || int(getpid()) != s_state->pid)
        return;
    wake(kWakeSignal);
    pollfd ack { s_ackPipe[0], POLLIN, 0 };
    if (poll(&ack, 1, 2000) > 0) {
        char byte;
        ssize_t ignored = read(s_ackPipe[0], &byte, 1);
        (void)ignored;
    }
}

void Writer::abandonAfterFork() {
    // The parent's writer thread does not exist here, and its SQLite handle must never be used
    // by the child (sqlite.org/howtocorrupt.html §2.6): leak it, and the parent's pipes' ends.
    for (int* fds : { s_wakePipe, s_ackPipe }) {
        if (fds[0] >= 0) close(fds[0]);
        if (fds[1] >= 0) close(fds[1]);
        fds[0] = fds[1] = -1;
    }
    if (s_state) {
        s_state->db.release();
        s_state->sink.release();
        s_state->gpuDrain = nullptr;
        s_state->reporters.clear();
        s_state->pendingMeta.clear();
        s_state->openFailed = false;
    }
    s_running.store(false);
    s_finished.store(false);
    s_flushRequested = s_flushDone = 0;
    new (&s_mutex) std::mutex; // another thread may have held it at fork()
    new (&s_flushed) std::condition_variable;
}

} // namespace tuneup::agent
