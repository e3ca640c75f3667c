#include "writer.h"

#include "clock.h"
#include "disk_reserve.h"
#include "event_counts.h"
#include "host_event_sink.h"
#include "log.h"
#include "native_stack_sampler.h"
#include "ring_registry.h"
#include "sqlite_fd_guard.h"
#include "thread_sampler.h"
#include "trace_db.h"
#include "wake_word.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace tuneup::agent {

namespace {

// What other threads (and signal handlers) ask of the writer: bits in s_requests.
enum Request : uint32_t {
    kFlush = 1, // commit what is there (Writer::flush)
    kFinish = 2, // final record, close; the process is about to die (a signal, _exit)
    kStop = 4, // final record, close (exit)
    kExec = 8, // final record, keep the file open, pause: exec() is about to replace the image
    kResume = 16, // the exec failed: go on
};

// Space kept for the file's final record (a few 64 KiB pages of stats, meta and processes in the WAL).
constexpr size_t kReserveBytes = size_t(1) << 20;
// Longest waits: exit and exec wait for the final pass over everything buffered; a signal or _exit
// (the process is dying) waits less.
constexpr int kStopWaitMs = 10'000;
constexpr int kDyingWaitMs = 2'000;

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
    // The main thread's native stack (programs that are not Python); tried once, at the first sample.
    std::unique_ptr<NativeStackSampler> nativeSampler;
    bool nativeTried = false;
    int pid = 0;
    uint64_t startNs = 0;
    DiskReserve reserve;
    // Writing failed (a full disk, or the program closed the file's descriptors): from then on events are
    // counted, never written, and only the final record is tried.
    bool stopped = false;
    std::string stopReason; // meta capture.stopped
    uint64_t consumedAtCommit = 0; // host events consumed when the last transaction was committed
    ThreadSourceTally writtenAtCommit; // the same by source and thread
    // Events of transactions that were lost (a failed commit, descriptors the program closed).
    uint64_t lostEvents = 0;
    ThreadSourceTally lostBySource;
    uint64_t discardedAfterStop = 0, gpuDiscardedAfterStop = 0;
    bool pausedForExec = false;
    std::map<std::string, int64_t> statsBefore; // a file continued after exec(): its image's totals
};

// Counts GPU records once the file can take no more.
struct DiscardingSink final : ActivitySink {
    uint64_t count = 0;
    void kernel(const KernelRecord&) override { ++count; }
    void memcpy(const MemcpyRecord&) override { ++count; }
    void memset(const MemsetRecord&) override { ++count; }
    void sync(const SyncRecord&) override { ++count; }
    void api(const ApiRecord&) override { ++count; }
    void device(const DeviceRecord&) override { ++count; }
    void externalCorrelation(const ExternalCorrelationRecord&) override { ++count; }
};

std::mutex s_mutex; // guards s_state's callbacks and pending meta, and the flush handshake
WriterState* s_state = nullptr;
std::atomic<bool> s_running { false };
std::atomic<bool> s_finished { false };
pthread_t s_thread;
// No pipe: the program may close any descriptor, and a write to a number it reused would land in
// its own file. The writer sleeps on s_wake; it posts s_progress when it finished or paused.
std::atomic<uint32_t> s_requests { 0 };
WakeWord s_wake, s_progress;
std::atomic<bool> s_pausedForExec { false };
std::condition_variable s_flushed;
uint64_t s_flushRequested = 0, s_flushDone = 0;

bool fileExists(const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0;
}

