#include "cupti_source.h"

#include "clock.h"
#include "cuda_api.h"
#include "cupti_buffer_pool.h"
#include "cupti_decode.h"
#include "cupti_dump.h"
#include "cupti_loader.h"
#include "event_counts.h"
#include "log.h"
#include "trace_schema.h"
#include "writer.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <link.h>
#include <memory>
#include <mutex>
#include <new>
#include <unistd.h>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tuneup::agent {

namespace {

// CUPTI's buffers come from the agent's buffer budget (TUNEUP_MAX_BUFFER_MB, shared with the threads'
// event rings), of which CUPTI may hold half (cupti_buffer_pool.h).
constexpr size_t kBufferBytes = CuptiBufferPool::kBufferBytes;
// Completed-but-partial buffers come back only when flushed: bounds what a SIGKILL loses.
constexpr uint64_t kPeriodicFlushNs = 500'000'000;

struct Kind {
    CUpti_ActivityKind kind;
    const char* name;
};

struct CaptureState {
    CuptiApi api;
    int pid = 0;
    CUpti_SubscriberHandle subscriber = nullptr;
    std::vector<Kind> enabled;
    std::atomic<bool> ownClock { false }; // CUPTI stamps records with our CLOCK_MONOTONIC callback
    bool registered = false; // drain and stats handed to the writer

    // CUPTI's callbacks run on CUPTI's thread and on application threads.
    CuptiBufferPool pool;
    std::unique_ptr<CuptiDumper> dumper; // TUNEUP_CUPTI_DUMP; set before capture starts

    std::atomic<uint64_t> dropped { 0 };

    bool noisyApiRows = false; // TUNEUP_TRACE noisy-api

    // Writer thread only.
    DecodeStats stats;
    uint64_t lastFlushNs = 0;
    struct ApiName {
        std::string name;
        bool noisy = false, query = false;
    };
    std::unordered_map<uint64_t, ApiName> names; // (api << 32 | cbid) -> display name
};

std::mutex s_startMutex;
std::atomic<CaptureState*> s_state { nullptr }; // never freed: CUPTI may call back while the process exits
std::atomic<bool> s_on { false }; // kinds enabled, CUPTI may be flushed
std::atomic<bool> s_stopped { false }; // capture ran and was stopped: never again
std::atomic<bool> s_forked { false };
std::atomic<bool> s_externalOn { false }; // EXTERNAL_CORRELATION enabled: the interposers push their ids
std::atomic<bool> s_buffersTaken { false }; // another CUPTI client took the activity buffers
std::atomic<bool> s_deviceOn { false }; // DEVICE records enabled (at the first context, never inside cuInit)

CuptiCoexistence& coexistence() {
    static auto* c = new CuptiCoexistence; // never freed: other clients may call CUPTI during exit
    return *c;
}

// A child must never call CUPTI: flushing there hangs (HPCToolkit #195). The pid check also
// covers a fork whose atfork handler did not run yet.
bool inForkedChild() {
    const CaptureState* state = s_state.load(std::memory_order_acquire);
    return s_forked.load(std::memory_order_relaxed) || (state && state->pid != getpid());
}

uint64_t CUPTIAPI monotonicTimestamp() {
    return nowNs();
}

void CUPTIAPI bufferRequested(uint8_t** buffer, size_t* size, size_t* maxNumRecords) {
    *buffer = nullptr;
    *size = 0;
    *maxNumRecords = 0; // as many as fit
    CaptureState* state = s_state.load(std::memory_order_acquire);
    if (!state || inForkedChild()) return;
    *buffer = state->pool.request(); // null: CUPTI drops the records and counts them
    if (*buffer) *size = kBufferBytes;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t validSize) {
    CaptureState* state = s_state.load(std::memory_order_acquire);
    if (!buffer || !state || inForkedChild()) return;
    state->pool.complete(buffer, validSize);
}

void CUPTIAPI onCallback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void*) {
    // Device records make CUPTI query the driver: enabled once a context exists, never inside cuInit
    // (InitializeInjection), where the driver is not initialised yet.
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && s_on.load()
        && !inForkedChild() && !s_deviceOn.exchange(true)) {
        const CUptiResult rc = s_state.load()->api.activityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
        if (rc != CUPTI_SUCCESS) s_deviceOn.store(false);
        return;
    }
    // Records of a context still in CUPTI's buffers are lost once it is gone: hand them over now.
    if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING && s_on.load()
        && !inForkedChild())
        s_state.load()->api.activityFlushAll(0);
}

