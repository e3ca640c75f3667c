#pragma once
// CUPTI activity buffers for the decoding tests, built from this toolkit's real record structs (no GPU):
// a factory per record kind beside the record the agent must decode from it, buffers to put them in,
// a sink that collects what was decoded and a walker that knows the header's record sizes.

#include "config.h"
#include "cuda_api.h"
#include "cupti_decode.h"
#include "cupti_loader.h"
#include "cupti_source.h"
#include "toolkit_cupti.h"
#include "trace_schema.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace tuneup::agent::test {

// ---- helpers -------------------------------------------------------------------------------

// One line per record, every field, so a mismatch shows exactly what differs.
inline std::string describe(const KernelRecord& k) {
    std::ostringstream s;
    s << "kernel " << k.startNs << "-" << k.endNs << " dev" << k.deviceId << " ctx" << k.contextId << " s" << k.streamId
      << " corr" << k.correlationId << " '" << k.name << "' grid " << k.gridX << "," << k.gridY << "," << k.gridZ
      << " block " << k.blockX << "," << k.blockY << "," << k.blockZ << " regs " << k.registersPerThread << " smem "
      << k.staticSharedBytes << "+" << k.dynamicSharedBytes << " graph " << k.graphId;
    return s.str();
}

inline std::string describe(const MemcpyRecord& m) {
    std::ostringstream s;
    s << "memcpy " << m.startNs << "-" << m.endNs << " dev" << m.deviceId << " ctx" << m.contextId << " s" << m.streamId
      << " corr" << m.correlationId << " kind " << int(m.copyKind) << " " << int(m.srcKind) << "->" << int(m.dstKind)
      << " bytes " << m.bytes << " peer " << m.srcDeviceId << "->" << m.dstDeviceId;
    return s.str();
}

inline std::string describe(const MemsetRecord& m) {
    std::ostringstream s;
    s << "memset " << m.startNs << "-" << m.endNs << " dev" << m.deviceId << " ctx" << m.contextId << " s" << m.streamId
      << " corr" << m.correlationId << " bytes " << m.bytes << " value " << m.value << " mem " << int(m.memoryKind);
    return s.str();
}

inline std::string describe(const SyncRecord& r) {
    std::ostringstream s;
    s << "sync " << r.startNs << "-" << r.endNs << " type " << r.type << " ctx" << r.contextId << " corr"
      << r.correlationId << " stream " << r.streamId << " event " << r.eventId;
    return s.str();
}

inline std::string describe(const ApiRecord& a) {
    std::ostringstream s;
    s << "api " << a.startNs << "-" << a.endNs << " api " << a.api << " cbid " << a.cbid << " pid " << a.processId
      << " tid " << a.threadId << " corr " << a.correlationId << " ret " << a.returnValue << " '" << a.name << "'";
    return s.str();
}

inline std::string describe(const DeviceRecord& d) {
    std::ostringstream s;
    s << "device " << d.id << " '" << d.name << "' cc " << d.computeMajor << "." << d.computeMinor << " sm "
      << d.smCount << " mem " << d.globalMemoryBytes << " bw " << d.globalMemoryBandwidthKBs << " clock "
      << d.coreClockKHz << " uuid '" << d.uuid << "'";
    return s.str();
}

inline std::string describe(const ExternalCorrelationRecord& e) {
    std::ostringstream s;
    s << "external kind " << e.kind << " id " << e.externalId << " corr " << e.correlationId;
    return s.str();
}

inline std::string describe(const MemoryRecord& m) {
    std::ostringstream s;
    s << "memory " << m.timeNs << " dev" << m.deviceId << " ctx" << m.contextId << " corr" << m.correlationId
      << " stream " << m.streamId << " op " << int(m.operation) << " kind " << int(m.memoryKind) << " async "
      << m.isAsync << " bytes " << m.bytes << " at 0x" << std::hex << m.address;
    return s.str();
}