std::string directoryOf(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

void request(uint32_t what) {
    s_requests.fetch_or(what, std::memory_order_acq_rel);
    s_wake.post();
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
    if (reopened)
        for (const auto& [name, value] : state.db->statValues())
            state.statsBefore[name] = value;
    state.db->begin();
    if (state.onOpen) state.onOpen(*state.db, reopened);
    state.sink = std::make_unique<HostEventSink>(*state.db, state.pid);
    state.db->commit();
    state.db->begin();
    state.reserve.hold(directoryOf(state.path), kReserveBytes);
    return true;
}

size_t drainRings(WriterState& state) {
    size_t count = 0;
    RingRegistry::drainAll([&](int tid, const RecordHeader& header, const std::byte* body) {
        if (!state.db && !state.openFailed) openFile(state);
        if (state.stopped) {
            state.sink->discard(tid, header);
            ++state.discardedAfterStop;
        } else if (state.sink) {
            state.sink->consume(tid, header, body);
        }
        ++count;
    });
    return count;
}

// A tally minus another, or plus it (ThreadSourceTally only adds).
ThreadSourceTally combine(const ThreadSourceTally& a, const ThreadSourceTally& b, bool subtract) {
    ThreadSourceTally out;
    for (const auto& [tid, counts] : a.counts()) {
        const auto other = b.counts().find(tid);
        for (size_t source = 0; source < counts.size(); ++source) {
            const uint64_t minus = subtract && other != b.counts().end() ? other->second[source] : 0;
            if (counts[source] > minus) out.add(tid, EventSource(source), counts[source] - minus);
        }
    }
    if (!subtract)
        for (const auto& [tid, counts] : b.counts())
            for (size_t source = 0; source < counts.size(); ++source)
                if (counts[source]) out.add(tid, EventSource(source), counts[source]);
    return out;
}

// The transaction in progress was lost: what it held counts as dropped.
void countLostTransaction(WriterState& state) {
    state.lostEvents += state.sink->consumed() - state.consumedAtCommit;
    state.lostBySource
        = combine(state.lostBySource, combine(state.sink->written(), state.writtenAtCommit, true), false);
    state.consumedAtCommit = state.sink->consumed();
    state.writtenAtCommit = state.sink->written();
}

// The first write failure that cannot be got round: say once what happened and what the file keeps;
// from then on events are counted, not written.
void noteFailure(WriterState& state) {
    if (!state.db || state.stopped || !state.db->failed()) return;
    state.stopped = true;
    countLostTransaction(state);
    const bool closedByProgram = !sqliteFdsIntact();
    char at[32];
    snprintf(at, sizeof at, "%.1f", double(nowNs() - state.startNs) / 1e9);
    state.stopReason = std::string(closedByProgram ? "the program closed the file's descriptors" : "cannot write")
        + " after " + at + " s: " + state.db->failure();
    TUNEUP_LOG(Warn,
        "%s %s: %s; recording stopped: the file keeps the events committed before (%llu), later events are "
        "counted as dropped",
        closedByProgram ? "the program closed the descriptors of" : "cannot write", state.db->path().c_str(),
        state.db->failure().c_str(), static_cast<unsigned long long>(state.consumedAtCommit - state.lostEvents));
}

// The program closed the file's descriptors (os.closerange, daemons) and may have reused the numbers:
// nothing more goes through them (sqlite_fd_guard.h). The transaction in progress is lost and counted;
// if it held no rows that later events refer to (names, threads), the file is opened again and the
// recording goes on, else it stops as for a full disk.
void recoverDescriptors(WriterState& state) {
    if (!state.db || state.stopped || sqliteFdsIntact()) return;
    if (!state.db->failed()) state.db->fail("the program closed or reused the file's descriptors");
    if (state.db->failedWithDimensions()) return; // noteFailure stops the recording
    const uint64_t before = state.lostEvents;
    countLostTransaction(state);
    if (!state.db->reconnect()) return;
    state.db->begin();
    const unsigned long long lost = state.lostEvents - before;
    if (lost > 0)
        TUNEUP_LOG(Warn,
            "the program closed the descriptors of %s; opened it again (%llu events in flight were lost, counted "
            "as dropped)",
            state.db->path().c_str(), lost);
    else
        TUNEUP_LOG(Info, "the program closed the descriptors of %s; opened it again", state.db->path().c_str());
}

void commitAndBegin(WriterState& state) {
    if (state.stopped) return;
    if (state.db->commit()) {
        state.consumedAtCommit = state.sink->consumed();
        state.writtenAtCommit = state.sink->written();
        state.db->begin();
        // Stop while the final record still fits under a file size limit (the reserve cannot help there).
        if (const std::string limit = fileSizeLimitNear(state.db->path(), kReserveBytes); !limit.empty())
            state.db->fail(limit);
    }
    recoverDescriptors(state);
    noteFailure(state);
}

// After a failure: the space held back, and a connection that works, for the final record.
void readyForFinalRecord(WriterState& state) {
    state.reserve.release();
    if (!sqliteFdsIntact()) state.db->reconnect();
    state.db->resumeForFinalRecord();
}

void applyPendingMeta(WriterState& state) {
    std::vector<std::pair<std::string, std::string>> meta;
    {
        std::lock_guard lock(s_mutex);
        meta.swap(state.pendingMeta);
    }
    if (state.db && !state.db->failed())
        for (auto& [key, value] : meta)
            state.db->setMeta(key, value);
    else if (!meta.empty()) {
        std::lock_guard lock(s_mutex); // keep them for when the file opens, or for its final record
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
    if (state.stopped) {
        DiscardingSink discard; // CUPTI's buffers still go back to it
        drain(discard, final);
        state.gpuDiscardedAfterStop += discard.count;
    } else if (state.db) {
        drain(*state.db, final);
    }
}

// The native samples taken since the last pass, with their frame of the user's code.
void drainNativeSamples(WriterState& state) {
    if (!state.nativeSampler || !state.db || state.stopped) return;
    std::string callers;
    state.nativeSampler->drain([&](uint64_t timeNs, const UserFrame& frame) {
        callers.clear();
        for (const uint64_t address : frame.callers) {
            char hex[24];
            snprintf(hex, sizeof hex, callers.empty() ? "0x%llx" : " 0x%llx", static_cast<unsigned long long>(address));
            callers += hex;
        }
        state.db->addNativeSample(timeNs, state.pid, state.db->intern(frame.module), frame.address,
            frame.function.empty() ? 0 : state.db->intern(frame.function), callers);
        if (state.sink) state.sink->countWritten(state.pid, EventSource::HostSampler);
    });
}

// The last pass: what is left in the rings and CUPTI's buffers, committed; then the file's final
// record (counters, end time) in a transaction of its own, so that it is written even when the data
// could not be (a full disk: the space held back is given back for it).
void finalize(WriterState& state) {
    drainRings(state);
    drainGpu(state, true);
    drainNativeSamples(state);
    applyPendingMeta(state);
    if (!state.db) return;
    recoverDescriptors(state);
    if (!state.stopped) {
        state.sink->closeOpenRanges();
        commitAndBegin(state);
    }
    if (state.stopped) readyForFinalRecord(state);
    TraceDb& db = *state.db;
    db.begin();
    applyPendingMeta(state); // those kept back by a failure
    // A file continued after exec() adds this image's counts to the ones before it.
    const auto setStat = [&](const char* name, const char* severity, int64_t value, const char* description) {
        const auto before = state.statsBefore.find(name);
        if (before != state.statsBefore.end())
            value
                = std::string_view(name).ends_with("_peak") ? std::max(value, before->second) : value + before->second;
        db.setStat(name, severity, value, description);
    };
    // Events that reached the writer but not the file count as dropped, like those of full buffers.
    const uint64_t lost = state.lostEvents;
    const RingTotals totals = RingRegistry::totals();
    const uint64_t written = state.sink->consumed() - lost;
    const uint64_t dropped = totals.dropped + state.sink->discarded() + lost;
    const uint64_t accounted = written + dropped;
    setStat("events.dropped_write_failed", "info", int64_t(lost + state.discardedAfterStop),
        "of events.dropped: not written because the file could not be written (a full disk, or the program "
        "closed its descriptors)");
    setStat("cupti.dropped_write_failed", "data_loss", int64_t(db.gpuRecordsLost() + state.gpuDiscardedAfterStop),
        "GPU records not written because the file could not be written");
    setStat("events.produced", "info", int64_t(totals.produced), "host events produced by the recorded threads");
    setStat("events.written", "info", int64_t(written), "host events written to this file");
    setStat("events.dropped", "data_loss", int64_t(dropped),
        "host events dropped: the event buffers were full (TUNEUP_MAX_BUFFER_MB); by source and thread in "
        "event_counts");
    setStat("events.unwritten_at_exit", "data_loss",
        int64_t(totals.produced > accounted ? totals.produced - accounted : 0),
        "host events still in flight when the file was closed");
    setStat("events.truncated_text", "info", int64_t(totals.truncated), "messages cut to 65535 bytes");
    setStat("nvtx.unmatched_end", "info", int64_t(state.sink->unmatchedEnds()),
        "NVTX pops or range ends with no open range");
    if (state.nativeSampler) {
        const NativeSamplerStats& native = state.nativeSampler->stats();
        setStat("native_stacks.samples", "info", int64_t(native.samples),
            "samples of the main thread's native stack (every TUNEUP_SAMPLE_MS of its CPU time)");
        setStat("native_stacks.with_user_frame", "info", int64_t(native.withUserFrame),
            "of native_stacks.samples: those with a frame of the user's code (native_samples rows)");
        setStat("native_stacks.lost", "info", int64_t(native.lost),
            "native stack samples the kernel dropped: its buffer was full");
        setStat("native_stacks.unwind_us", "info", int64_t(native.unwindNs / 1000),
            "time the agent's writer thread spent unwinding them, in microseconds");
    }
    std::vector<Writer::StatsReporter> reporters;
    {
        std::lock_guard lock(s_mutex);
        reporters = state.reporters;
    }
    for (auto& report : reporters)
        report(setStat);
    // After the reporters: a source outside the rings (CUPTI) adds its counts as it reports.
    const ThreadSourceTally writtenBySource = combine(state.sink->written(), state.lostBySource, true);
    const ThreadSourceTally discardedBySource = combine(state.sink->discardedBySource(), state.lostBySource, false);
    for (const EventCountRow& row : collectEventCounts(writtenBySource, discardedBySource))
        db.addEventCount(eventSourceName(row.source), row.tid, row.written, row.dropped);
    if (state.stopped) db.setMeta("capture.stopped", state.stopReason);
    const uint64_t end = nowNs();
    db.setMeta("end_ns", std::to_string(end));
    db.endProcess(state.pid, end);
    db.commit();
    // Stopped: nothing more is written, even if the process goes on (an exec that fails after this).
    if (state.stopped) db.fail(state.stopReason);
}

// The main thread's native stack sampler (programs that are not Python), once; what it says goes to the file's meta
// when the file is open.
void openNativeSampler(WriterState& state) {
    if (state.nativeTried || state.samplePeriodNs == 0) return;
    state.nativeTried = true;
    std::string why;
    state.nativeSampler = NativeStackSampler::open(state.pid, state.samplePeriodNs, why);
    std::lock_guard lock(s_mutex);
    state.pendingMeta.emplace_back("capture.native_stacks",
        state.nativeSampler ? "on: every " + std::to_string(state.samplePeriodNs / 1'000'000) + " ms of CPU time"
                            : "off: " + why);
}

// The main thread's state, when a sample is due: written when it changed.
void sampleMainThread(WriterState& state, uint64_t now) {
    if (!state.db || state.stopped || state.samplePeriodNs == 0 || now < state.nextSampleNs) return;
    state.nextSampleNs = now + state.samplePeriodNs;
    if (!state.sampler) state.sampler = std::make_unique<ThreadSampler>(state.pid, state.pid);
    openNativeSampler(state);
    ThreadSample sample;
    if (!state.sampler->sample(sample) || (state.sampled && sample == state.lastSample)) return;
    state.db->addThreadState(now, state.pid, sample.state, sample.syscall);
    if (state.sink) state.sink->countWritten(state.pid, EventSource::HostSampler);
    state.lastSample = sample;
    state.sampled = true;
}

// Everything recorded so far and the file's end, committed; the file stays open (its descriptors
// close with the exec, SQLite recovers the WAL when the new image opens it). If exec() fails, the
// writer resumes where it was.
void pauseForExec(WriterState& state) {
    finalize(state);
    state.pausedForExec = true;
    s_pausedForExec.store(true);
    s_progress.post();
}

void resumeAfterExec(WriterState& state) {
    if (!state.pausedForExec) return;
    state.pausedForExec = false;
    s_pausedForExec.store(false);
    if (!state.db || state.stopped) return;
    state.db->begin();
    state.db->clearEnd(state.pid);
    commitAndBegin(state);
}

void acknowledgeFlush(uint64_t requested) {
    std::lock_guard lock(s_mutex);
    s_flushDone = requested;
    s_flushed.notify_all();
}

// One pass: drain, write, sample, commit when due. Returns whether there was data (loop again at once).
bool writePass(WriterState& state, bool flush, uint64_t& lastCommit) {
    recoverDescriptors(state);
    const bool busy = drainRings(state) > 0;
    drainGpu(state, false);
    applyPendingMeta(state);
    const uint64_t now = nowNs();
    sampleMainThread(state, now);
    drainNativeSamples(state);
    if (state.db && (flush || now - lastCommit >= state.flushIntervalNs)) {
        commitAndBegin(state);
        lastCommit = now;
    }
    noteFailure(state);
    return busy;
}

void* writerMain(void*) {
    WriterState& state = *s_state;
    // The main process samples its native stack from the start: the kernel keeps the samples while the file is
    // made (about 30 ms). A first sample of the main thread's state at once: a program that ends before the first
    // tick still has one.
    if (state.eager) {
        openNativeSampler(state);
        if (openFile(state)) sampleMainThread(state, nowNs());
    }
    uint64_t lastCommit = nowNs();
    bool busy = false;
    // Busy: loop again at once so rings never fill while there is data. Idle: a short tick, short
    // enough for the main thread's samples.
    uint64_t tickNs = state.flushIntervalNs / 4;
    if (state.samplePeriodNs > 0) tickNs = std::min(tickNs, state.samplePeriodNs);
    const int tickMs = int(std::clamp<uint64_t>(tickNs / 1'000'000, 1, 50));
    for (;;) {
        // Read the word before taking the requests: a request made after this wakes the wait below.
        const uint32_t seen = s_wake.load();
        const uint32_t requests = s_requests.exchange(0, std::memory_order_acq_rel);
        uint64_t flushRequested;
        {
            std::lock_guard lock(s_mutex);
            flushRequested = s_flushRequested;
        }
        // An exec that failed before the writer even paused for it: both requests come together.
        const bool execCancelled = (requests & kExec) && (requests & kResume) && !state.pausedForExec;
        // In this order: a resume and a stop asked together must still write what came after the pause.
        if (requests & kResume) resumeAfterExec(state);
        if (requests & (kFinish | kStop)) {
            // Paused, and the process ends here after all: the exec failed, what came after it counts.
            if (state.pausedForExec) resumeAfterExec(state);
            finalize(state);
            break;
        }
        if ((requests & kExec) && !execCancelled) pauseForExec(state);
        if (state.pausedForExec) {
            if (requests & kFlush) acknowledgeFlush(flushRequested); // already written
            s_wake.wait(seen, 1000);
            continue;
        }
        busy = writePass(state, requests & kFlush, lastCommit);
        if (requests & kFlush) acknowledgeFlush(flushRequested);
        if (!busy) s_wake.wait(seen, tickMs);
    }
    state.sink.reset();
    state.db.reset(); // closes the file, checkpointing the WAL into it
    state.reserve.release();
    // Before any lock: a signal handler waits for this while the thread it interrupted may hold s_mutex.
    s_finished.store(true);
    s_progress.post();
    acknowledgeFlush(s_flushRequested);
    return nullptr;
}

} // namespace

void Writer::start(const std::string& path, bool eager, const Settings& settings, OnOpen onOpen) {
    if (s_running.load()) return;
    if (!s_state) s_state = new WriterState; // never freed: threads may still call in during exit
    s_state->path = path;
    s_state->eager = eager;
    s_state->onOpen = std::move(onOpen);
    s_state->pid = int(getpid());
    s_state->startNs = nowNs();
    // A forked child samples its own main thread: close its copies of the parent's /proc files.
    s_state->sampler.reset();
    s_state->sampled = false;
    s_state->nextSampleNs = 0;
    s_state->flushIntervalNs = uint64_t(settings.flushIntervalMs) * 1'000'000;
    s_state->samplePeriodNs = uint64_t(settings.samplePeriodMs) * 1'000'000;
    s_finished.store(false);
    s_requests.store(0);
    TraceDb::initializeLibrary();

    // The writer must never receive the process's signals: block them all while it is created. (This
    // also keeps SIGXFSZ away when a write passes RLIMIT_FSIZE: the write fails, the program lives.)
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
    request(kFlush);
    s_flushed.wait_for(lock, std::chrono::seconds(2), [&] { return s_flushDone >= ticket || s_finished.load(); });
}

void Writer::stop() {
    bool expected = true;
    if (!s_running.compare_exchange_strong(expected, false)) return;
    if (pthread_equal(pthread_self(), s_thread)) return;
    request(kStop);
    // Bounded: a writer stuck in I/O must not hold the program's exit.
    if (s_progress.waitUntil([] { return s_finished.load(); }, kStopWaitMs)) {
        pthread_join(s_thread, nullptr);
        return;
    }
    pthread_detach(s_thread);
    TUNEUP_LOG(
        Warn, "the writer did not finish within %d s; the file keeps what it committed before", kStopWaitMs / 1000);
}

// Async-signal-safe from here on: atomics and futex calls only. Never in a vfork() child, which
// shares the parent's memory but not its writer, nor on the writer thread itself.
namespace {
bool writerOfThisProcess() {
    return s_running.load() && !s_finished.load() && !pthread_equal(pthread_self(), s_thread) && s_state
        && int(getpid()) == s_state->pid;
}
} // namespace

void Writer::flushFromSignalHandler() {
    if (!writerOfThisProcess()) return;
    request(kFinish);
    s_progress.waitUntil([] { return s_finished.load(); }, kDyingWaitMs);
}

bool Writer::finishForExec() {
    if (!writerOfThisProcess()) return false;
    s_pausedForExec.store(false);
    request(kExec);
    s_progress.waitUntil([] { return s_pausedForExec.load() || s_finished.load(); }, kStopWaitMs);
    return true; // even after the wait ran out: the writer pauses, and must be resumed if exec fails
}

void Writer::resumeAfterFailedExec() {
    if (writerOfThisProcess()) request(kResume);
}

void Writer::abandonAfterFork() {
    // The parent's writer thread does not exist here, and its SQLite handle must never be used
    // by the child (sqlite.org/howtocorrupt.html §2.6): leak it. Its descriptors stay open, unused.
    forgetSqliteFdsAfterFork();
    if (s_state) {
        static_cast<void>(s_state->db.release()); // leaked on purpose
        static_cast<void>(s_state->sink.release());
        if (s_state->nativeSampler) s_state->nativeSampler->abandonAfterFork();
        s_state->nativeSampler.reset();
        s_state->nativeTried = false;
        s_state->reserve.dropCopyAfterFork();
        s_state->gpuDrain = nullptr;
        s_state->reporters.clear();
        s_state->pendingMeta.clear();
        s_state->openFailed = false;
        s_state->stopped = s_state->pausedForExec = false;
        s_state->consumedAtCommit = s_state->lostEvents = 0;
        s_state->discardedAfterStop = s_state->gpuDiscardedAfterStop = 0;
        s_state->writtenAtCommit = {};
        s_state->lostBySource = {};
        s_state->statsBefore.clear();
    }
    s_running.store(false);
    s_finished.store(false);
    s_pausedForExec.store(false);
    s_requests.store(0);
    s_wake.reset();
    s_progress.reset();
    s_flushRequested = s_flushDone = 0;
    new (&s_mutex) std::mutex; // another thread may have held it at fork()
    new (&s_flushed) std::condition_variable;
}

} // namespace tuneup::agent