// Where libcuda comes from, to explain a CUPTI failure.
std::string driverState() {
    std::string path;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            const char* name = info->dlpi_name;
            const char* slash = name ? strrchr(name, '/') : nullptr;
            if (slash && strncmp(slash + 1, "libcuda.so", strlen("libcuda.so")) == 0) {
                *static_cast<std::string*>(data) = name;
                return 1;
            }
            return 0;
        },
        &path);
    if (path.empty()) return "no CUDA driver: libcuda.so.1 is not loaded";
    if (path.find("/stubs/") != std::string::npos)
        return "the CUDA driver is the toolkit's stub " + path + ": no NVIDIA driver installed";
    return "the CUDA driver " + path + " did not initialise: no GPU, or a driver older than this CUPTI";
}

std::string explain(CUptiResult rc, const char* otherSubscriber) {
    switch (rc) {
    case CUPTI_ERROR_UNKNOWN:
    case CUPTI_ERROR_NOT_INITIALIZED:
        return driverState();
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
        return std::string("another profiler holds CUPTI's only subscriber slot")
            + (otherSubscriber && *otherSubscriber ? std::string(" (") + otherSubscriber + ")" : std::string())
            + ": Nsight Systems/Compute, torch.profiler or cuda-gdb; use its own trace for the GPU side";
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
        return "insufficient privileges for GPU profiling";
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
        return "profiling is not supported on this virtualised GPU";
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
        return "profiling is not supported on this GPU or platform";
    default:
        return {};
    }
}

std::string failure(const CuptiApi& api, const char* call, CUptiResult rc, const char* otherSubscriber = nullptr) {
    std::string text = std::string(call) + ": " + api.resultString(rc);
    if (std::string why = explain(rc, otherSubscriber); !why.empty()) text += " (" + why + ")";
    return text;
}

// CUPTI's clock minus CLOCK_MONOTONIC, from the narrowest of a few brackets.
int64_t measureClockOffset(const CuptiApi& api) {
    int64_t best = 0;
    uint64_t bestWidth = UINT64_MAX;
    for (int i = 0; i < 5; ++i) {
        uint64_t cupti = 0;
        const uint64_t before = nowNs();
        if (api.getTimestamp(&cupti) != CUPTI_SUCCESS) break;
        const uint64_t after = nowNs();
        if (after - before < bestWidth) {
            bestWidth = after - before;
            best = int64_t(cupti) - int64_t(before + (after - before) / 2);
        }
    }
    return best;
}

void collectDropped(CaptureState& state) {
    size_t dropped = 0; // the count resets at each call
    if (state.api.activityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS) state.dropped.fetch_add(dropped);
}

ApiNameInfo apiName(CaptureState& state, int api, uint32_t cbid) {
    const uint64_t key = (uint64_t(uint32_t(api)) << 32) | cbid;
    auto it = state.names.find(key);
    if (it == state.names.end()) {
        CaptureState::ApiName entry;
        const char* raw = nullptr;
        const auto domain = api == schema::kApiRuntime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
        if (state.api.getCallbackName && state.api.getCallbackName(domain, cbid, &raw) == CUPTI_SUCCESS && raw)
            entry.name = apiDisplayName(raw);
        entry.noisy = cuda_api::isNoisy(entry.name);
        entry.query = cuda_api::isQuery(entry.name);
        it = state.names.emplace(key, std::move(entry)).first; // node-based: the view stays valid
    }
    return { it->second.name, it->second.noisy, it->second.query };
}

