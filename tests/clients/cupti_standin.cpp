// A stand-in for libcupti on a machine with a GPU, for the tests of CUPTI's activity buffers: without a
// GPU the real CUPTI never asks for a buffer. It does what CUPTI does with them, as far as its client can
// tell: when it has a record to store and no buffer, it asks the client for one (the request callback);
// it fills the buffer with records of its own version's layout (this toolkit's structs), hands it back
// when the next record no longer fits or on a forced flush (the completion callback), and drops the
// records it has no buffer for, counting them for cuptiActivityGetNumDroppedRecords (which resets the
// count). Timestamps come from the client's timestamp callback when it registered one.
//   tuneup_standin_kernels(n): n kernel records, as n kernel launches would make.

#include <cstdint>
#include <cstring>
#include <ctime>
#include <cupti.h>
#include <mutex>

#define STANDIN_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

std::mutex s_mutex;
CUpti_BuffersCallbackRequestFunc s_requested = nullptr;
CUpti_BuffersCallbackCompleteFunc s_completed = nullptr;
CUpti_TimestampCallbackFunc s_clock = nullptr;
uint8_t* s_buffer = nullptr; // the buffer being filled
size_t s_size = 0, s_used = 0;
size_t s_dropped = 0;
uint32_t s_correlation = 0;
int s_subscribers = 0;

const char* const kKernelNames[] = { "standin_gemm_kernel", "standin_conv_kernel", "standin_elementwise_kernel" };

uint64_t now() {
    if (s_clock) return s_clock();
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
}

// Hands the buffer back with what it holds. Called with s_mutex held, as CUPTI's own lock would be.
void complete() {
    if (!s_buffer) return;
    uint8_t* buffer = s_buffer;
    const size_t used = s_used;
    s_buffer = nullptr;
    s_used = 0;
    if (s_completed) s_completed(nullptr, 0, buffer, s_size, used);
}

template <class Record> void store(const Record& record) {
    if (s_buffer && s_used + sizeof record > s_size) complete();
    if (!s_buffer && s_requested) {
        size_t maxRecords = 0;
        s_requested(&s_buffer, &s_size, &maxRecords);
        if (s_buffer && s_size < sizeof record) s_buffer = nullptr;
    }
    if (!s_buffer) {
        ++s_dropped;
        return;
    }
    std::memcpy(s_buffer + s_used, &record, sizeof record);
    s_used += sizeof record;
}

} // namespace

STANDIN_EXPORT void tuneup_standin_kernels(int n) {
    std::lock_guard lock(s_mutex);
    for (int i = 0; i < n; ++i) {
        CUpti_ActivityKernel10 k {};
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.correlationId = ++s_correlation;
        k.start = now();
        k.end = k.start + 1000 + uint64_t(i % 7);
        k.completed = k.end;
        k.deviceId = 0;
        k.contextId = 1;
        k.streamId = 7;
        k.gridX = 1 + i % 64;
        k.gridY = k.gridZ = 1;
        k.blockX = 256;
        k.blockY = k.blockZ = 1;
        k.registersPerThread = 32;
        k.name = kKernelNames[s_correlation % 3];
        store(k);
    }
}

STANDIN_EXPORT CUptiResult cuptiGetVersion(uint32_t* version) {
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
    *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR_UNKNOWN";
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
    *timestamp = now();
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*) {
    if (s_subscribers > 0) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    ++s_subscribers;
    *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&s_subscribers);
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle) {
    s_subscribers = 0;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiEnableCallback(
    uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId) {
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed) {
    std::lock_guard lock(s_mutex);
    s_requested = requested;
    s_completed = completed;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc clock) {
    std::lock_guard lock(s_mutex);
    s_clock = clock;
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind) {
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind) {
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute, size_t*, void*) {
    return CUPTI_SUCCESS;
}

// Every record this stand-in makes is a CUpti_ActivityKernel10.
STANDIN_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t* buffer, size_t validSize, CUpti_Activity** record) {
    const size_t next
        = *record ? size_t(reinterpret_cast<uint8_t*>(*record) - buffer) + sizeof(CUpti_ActivityKernel10) : 0;
    if (next + sizeof(CUpti_ActivityKernel10) > validSize) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = reinterpret_cast<CUpti_Activity*>(buffer + next);
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
    std::lock_guard lock(s_mutex);
    *dropped = s_dropped;
    s_dropped = 0;
    return CUPTI_SUCCESS;
}

// Full buffers went back as they filled; a forced flush also hands back the one being filled.
STANDIN_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag) {
    std::lock_guard lock(s_mutex);
    if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) complete();
    return CUPTI_SUCCESS;
}

STANDIN_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain, uint32_t, const char** name) {
    *name = "cudaStandin";
    return CUPTI_SUCCESS;
}