class CollectingSink final : public ActivitySink {
public:
    std::vector<std::string> lines;
    void kernel(const KernelRecord& r) override { lines.push_back(describe(r)); }
    void memcpy(const MemcpyRecord& r) override { lines.push_back(describe(r)); }
    void memset(const MemsetRecord& r) override { lines.push_back(describe(r)); }
    void sync(const SyncRecord& r) override { lines.push_back(describe(r)); }
    void api(const ApiRecord& r) override { lines.push_back(describe(r)); }
    void device(const DeviceRecord& r) override { lines.push_back(describe(r)); }
    void externalCorrelation(const ExternalCorrelationRecord& r) override { lines.push_back(describe(r)); }
    void memory(const MemoryRecord& r) override { lines.push_back(describe(r)); }
};

// An activity buffer as CUPTI lays it out: records back to back, each 8-byte aligned.
class ActivityBuffer {
public:
    template <typename Record> void add(const Record& record) {
        static_assert(sizeof(Record) % 8 == 0, "CUPTI records are 8-byte multiples");
        const size_t offset = m_bytes;
        m_bytes += sizeof(Record);
        m_words.resize(m_bytes / 8);
        std::memcpy(data() + offset, &record, sizeof(Record));
    }
    uint8_t* data() { return reinterpret_cast<uint8_t*>(m_words.data()); }
    size_t size() const { return m_bytes; }

private:
    std::vector<uint64_t> m_words; // 8-byte alignment, as CUPTI requires
    size_t m_bytes = 0;
};

// Walks with the record sizes of the headers this test is compiled with (or, for kinds in `older`,
// those of an older CUPTI).
class HeaderLayoutWalker final : public RecordWalker {
public:
    std::map<CUpti_ActivityKind, size_t> older;

    size_t recordSize(CUpti_ActivityKind kind) const {
        if (auto it = older.find(kind); it != older.end()) return it->second;
        switch (kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            return sizeof(CUpti_ActivityKernel10);
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            return sizeof(CUpti_ActivityMemcpy6);
        case CUPTI_ACTIVITY_KIND_MEMCPY2:
            return sizeof(CUpti_ActivityMemcpyPtoP4);
        case CUPTI_ACTIVITY_KIND_MEMSET:
            return sizeof(CUpti_ActivityMemset4);
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
            return sizeof(CUpti_ActivitySynchronization2);
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER:
            return sizeof(CUpti_ActivityAPI);
        case CUPTI_ACTIVITY_KIND_DEVICE:
            return sizeof(CUpti_ActivityDevice5);
        case CUPTI_ACTIVITY_KIND_CONTEXT:
            return sizeof(CUpti_ActivityContext3);
        case CUPTI_ACTIVITY_KIND_OVERHEAD:
            return sizeof(CUpti_ActivityOverhead3);
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
            return sizeof(CUpti_ActivityExternalCorrelation);
        case CUPTI_ACTIVITY_KIND_MEMORY2:
            return sizeof(CUpti_ActivityMemory4);
        default:
            return 0;
        }
    }

    Step next(uint8_t* buffer, size_t validSize, CUpti_Activity*& record) const override {
        size_t offset = 0;
        if (record) {
            offset = size_t(reinterpret_cast<uint8_t*>(record) - buffer) + recordSize(record->kind);
        }
        if (offset + sizeof(CUpti_Activity) > validSize) return Step::End;
        CUpti_ActivityKind kind;
        std::memcpy(&kind, buffer + offset, sizeof kind);
        const size_t size = recordSize(kind);
        if (size == 0) return Step::Invalid;
        if (offset + size > validSize) return Step::End; // cut short, as CUPTI treats it
        record = reinterpret_cast<CUpti_Activity*>(buffer + offset);
        return Step::Record;
    }
};

inline ApiNameInfo info(std::string_view name) {
    return { name, cuda_api::isNoisy(name), cuda_api::isQuery(name) };
}

