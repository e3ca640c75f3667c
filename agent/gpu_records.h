#pragma once
// GPU-side events as the agent stores them, decoded from CUPTI activity records. Plain data with no
// CUPTI types, so the decoder's output can be checked without a GPU and written without CUPTI headers.

#include <cstdint>
#include <string_view>

namespace tuneup::agent {

struct KernelRecord {
    uint64_t startNs = 0, endNs = 0;
    uint32_t deviceId = 0, contextId = 0, streamId = 0, correlationId = 0;
    std::string_view name; // valid only during the sink call
    int32_t gridX = 0, gridY = 0, gridZ = 0, blockX = 0, blockY = 0, blockZ = 0;
    uint32_t registersPerThread = 0, staticSharedBytes = 0, dynamicSharedBytes = 0;
    uint32_t graphId = 0;
};

struct MemcpyRecord {
    uint64_t startNs = 0, endNs = 0;
    uint32_t deviceId = 0, contextId = 0, streamId = 0, correlationId = 0;
    uint8_t copyKind = 0, srcKind = 0, dstKind = 0; // schema::CopyKind, schema::MemoryKind
    uint64_t bytes = 0;
    int64_t srcDeviceId = -1, dstDeviceId = -1; // peer copies only, else -1
};

struct MemsetRecord {
    uint64_t startNs = 0, endNs = 0;
    uint32_t deviceId = 0, contextId = 0, streamId = 0, correlationId = 0;
    uint64_t bytes = 0;
    uint32_t value = 0;
    uint8_t memoryKind = 0;
};

struct SyncRecord {
    uint64_t startNs = 0, endNs = 0;
    uint32_t type = 0, contextId = 0, correlationId = 0;
    int64_t streamId = -1, eventId = -1; // -1 when not applicable
};

struct ApiRecord {
    uint64_t startNs = 0, endNs = 0;
    uint32_t api = 0; // schema::ApiKind
    uint32_t cbid = 0, processId = 0, threadId = 0, correlationId = 0;
    int64_t returnValue = 0;
    std::string_view name; // resolved by the decoder's name lookup, may be empty
};

struct DeviceRecord {
    uint32_t id = 0;
    std::string_view name;
    uint32_t computeMajor = 0, computeMinor = 0, smCount = 0;
    uint64_t globalMemoryBytes = 0, globalMemoryBandwidthKBs = 0;
    uint32_t coreClockKHz = 0;
    std::string_view uuid; // hex, may be empty
};

// An allocation or release of GPU (or pinned host) memory through the CUDA API: cudaMalloc, cudaFree,
// cudaMallocAsync, cudaHostAlloc, ... (CUPTI MEMORY2 records).
struct MemoryRecord {
    static constexpr uint8_t kAllocation = 1, kRelease = 2; // CUpti_ActivityMemoryOperationType
    uint64_t timeNs = 0;
    uint32_t deviceId = 0, contextId = 0, correlationId = 0;
    int64_t streamId = -1; // stream-ordered (cudaMallocAsync/cudaFreeAsync) only, else -1
    uint8_t operation = 0; // kAllocation, kRelease
    uint8_t memoryKind = 0; // schema::MemoryKind (3 device, 2 pinned host, 5 managed, ...)
    bool isAsync = false; // stream-ordered: from a memory pool
    uint64_t bytes = 0;
    uint64_t address = 0;
};

// An id pushed around a library call (interpose_record.h) and a CUDA API call made inside it.
struct ExternalCorrelationRecord {
    uint32_t kind = 0; // CUpti_ExternalCorrelationKind
    uint64_t externalId = 0;
    uint32_t correlationId = 0;
};

// Receives decoded records. Implemented by the trace writer and, in tests, by a collecting sink.
class ActivitySink {
public:
    virtual ~ActivitySink() = default;
    virtual void kernel(const KernelRecord&) = 0;
    virtual void memcpy(const MemcpyRecord&) = 0;
    virtual void memset(const MemsetRecord&) = 0;
    virtual void sync(const SyncRecord&) = 0;
    virtual void api(const ApiRecord&) = 0;
    virtual void device(const DeviceRecord&) = 0;
    virtual void externalCorrelation(const ExternalCorrelationRecord&) { }
    virtual void memory(const MemoryRecord&) { }
};

} // namespace tuneup::agent