// The writer thread's GPU pass: flush CUPTI now and then, decode completed buffers, recycle them.
void drain(ActivitySink& sink, bool final) {
    CaptureState* state = s_state.load(std::memory_order_acquire);
    if (!state || inForkedChild()) return;
    try {
        const CuptiApi& api = state->api;
        if (s_on.load() && !s_buffersTaken.load()) { // else flushes would only feed the other client
            const uint64_t now = nowNs();
            if (final) {
                api.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); // incomplete buffers too
            } else if (now - state->lastFlushNs >= kPeriodicFlushNs) {
                api.activityFlushAll(0);
                state->lastFlushNs = now;
            }
            collectDropped(*state);
        }
        const CuptiBufferPool::Completed completed = state->pool.takeCompleted();
        if (completed.empty()) return;
        DecodeOptions options;
        options.apiName = [state](int kind, uint32_t cbid) { return apiName(*state, kind, cbid); };
        options.clockOffsetNs = state->ownClock ? 0 : measureClockOffset(api);
        options.noisyApiRows = state->noisyApiRows;
        const CuptiRecordWalker walker(api.activityGetNextRecord);
        ActivityDecoder decoder(options, sink, state->stats);
        for (const auto& [buffer, validSize] : completed) {
            if (state->dumper) state->dumper->dump(buffer, validSize, walker, options.clockOffsetNs);
            decoder.decode(buffer, validSize, walker);
        }
        decoder.finish();
        state->pool.recycle(completed);
    } catch (...) {
        // Never let an exception reach the writer: the records of this pass are lost.
    }
}

void reportStats(const std::function<void(const char*, const char*, int64_t, const char*)>& setStat) {
    CaptureState* state = s_state.load(std::memory_order_acquire);
    if (!state) return;
    const CuptiBufferPool::Stats pool = state->pool.stats();
    const DecodeStats& stats = state->stats;
    setStat("cupti.records", "info", int64_t(stats.records()),
        "GPU records written (kernels, copies, sets, syncs, API calls, devices)");
    setStat("cupti.dropped", "data_loss", int64_t(state->dropped.load()),
        "GPU activity records CUPTI dropped for lack of buffer space");
    // event_counts' row for CUPTI (no thread): records written, and those lost before the file.
    SourceCounts::setTotals(EventSource::Cupti, stats.records(), state->dropped.load() + stats.noTimestamp);
    setStat("cupti.buffers_refused", "info", int64_t(pool.refused),
        "CUPTI buffer requests refused: CUPTI's half of the buffer budget (TUNEUP_MAX_BUFFER_MB) was in use, or the "
        "budget was spent (their records are in cupti.dropped)");
    setStat("cupti.buffers_over_budget", "info", int64_t(pool.refusedOverBudget),
        "of cupti.buffers_refused, those refused because the buffer budget shared with the threads' event buffers "
        "was spent");
    setStat("cupti.buffer_bytes_peak", "info", int64_t(pool.peakBytes),
        "most memory CUPTI's activity buffers held at once (from the agent's buffer budget)");
    if (const CuptiDumper* dumper = state->dumper.get()) {
        setStat("cupti.dump_files", "info", int64_t(dumper->filesWritten()),
            "CUPTI activity buffers written to TUNEUP_CUPTI_DUMP (meta cupti.dump)");
        setStat("cupti.dump_bytes", "info", int64_t(dumper->bytesWritten()), "bytes of those files");
        setStat("cupti.dump_not_written", "info", int64_t(dumper->buffersNotWritten()),
            "CUPTI activity buffers decoded but not written to TUNEUP_CUPTI_DUMP (TUNEUP_CUPTI_DUMP_MB reached, or a "
            "write failed)");
    }
    setStat("cupti.sync_not_waits", "info", int64_t(stats.syncNotWaits),
        "CUPTI synchronisation records of stream and event queries (not waits): not written");
    for (const auto& [name, calls] : stats.countedApis) {
        const std::string key = "cupti.api_counted." + name;
        setStat(key.c_str(), "info", int64_t(calls),
            "calls counted, not written to api_calls (a noisy CUDA API; TUNEUP_TRACE noisy-api writes them)");
    }
    setStat("cupti.memory_not_operations", "info", int64_t(stats.memoryNotOperations),
        "CUPTI memory records that are neither an allocation nor a release: skipped");
    setStat("cupti.unknown_kind", "info", int64_t(stats.unknownKind),
        "CUPTI records of kinds the agent does not decode (skipped)");
    setStat("cupti.no_timestamp", "data_loss", int64_t(stats.noTimestamp),
        "CUPTI records without timestamps (CUPTI lacked device memory for them): not written");
    setStat("cupti.end_before_start", "info", int64_t(stats.endBeforeStart),
        "CUPTI records ending before they start: written with end = start");
    setStat("cupti.invalid_buffer", "error", int64_t(stats.invalidBuffers),
        "CUPTI buffers holding a record CUPTI could not read: the rest of each was lost");
}