inline ApiNameInfo testApiName(int api, uint32_t cbid) {
    if (api == schema::kApiRuntime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
        return info("cudaLaunchKernel");
    if (api == schema::kApiRuntime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020)
        return info("cudaGetDevice");
    if (api == schema::kApiRuntime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020)
        return info("cudaEventQuery");
    if (api == schema::kApiRuntime && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020)
        return info("cudaEventSynchronize");
    if (api == schema::kApiDriver && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel) return info("cuLaunchKernel");
    if (api == schema::kApiDriver && cbid == CUPTI_DRIVER_TRACE_CBID_cuStreamQuery) return info("cuStreamQuery");
    return {};
}

// ---- record factories: the installed toolkit's current structs --------------------------------

inline CUpti_ActivityKernel10 kernelRecord(uint64_t start, uint64_t end, uint32_t i, const char* name) {
    CUpti_ActivityKernel10 k {};
    k.kind = (i % 7 == 0) ? CUPTI_ACTIVITY_KIND_KERNEL : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.registersPerThread = uint16_t(32 + i % 200);
    k.start = start;
    k.end = end;
    k.completed = end;
    k.deviceId = i % 4;
    k.contextId = 1 + i % 3;
    k.streamId = 7 + i % 5;
    k.gridX = int32_t(1 + i);
    k.gridY = int32_t(2 + i % 3);
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = int32_t(1 + i % 2);
    k.blockZ = 1;
    k.staticSharedMemory = int32_t(1024 * (i % 4));
    k.dynamicSharedMemory = int32_t(48 * 1024 + i);
    k.localMemoryPerThread = 99; // not decoded
    k.correlationId = 1000 + i;
    k.gridId = int64_t(i) * 3;
    k.name = name;
    k.queued = start - 10;
    k.graphNodeId = 555;
    k.graphId = i % 5 == 0 ? 42 : 0;
    k.channelID = 3; // newer fields, ignored
    k.clusterX = 2;
    return k;
}

inline KernelRecord expectedKernel(uint64_t start, uint64_t end, uint32_t i, const char* name) {
    KernelRecord k;
    k.startNs = start;
    k.endNs = end;
    k.deviceId = i % 4;
    k.contextId = 1 + i % 3;
    k.streamId = 7 + i % 5;
    k.correlationId = 1000 + i;
    k.name = name;
    k.gridX = int32_t(1 + i);
    k.gridY = int32_t(2 + i % 3);
    k.gridZ = 1;
    k.blockX = 256;
    k.blockY = int32_t(1 + i % 2);
    k.blockZ = 1;
    k.registersPerThread = 32 + i % 200;
    k.staticSharedBytes = 1024 * (i % 4);
    k.dynamicSharedBytes = 48 * 1024 + i;
    k.graphId = i % 5 == 0 ? 42 : 0;
    return k;
}

inline CUpti_ActivityMemcpy6 memcpyRecord(uint64_t start, uint64_t end, uint32_t i) {
    CUpti_ActivityMemcpy6 m {};
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = uint8_t(i % 2 ? CUPTI_ACTIVITY_MEMCPY_KIND_HTOD : CUPTI_ACTIVITY_MEMCPY_KIND_DTOH);
    m.srcKind = uint8_t(i % 2 ? (i % 3 ? CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE : CUPTI_ACTIVITY_MEMORY_KIND_PINNED)
                              : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);
    m.dstKind = uint8_t(i % 2 ? CUPTI_ACTIVITY_MEMORY_KIND_DEVICE : CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
    m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    m.bytes = (uint64_t(1) << 33) + i; // more than 32 bits
    m.start = start;
    m.end = end;
    m.deviceId = 1;
    m.contextId = 2;
    m.streamId = 3 + i % 2;
    m.correlationId = 2000 + i;
    m.runtimeCorrelationId = 2000 + i;
    m.graphId = 9;
    m.channelID = 4;
    return m;
}

inline MemcpyRecord expectedMemcpy(uint64_t start, uint64_t end, uint32_t i) {
    MemcpyRecord m;
    m.startNs = start;
    m.endNs = end;
    m.deviceId = 1;
    m.contextId = 2;
    m.streamId = 3 + i % 2;
    m.correlationId = 2000 + i;
    m.copyKind = uint8_t(i % 2 ? schema::kCopyHtoD : schema::kCopyDtoH);
    m.srcKind = uint8_t(i % 2 ? (i % 3 ? schema::kMemoryPageable : schema::kMemoryPinned) : schema::kMemoryDevice);
    m.dstKind = uint8_t(i % 2 ? schema::kMemoryDevice : schema::kMemoryPinned);
    m.bytes = (uint64_t(1) << 33) + i;
    return m;
}

inline CUpti_ActivityMemcpyPtoP4 peerRecord(uint64_t start, uint64_t end, uint32_t i) {
    CUpti_ActivityMemcpyPtoP4 p {};
    p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p.bytes = 4096 * (i + 1);
    p.start = start;
    p.end = end;
    p.deviceId = 0;
    p.contextId = 1;
    p.streamId = 13;
    p.srcDeviceId = i % 2;
    p.dstDeviceId = 2 + i % 2;
    p.srcContextId = 1;
    p.dstContextId = 5;
    p.correlationId = 3000 + i;
    return p;
}

inline MemcpyRecord expectedPeer(uint64_t start, uint64_t end, uint32_t i) {
    MemcpyRecord m;
    m.startNs = start;
    m.endNs = end;
    m.deviceId = 0;
    m.contextId = 1;
    m.streamId = 13;
    m.correlationId = 3000 + i;
    m.copyKind = schema::kCopyPtoP;
    m.srcKind = schema::kMemoryDevice;
    m.dstKind = schema::kMemoryDevice;
    m.bytes = 4096 * (i + 1);
    m.srcDeviceId = i % 2;
    m.dstDeviceId = 2 + i % 2;
    return m;
}

inline CUpti_ActivityMemset4 memsetRecord(uint64_t start, uint64_t end, uint32_t i) {
    CUpti_ActivityMemset4 m {};
    m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    m.value = i % 256;
    m.bytes = 1000 + i;
    m.start = start;
    m.end = end;
    m.deviceId = 2;
    m.contextId = 3;
    m.streamId = 4;
    m.correlationId = 4000 + i;
    m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    return m;
}

inline MemsetRecord expectedMemset(uint64_t start, uint64_t end, uint32_t i) {
    MemsetRecord m;
    m.startNs = start;
    m.endNs = end;
    m.deviceId = 2;
    m.contextId = 3;
    m.streamId = 4;
    m.correlationId = 4000 + i;
    m.bytes = 1000 + i;
    m.value = i % 256;
    m.memoryKind = schema::kMemoryDevice;
    return m;
}

inline CUpti_ActivitySynchronization2 syncRecord(uint64_t start, uint64_t end, uint32_t i) {
    CUpti_ActivitySynchronization2 s {};
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = i % 3 == 0 ? CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE
        : i % 3 == 1    ? CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE
                        : CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
    s.start = start;
    s.end = end;
    s.correlationId = 5000 + i;
    s.contextId = 1;
    s.streamId = i % 3 == 0 ? 7 : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    s.cudaEventId = i % 3 == 1 ? 11 + i : CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    s.cudaEventSyncId = 77;
    return s;
}

inline SyncRecord expectedSync(uint64_t start, uint64_t end, uint32_t i) {
    SyncRecord s;
    s.startNs = start;
    s.endNs = end;
    s.type = i % 3 == 0 ? 3 : i % 3 == 1 ? 1 : 4; // sync_types codes
    s.contextId = 1;
    s.correlationId = 5000 + i;
    s.streamId = i % 3 == 0 ? 7 : -1;
    s.eventId = i % 3 == 1 ? int64_t(11 + i) : -1;
    return s;
}

inline CUpti_ActivityAPI apiRecord(uint64_t start, uint64_t end, uint32_t i, bool runtime) {
    CUpti_ActivityAPI a {};
    a.kind = runtime ? CUPTI_ACTIVITY_KIND_RUNTIME : CUPTI_ACTIVITY_KIND_DRIVER;
    a.cbid = runtime ? (i % 2 ? uint32_t(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) : 9999u)
                     : CUpti_CallbackId(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
    a.start = start;
    a.end = end;
    a.processId = 4321;
    a.threadId = 4322 + i % 2;
    a.correlationId = 1000 + i;
    a.returnValue = i % 11 == 0 ? 700 : 0;
    return a;
}

inline ApiRecord expectedApi(uint64_t start, uint64_t end, uint32_t i, bool runtime) {
    ApiRecord a;
    a.startNs = start;
    a.endNs = end;
    a.api = runtime ? schema::kApiRuntime : schema::kApiDriver;
    a.cbid = runtime ? (i % 2 ? uint32_t(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) : 9999u)
                     : CUpti_CallbackId(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
    a.processId = 4321;
    a.threadId = 4322 + i % 2;
    a.correlationId = 1000 + i;
    a.returnValue = i % 11 == 0 ? 700 : 0;
    a.name = runtime ? (i % 2 ? "cudaLaunchKernel" : "") : "cuLaunchKernel";
    return a;
}

// cudaMalloc (i even) and cudaFree (i odd) of 2^(20 + i % 14) bytes on GPU i % 2, every fourth stream-ordered
// (cudaMallocAsync), every fifth pinned host memory (cudaHostAlloc), as this toolkit's CUPTI writes them.
inline CUpti_ActivityMemory4 memoryRecord(uint64_t ts, uint32_t i) {
    CUpti_ActivityMemory4 m {};
    m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
    m.memoryOperationType
        = i % 2 ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
    m.memoryKind = i % 5 == 4 ? CUPTI_ACTIVITY_MEMORY_KIND_PINNED : CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    m.correlationId = 6000 + i;
    m.address = 0x7f0000000000ull + (uint64_t(i / 2) << 32);
    m.bytes = uint64_t(1) << (20 + i % 14);
    m.timestamp = ts;
    m.PC = 0x1234; // not decoded
    m.processId = 4321;
    m.deviceId = i % 2;
    m.contextId = 1;
    m.isAsync = i % 4 == 3;
    m.streamId = m.isAsync ? 13 : CUPTI_INVALID_STREAM_ID;
    m.name = nullptr;
    m.memoryPoolConfig.memoryPoolType
        = m.isAsync ? CUPTI_ACTIVITY_MEMORY_POOL_TYPE_LOCAL : CUPTI_ACTIVITY_MEMORY_POOL_TYPE_INVALID;
    m.memoryPoolConfig.pool.size = m.isAsync ? uint64_t(1) << 34 : 0;
    m.source = "libtorch_cuda.so"; // newer fields, ignored
    return m;
}

inline MemoryRecord expectedMemory(uint64_t ts, uint32_t i) {
    MemoryRecord m;
    m.timeNs = ts;
    m.deviceId = i % 2;
    m.contextId = 1;
    m.correlationId = 6000 + i;
    m.isAsync = i % 4 == 3;
    m.streamId = m.isAsync ? 13 : -1;
    m.operation = i % 2 ? MemoryRecord::kRelease : MemoryRecord::kAllocation;
    m.memoryKind = i % 5 == 4 ? schema::kMemoryPinned : schema::kMemoryDevice;
    m.bytes = uint64_t(1) << (20 + i % 14);
    m.address = 0x7f0000000000ull + (uint64_t(i / 2) << 32);
    return m;
}

inline CUpti_ActivityDevice5 deviceRecord(uint32_t id, bool withUuid) {
    CUpti_ActivityDevice5 d {};
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.globalMemoryBandwidth = 3'352'000'000; // kB/s
    d.globalMemorySize = 85'000'000'000ull;
    d.constantMemorySize = 65536;
    d.coreClockRate = 1'980'000;
    d.numMultiprocessors = 132;
    d.computeCapabilityMajor = 9;
    d.computeCapabilityMinor = 0;
    d.id = id;
    if (withUuid)
        for (int b = 0; b < 16; ++b)
            d.uuid.bytes[b] = char(0x10 * (b % 16) + b); // 00 11 22 ... ff
    d.name = "NVIDIA H100 80GB HBM3";
    d.isMigEnabled = 0;
    return d;
}

} // namespace tuneup::agent::test