void undo(CaptureState& state) {
    for (auto it = state.enabled.rbegin(); it != state.enabled.rend(); ++it)
        state.api.activityDisable(it->kind);
    state.enabled.clear();
    if (state.subscriber) state.api.unsubscribe(state.subscriber);
    state.subscriber = nullptr;
}

bool startLocked(const Config& config, std::string& status) {
    const auto off = [&](const std::string& why) {
        status = "off: " + why;
        Writer::setMeta("capture.cuda", status);
        TUNEUP_LOG(Warn, "GPU capture %s", status.c_str());
        return false;
    };
    if (s_on.load()) {
        status = "on";
        return true;
    }
    if (s_stopped.load()) {
        status = "off: stopped";
        return false;
    }
    if (!config.trace.anyCuda()) {
        status = "off: not selected (TUNEUP_TRACE)";
        Writer::setMeta("capture.cuda", status);
        return false;
    }
    if (!s_state.load()) {
        auto* fresh = new CaptureState;
        fresh->pid = int(getpid());
        s_state.store(fresh, std::memory_order_release);
    }
    CaptureState& state = *s_state.load();
    CuptiApi& api = state.api;

    std::string error;
    if (!loadCupti(config.cuptiPath, api, error)) return off(error);
    uint32_t version = 0;
    if (api.getVersion(&version) == CUPTI_SUCCESS) Writer::setMeta("cupti.version", std::to_string(version));
    Writer::setMeta("cupti.path", api.path);
    Writer::setMeta("cupti.origin", api.origin);

    // Subscribe first: when another tool owns CUPTI, touch nothing of its session.
    CUptiResult rc;
    char other[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
    if (api.subscribeV2) {
        CUpti_SubscriberParams params {};
        params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
        params.subscriberName = "tuneup";
        params.oldSubscriberName = other;
        params.oldSubscriberSize = sizeof other - 1;
        rc = api.subscribeV2(&state.subscriber, onCallback, nullptr, &params);
    } else {
        rc = api.subscribe(&state.subscriber, onCallback, nullptr);
    }
    if (rc != CUPTI_SUCCESS) {
        state.subscriber = nullptr;
        return off(failure(api, "cuptiSubscribe", rc, other));
    }
    rc = api.enableCallback(
        1, state.subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
    if (rc != CUPTI_SUCCESS) TUNEUP_LOG(Warn, "no flush at CUDA context destruction: %s", api.resultString(rc).c_str());
    rc = api.enableCallback(1, state.subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    if (rc != CUPTI_SUCCESS) TUNEUP_LOG(Warn, "no device records: %s", api.resultString(rc).c_str());
    if (api.setThreadIdType) // API records carry gettid(), like the host events
        api.setThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    // Before any enable, so that every record uses it (cupti_activity.h).
    state.ownClock = api.activityRegisterTimestampCallback
        && api.activityRegisterTimestampCallback(monotonicTimestamp) == CUPTI_SUCCESS;
    // Our buffers come zeroed (calloc, and memset on the writer thread when recycled), so CUPTI
    // need not zero them on the application's thread. Older CUPTIs reject it, harmlessly.
    uint8_t zeroed = 1;
    size_t zeroedSize = sizeof zeroed;
    api.activitySetAttribute(CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &zeroedSize, &zeroed);
    state.noisyApiRows = config.trace.noisyApi;
    state.pool.setMaxBuffers(std::max<size_t>(2, (size_t(config.maxBufferMiB) << 20) / 2 / kBufferBytes));
    // CUDA 13 also reports stream and event queries as synchronisation records; these are not waits.
    // Older CUPTIs lack the switch (and the records).
    if (api.enableAllSyncRecords) {
        const CUptiResult syncRc = api.enableAllSyncRecords(0);
        Writer::setMeta("cupti.sync_queries", syncRc == CUPTI_SUCCESS ? "off" : "on: " + api.resultString(syncRc));
    }

    rc = api.activityRegisterCallbacks(bufferRequested, bufferCompleted);
    if (rc != CUPTI_SUCCESS) {
        undo(state);
        return off(failure(api, "cuptiActivityRegisterCallbacks", rc));
    }

    const TraceSelection& trace = config.trace;
    std::vector<Kind> wanted;
    if (trace.kernel) wanted.push_back({ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel" });
    if (trace.memcpy) {
        wanted.push_back({ CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy" });
        wanted.push_back({ CUPTI_ACTIVITY_KIND_MEMCPY2, "memcpy2" });
    }
    if (trace.memset) wanted.push_back({ CUPTI_ACTIVITY_KIND_MEMSET, "memset" });
    if (trace.sync) wanted.push_back({ CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "sync" });
    if (trace.runtime) wanted.push_back({ CUPTI_ACTIVITY_KIND_RUNTIME, "runtime" });
    if (trace.driver) wanted.push_back({ CUPTI_ACTIVITY_KIND_DRIVER, "driver" });
    if (trace.memory) wanted.push_back({ CUPTI_ACTIVITY_KIND_MEMORY2, "memory" });
    // The ids the GEMM and convolution interposers push around their calls, tied to CUDA calls.
    const bool wantExternal
        = (config.trace.gemm || config.trace.conv) && api.pushExternalCorrelationId && api.popExternalCorrelationId;
    if (wantExternal) wanted.push_back({ CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "external_correlation" });

    std::string kinds, kindsOff;
    for (const Kind& kind : wanted) {
        rc = api.activityEnable(kind.kind);
        if (rc == CUPTI_SUCCESS) {
            state.enabled.push_back(kind);
            kinds += (kinds.empty() ? "" : ",") + std::string(kind.name);
            continue;
        }
        if (state.enabled.empty()) { // the first enable decides
            const std::string call = std::string("cuptiActivityEnable(") + kind.name + ")";
            undo(state);
            return off(failure(api, call.c_str(), rc));
        }
        kindsOff += (kindsOff.empty() ? "" : "; ") + std::string(kind.name) + ": " + api.resultString(rc);
        TUNEUP_LOG(Warn, "GPU capture without %s: %s", kind.name, api.resultString(rc).c_str());
    }

    s_externalOn.store(wantExternal && std::any_of(state.enabled.begin(), state.enabled.end(), [](const Kind& k) {
        return k.kind == CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    }));
    if (!config.cuptiDumpDir.empty() && !state.dumper) {
        std::vector<int32_t> kindValues;
        for (const Kind& kind : state.enabled)
            kindValues.push_back(int32_t(kind.kind));
        state.dumper = std::make_unique<CuptiDumper>(
            config.cuptiDumpDir, uint64_t(config.cuptiDumpMiB) << 20, version, std::move(kindValues));
        Writer::setMeta("cupti.dump", config.cuptiDumpDir);
    }
    s_on.store(true);
    std::vector<CuptiCoexistence::Kind> ours;
    for (const Kind& kind : state.enabled)
        ours.push_back({ int(kind.kind), kind.name });
    coexistence().captureStarted(std::move(ours));
    if (!state.registered) {
        state.registered = true;
        Writer::setGpuDrain(drain);
        Writer::addStatsReporter(reportStats);
    }
    status = "on";
    Writer::setMeta("capture.cuda", status);
    Writer::setMeta("cupti.kinds", kinds);
    if (!kindsOff.empty()) Writer::setMeta("cupti.kinds_off", kindsOff);
    Writer::setMeta("cupti.clock", state.ownClock ? "monotonic" : "offset");
    TUNEUP_LOG(Info, "GPU capture on (%s, CUPTI %u): %s", api.path.c_str(), version, kinds.c_str());
    return true;
}

} // namespace

bool startCuptiCapture(const Config& config, std::string& status) {
    if (inForkedChild()) {
        status = "off: forked child";
        return false;
    }
    try {
        std::lock_guard lock(s_startMutex);
        return startLocked(config, status);
    } catch (...) {
        status = "off: internal error while starting CUPTI";
        return false;
    }
}

bool externalCorrelationOn() {
    return s_externalOn.load(std::memory_order_relaxed) && s_on.load(std::memory_order_relaxed)
        && !s_forked.load(std::memory_order_relaxed);
}

bool pushExternalCorrelation(uint64_t id) {
    const CaptureState* state = s_state.load(std::memory_order_acquire);
    return state && state->api.pushExternalCorrelationId
        && state->api.pushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, id) == CUPTI_SUCCESS;
}

void popExternalCorrelation() {
    const CaptureState* state = s_state.load(std::memory_order_acquire);
    uint64_t last = 0;
    if (state && state->api.popExternalCorrelationId)
        state->api.popExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2, &last);
}

bool cuptiCaptureOn() {
    return s_on.load() && !inForkedChild();
}

void stopCuptiCapture() {
    if (inForkedChild()) return;
    try {
        std::lock_guard lock(s_startMutex);
        if (!s_on.exchange(false)) return;
        s_stopped.store(true);
        CaptureState& state = *s_state.load();
        for (auto it = state.enabled.rbegin(); it != state.enabled.rend(); ++it)
            state.api.activityDisable(it->kind);
        state.enabled.clear();
        if (s_deviceOn.exchange(false)) state.api.activityDisable(CUPTI_ACTIVITY_KIND_DEVICE);
        state.api.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED); // queued for the writer's last pass
        collectDropped(state);
        if (state.subscriber) state.api.unsubscribe(state.subscriber);
        state.subscriber = nullptr;
    } catch (...) { }
}

void noteOtherCuptiClient(OtherCuptiCall call, int kind, const char* caller) {
    if (inForkedChild()) return;
    try {
        CaptureState* state = s_state.load(std::memory_order_acquire);
        const bool on = state && s_on.load();
        // While CUPTI's buffers and clock are still ours, a forced flush hands us what it holds, on our clock.
        if (on && !s_buffersTaken.load()
            && (call == OtherCuptiCall::RegisterBuffers || call == OtherCuptiCall::Timestamp
                || call == OtherCuptiCall::Finalize))
            state->api.activityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        const CuptiCoexistence::Update update = coexistence().note(call, kind, caller ? caller : "", nowNs());
        if (update.buffersTaken) s_buffersTaken.store(true);
        // Records still coming to us are on the other clock: measure it against ours at every pass.
        if (on && call == OtherCuptiCall::Timestamp) state->ownClock.store(false);
        for (const auto& [key, value] : update.meta)
            Writer::setMeta(key, value);
    } catch (...) {
        // Never into the other client's CUPTI call.
    }
}

void disableCuptiAfterFork() {
    s_forked.store(true);
    s_on.store(false);
    // The parent's threads are gone: a mutex one of them held stays held. Buffers are leaked.
    new (&s_startMutex) std::mutex;
}

} // namespace tuneup::agent
