// CUPTI activity decoding without a GPU: buffers built from this toolkit's real record structs,
// walked both by CUPTI's own cuptiActivityGetNextRecord (it works on any buffer, no GPU needed)
// and by a walker that knows the header's record sizes. Plus loading libcupti and starting capture
// on a machine without a driver.

#include "config.h"
#include "cuda_api.h"
#include "cupti_decode.h"
#include "cupti_loader.h"
#include "cupti_source.h"
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

namespace tuneup::agent {
namespace {

// ---- helpers -------------------------------------------------------------------------------

// One line per record, every field, so a mismatch shows exactly what differs.
std::string describe(const KernelRecord& k) {
    std::ostringstream s;
    s << "kernel " << k.startNs << "-" << k.endNs << " dev" << k.deviceId << " ctx" << k.contextId << " s" << k.streamId
      << " corr" << k.correlationId << " '" << k.name << "' grid " << k.gridX << "," << k.gridY << "," << k.gridZ
      << " block " << k.blockX << "," << k.blockY << "," << k.blockZ << " regs " << k.registersPerThread << " smem "
      << k.staticSharedBytes << "+" << k.dynamicSharedBytes << " graph " << k.graphId;
    return s.str();
}

std::string describe(const MemcpyRecord& m) {
    std::ostringstream s;
    s << "memcpy " << m.startNs << "-" << m.endNs << " dev" << m.deviceId << " ctx" << m.contextId << " s" << m.streamId
      << " corr" << m.correlationId << " kind " << int(m.copyKind) << " " << int(m.srcKind) << "->" << int(m.dstKind)
      << " bytes " << m.bytes << " peer " << m.srcDeviceId << "->" << m.dstDeviceId;
    return s.str();
}

std::string describe(const MemsetRecord& m) {
    std::ostringstream s;
    s << "memset " << m.startNs << "-" << m.endNs << " dev" << m.deviceId << " ctx" << m.contextId << " s" << m.streamId
      << " corr" << m.correlationId << " bytes " << m.bytes << " value " << m.value << " mem " << int(m.memoryKind);
    return s.str();
}

std::string describe(const SyncRecord& r) {
    std::ostringstream s;
    s << "sync " << r.startNs << "-" << r.endNs << " type " << r.type << " ctx" << r.contextId << " corr"
      << r.correlationId << " stream " << r.streamId << " event " << r.eventId;
    return s.str();
}

std::string describe(const ApiRecord& a) {
    std::ostringstream s;
    s << "api " << a.startNs << "-" << a.endNs << " api " << a.api << " cbid " << a.cbid << " pid " << a.processId
      << " tid " << a.threadId << " corr " << a.correlationId << " ret " << a.returnValue << " '" << a.name << "'";
    return s.str();
}

std::string describe(const DeviceRecord& d) {
    std::ostringstream s;
    s << "device " << d.id << " '" << d.name << "' cc " << d.computeMajor << "." << d.computeMinor << " sm "
      << d.smCount << " mem " << d.globalMemoryBytes << " bw " << d.globalMemoryBandwidthKBs << " clock "
      << d.coreClockKHz << " uuid '" << d.uuid << "'";
    return s.str();
}

std::string describe(const ExternalCorrelationRecord& e) {
    std::ostringstream s;
    s << "external kind " << e.kind << " id " << e.externalId << " corr " << e.correlationId;
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

// The libcupti of this machine, loaded once; null when there is none.
const CuptiApi* cupti() {
    static CuptiApi api;
    static bool tried = false;
    if (!tried) {
        tried = true;
        std::string error;
        if (!loadCupti("", api, error)) std::fprintf(stderr, "no libcupti: %s\n", error.c_str());
    }
    return api.loaded() ? &api : nullptr;
}

ApiNameInfo info(std::string_view name) {
    return { name, cuda_api::isNoisy(name), cuda_api::isQuery(name) };
}

ApiNameInfo testApiName(int api, uint32_t cbid) {
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

CUpti_ActivityKernel10 kernelRecord(uint64_t start, uint64_t end, uint32_t i, const char* name) {
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

KernelRecord expectedKernel(uint64_t start, uint64_t end, uint32_t i, const char* name) {
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

CUpti_ActivityMemcpy6 memcpyRecord(uint64_t start, uint64_t end, uint32_t i) {
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

MemcpyRecord expectedMemcpy(uint64_t start, uint64_t end, uint32_t i) {
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

CUpti_ActivityMemcpyPtoP4 peerRecord(uint64_t start, uint64_t end, uint32_t i) {
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

MemcpyRecord expectedPeer(uint64_t start, uint64_t end, uint32_t i) {
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

CUpti_ActivityMemset4 memsetRecord(uint64_t start, uint64_t end, uint32_t i) {
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

MemsetRecord expectedMemset(uint64_t start, uint64_t end, uint32_t i) {
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

CUpti_ActivitySynchronization2 syncRecord(uint64_t start, uint64_t end, uint32_t i) {
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

SyncRecord expectedSync(uint64_t start, uint64_t end, uint32_t i) {
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

CUpti_ActivityAPI apiRecord(uint64_t start, uint64_t end, uint32_t i, bool runtime) {
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

ApiRecord expectedApi(uint64_t start, uint64_t end, uint32_t i, bool runtime) {
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

CUpti_ActivityDevice5 deviceRecord(uint32_t id, bool withUuid) {
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

// ---- decoding -----------------------------------------------------------------------------

enum class WalkerKind { Header, Cupti };

class DecodeTest : public ::testing::TestWithParam<WalkerKind> {
protected:
    void SetUp() override {
        if (GetParam() == WalkerKind::Cupti) {
            if (!cupti()) GTEST_SKIP() << "libcupti not found";
            m_cuptiWalker = std::make_unique<CuptiRecordWalker>(cupti()->activityGetNextRecord);
        }
        m_options.apiName = testApiName;
    }

    const RecordWalker& walker() const {
        return GetParam() == WalkerKind::Cupti ? static_cast<const RecordWalker&>(*m_cuptiWalker) : m_headerWalker;
    }

    void decode(ActivityBuffer& buffer, size_t validSize = size_t(-1)) {
        decodeActivityBuffer(buffer.data(), std::min(validSize, buffer.size()), walker(), m_options, m_sink, m_stats);
    }

    HeaderLayoutWalker m_headerWalker;
    std::unique_ptr<CuptiRecordWalker> m_cuptiWalker;
    DecodeOptions m_options;
    CollectingSink m_sink;
    DecodeStats m_stats;
};

TEST_P(DecodeTest, ManyRecordsOfEveryKind) {
    static const char* const kNames[] = { "_Z6kernelPfi",
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int, float*)",
        "ampere_sgemm_128x64_tn", "" };
    std::vector<std::string> expected, expectedSyncs; // syncs come at the end of their pass
    DecodeStats expectedStats;
    const int kBuffers = 3;
    const uint32_t kPerBuffer = 300;
    for (int b = 0; b < kBuffers; ++b) {
        ActivityBuffer buffer;
        if (b == 0) {
            buffer.add(deviceRecord(0, true));
            expected.push_back(describe(DeviceRecord { 0, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85'000'000'000ull,
                3'352'000'000, 1'980'000, "GPU-00112233-4455-6677-8899-aabbccddeeff" }));
            buffer.add(deviceRecord(1, false));
            expected.push_back(describe(DeviceRecord {
                1, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85'000'000'000ull, 3'352'000'000, 1'980'000, "" }));
            expectedStats.devices += 2;
        }
        for (uint32_t j = 0; j < kPerBuffer; ++j) {
            const uint32_t i = uint32_t(b) * kPerBuffer + j;
            const uint64_t t = 1'000'000'000ull + uint64_t(i) * 10'000;
            const char* name = kNames[i % 4];
            buffer.add(apiRecord(t, t + 900, i, true));
            expected.push_back(describe(expectedApi(t, t + 900, i, true)));
            buffer.add(apiRecord(t + 100, t + 800, i, false));
            expected.push_back(describe(expectedApi(t + 100, t + 800, i, false)));
            buffer.add(kernelRecord(t + 2000, t + 5000 + i, i, name));
            expected.push_back(describe(expectedKernel(t + 2000, t + 5000 + i, i, name)));
            expectedStats.runtimeApis++, expectedStats.driverApis++, expectedStats.kernels++;
            switch (i % 4) {
            case 0:
                buffer.add(memcpyRecord(t + 6000, t + 7000, i));
                expected.push_back(describe(expectedMemcpy(t + 6000, t + 7000, i)));
                expectedStats.memcpys++;
                break;
            case 1:
                buffer.add(peerRecord(t + 6000, t + 6500, i));
                expected.push_back(describe(expectedPeer(t + 6000, t + 6500, i)));
                expectedStats.memcpys++;
                break;
            case 2:
                buffer.add(memsetRecord(t + 6000, t + 6100, i));
                expected.push_back(describe(expectedMemset(t + 6000, t + 6100, i)));
                expectedStats.memsets++;
                break;
            case 3:
                buffer.add(syncRecord(t + 6000, t + 9000, i));
                expectedSyncs.push_back(describe(expectedSync(t + 6000, t + 9000, i)));
                expectedStats.syncs++;
                break;
            }
            if (i % 50 == 7) { // kinds CUPTI knows and the agent skips, around an external correlation it keeps
                CUpti_ActivityContext3 context {};
                context.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
                context.contextId = 1;
                buffer.add(context);
                // The id the agent's interposers push around a library call (interpose_record.h).
                CUpti_ActivityExternalCorrelation external {};
                external.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
                external.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
                external.externalId = 99 + i;
                external.correlationId = 1000 + i;
                buffer.add(external);
                expected.push_back(describe(ExternalCorrelationRecord { 5, 99 + i, 1000 + i }));
                expectedStats.externalCorrelations++;
                CUpti_ActivityOverhead3 overhead {};
                overhead.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
                overhead.start = t;
                overhead.end = t + 5;
                buffer.add(overhead);
                expectedStats.unknownKind += 2;
            }
            if (i % 60 == 11) { // no timing: not written
                buffer.add(kernelRecord(0, 0, i, name));
                buffer.add(memcpyRecord(0, 0, i));
                buffer.add(apiRecord(0, 0, i, true));
                expectedStats.noTimestamp += 3;
            }
            if (i % 70 == 13) { // ends before it starts: written with end = start
                buffer.add(kernelRecord(t + 3000, t + 2500, i, name));
                expected.push_back(describe(expectedKernel(t + 3000, t + 3000, i, name)));
                buffer.add(memsetRecord(t + 3000, 0, i));
                expected.push_back(describe(expectedMemset(t + 3000, t + 3000, i)));
                expectedStats.kernels++, expectedStats.memsets++;
                expectedStats.endBeforeStart += 2;
            }
        }
        decode(buffer);
        expected.insert(expected.end(), expectedSyncs.begin(), expectedSyncs.end());
        expectedSyncs.clear();
        expectedStats.buffers++;
    }
    ASSERT_EQ(m_sink.lines.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
        ASSERT_EQ(m_sink.lines[i], expected[i]) << "record " << i;
    EXPECT_EQ(m_stats, expectedStats);
    EXPECT_EQ(m_stats.records(), expected.size());
    EXPECT_GT(m_stats.unknownKind, 0u);
    EXPECT_GT(m_stats.noTimestamp, 0u);
    EXPECT_GT(m_stats.endBeforeStart, 0u);
}

TEST_P(DecodeTest, KindCuptiDoesNotKnowEndsTheBuffer) {
    ActivityBuffer buffer;
    buffer.add(memsetRecord(10, 20, 1));
    CUpti_ActivityAPI bogus {};
    bogus.kind = CUpti_ActivityKind(9999);
    buffer.add(bogus);
    buffer.add(memsetRecord(30, 40, 2)); // unreachable: the bogus record's size is unknown
    decode(buffer);
    ASSERT_EQ(m_sink.lines, std::vector<std::string> { describe(expectedMemset(10, 20, 1)) });
    DecodeStats expected;
    expected.buffers = 1;
    expected.memsets = 1;
    expected.invalidBuffers = 1;
    EXPECT_EQ(m_stats, expected);
}

TEST_P(DecodeTest, RecordCutShortEndsTheWalk) {
    ActivityBuffer buffer;
    buffer.add(syncRecord(10, 20, 0));
    buffer.add(kernelRecord(30, 40, 1, "k"));
    decode(buffer, buffer.size() - 8);
    ASSERT_EQ(m_sink.lines, std::vector<std::string> { describe(expectedSync(10, 20, 0)) });
    EXPECT_EQ(m_stats.invalidBuffers, 0u);
    EXPECT_EQ(m_stats.records(), 1u);
}

TEST_P(DecodeTest, EmptyBuffers) {
    ActivityBuffer buffer;
    decode(buffer);
    decodeActivityBuffer(nullptr, 100, walker(), m_options, m_sink, m_stats);
    EXPECT_TRUE(m_sink.lines.empty());
    DecodeStats expected;
    expected.buffers = 2;
    EXPECT_EQ(m_stats, expected);
}

TEST_P(DecodeTest, ClockOffsetMapsCuptiTimeToMonotonic) {
    m_options.clockOffsetNs = 1'000;
    ActivityBuffer buffer;
    buffer.add(kernelRecord(5'000, 6'000, 1, "k"));
    buffer.add(apiRecord(4'000, 4'500, 1, true));
    buffer.add(memcpyRecord(500, 2'000, 0)); // before the offset: clamped to 0, never wraps
    decode(buffer);
    EXPECT_EQ(m_sink.lines,
        (std::vector<std::string> { describe(expectedKernel(4'000, 5'000, 1, "k")),
            describe(expectedApi(3'000, 3'500, 1, true)), describe(expectedMemcpy(0, 1'000, 0)) }));
}

TEST_P(DecodeTest, ApiNamesAreEmptyWithoutLookup) {
    m_options.apiName = nullptr;
    ActivityBuffer buffer;
    buffer.add(apiRecord(1, 2, 1, true));
    decode(buffer);
    ApiRecord expected = expectedApi(1, 2, 1, true);
    expected.name = {};
    EXPECT_EQ(m_sink.lines, std::vector<std::string> { describe(expected) });
}

// ---- synchronisation records that are not waits (CUDA 13 reports queries by default) ------------

CUpti_ActivityAPI callRecord(uint64_t start, uint32_t correlation, bool runtime, uint32_t cbid) {
    CUpti_ActivityAPI a = apiRecord(start, start + 100, 1, runtime);
    a.cbid = cbid;
    a.correlationId = correlation;
    a.returnValue = 0;
    return a;
}

TEST_P(DecodeTest, QueriesOfUnfinishedWorkAreNotWaits) {
    ActivityBuffer buffer;
    CUpti_ActivitySynchronization2 notReady = syncRecord(10, 11, 1);
    notReady.returnValue = 600; // CUDA_ERROR_NOT_READY: cudaEventQuery found the event pending
    buffer.add(notReady);
    buffer.add(syncRecord(20, 90, 4)); // a real wait (returnValue 0)
    decode(buffer);
    EXPECT_EQ(m_sink.lines, std::vector<std::string> { describe(expectedSync(20, 90, 4)) });
    EXPECT_EQ(m_stats.syncNotWaits, 1u);
    EXPECT_EQ(m_stats.syncs, 1u);
}

TEST_P(DecodeTest, QueryCallsAreNotWaitsEvenInALaterBufferOfThePass) {
    // The sync record of a finished query (return value 0) is told from a wait by its call's API record,
    // which may come first, later in the buffer, or in another buffer of the same pass.
    ActivityBuffer first, second;
    CUpti_ActivitySynchronization2 query = syncRecord(100, 101, 1);
    query.correlationId = 71;
    first.add(query);
    CUpti_ActivitySynchronization2 driverQuery = syncRecord(200, 201, 0);
    driverQuery.correlationId = 72;
    first.add(driverQuery);
    CUpti_ActivitySynchronization2 wait = syncRecord(300, 900, 1);
    wait.correlationId = 73;
    first.add(wait);
    first.add(callRecord(300, 73, true, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020));
    second.add(callRecord(100, 71, true, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020));
    second.add(callRecord(200, 72, false, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery));
    ActivityDecoder pass(m_options, m_sink, m_stats);
    pass.decode(first.data(), first.size(), walker());
    pass.decode(second.data(), second.size(), walker());
    pass.finish();
    SyncRecord expectedWait = expectedSync(300, 900, 1);
    expectedWait.correlationId = 73;
    ApiRecord synchronize = expectedApi(300, 400, 1, true);
    synchronize.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020;
    synchronize.correlationId = 73;
    synchronize.returnValue = 0;
    synchronize.name = "cudaEventSynchronize";
    // The queries are noisy calls: counted, not written.
    EXPECT_EQ(m_sink.lines, (std::vector<std::string> { describe(synchronize), describe(expectedWait) }));
    EXPECT_EQ(m_stats.syncNotWaits, 2u);
    EXPECT_EQ(m_stats.syncs, 1u);
    EXPECT_EQ(m_stats.countedApis,
        (std::map<std::string, uint64_t, std::less<>> { { "cudaEventQuery", 1 }, { "cuStreamQuery", 1 } }));
}

TEST_P(DecodeTest, ReturnValueIsReadOnlyWhereTheRecordHasIt) {
    // A CUPTI before 12.8 writes the shorter synchronisation record: its return value does not exist, and
    // the bytes where it would be belong to the next record.
    if (GetParam() == WalkerKind::Cupti) GTEST_SKIP() << "this CUPTI writes the longer record";
    m_headerWalker.older[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION] = sizeof(CUpti_ActivitySynchronization);
    ActivityBuffer buffer;
    CUpti_ActivitySynchronization old {};
    old.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    old.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    old.start = 10;
    old.end = 50;
    old.correlationId = 5;
    old.contextId = 1;
    old.streamId = 7;
    old.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    buffer.add(old);
    buffer.add(memsetRecord(60, 70, 3)); // non-zero bytes where a longer record's returnValue would be
    decode(buffer);
    SyncRecord expected;
    expected.startNs = 10;
    expected.endNs = 50;
    expected.type = 3;
    expected.contextId = 1;
    expected.correlationId = 5;
    expected.streamId = 7;
    EXPECT_EQ(m_sink.lines, (std::vector<std::string> { describe(expectedMemset(60, 70, 3)), describe(expected) }));
    EXPECT_EQ(m_stats.syncNotWaits, 0u);
}

// ---- noisy API calls: counted per name, not written -------------------------------------------

TEST_P(DecodeTest, NoisyCallsAreCountedPerName) {
    ActivityBuffer buffer;
    for (uint32_t i = 0; i < 50; ++i)
        buffer.add(callRecord(1000 + i, 100 + i, true, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
    buffer.add(callRecord(5000, 900, true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
    decode(buffer);
    ASSERT_EQ(m_sink.lines.size(), 1u);
    EXPECT_NE(m_sink.lines[0].find("'cudaLaunchKernel'"), std::string::npos) << m_sink.lines[0];
    EXPECT_EQ(m_stats.countedApis, (std::map<std::string, uint64_t, std::less<>> { { "cudaGetDevice", 50 } }));
    EXPECT_EQ(m_stats.runtimeApis, 1u);
}

TEST_P(DecodeTest, NoisyCallsAsRowsWhenAsked) {
    m_options.noisyApiRows = true;
    ActivityBuffer buffer;
    buffer.add(callRecord(1000, 100, true, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
    buffer.add(callRecord(2000, 101, false, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery));
    decode(buffer);
    ASSERT_EQ(m_sink.lines.size(), 2u);
    EXPECT_NE(m_sink.lines[0].find("'cudaGetDevice'"), std::string::npos) << m_sink.lines[0];
    EXPECT_NE(m_sink.lines[1].find("'cuStreamQuery'"), std::string::npos) << m_sink.lines[1];
    EXPECT_TRUE(m_stats.countedApis.empty());
}

INSTANTIATE_TEST_SUITE_P(Walkers, DecodeTest, ::testing::Values(WalkerKind::Header, WalkerKind::Cupti),
    [](const ::testing::TestParamInfo<WalkerKind>& param) {
        return param.param == WalkerKind::Cupti ? std::string("CuptiGetNextRecord") : std::string("HeaderLayout");
    });

TEST(ApiDisplayName, DropsOnlyCuptisVersionTag) {
    EXPECT_EQ(apiDisplayName("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
    EXPECT_EQ(apiDisplayName("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync_ptsz");
    EXPECT_EQ(apiDisplayName("cudaGetDeviceProperties_v2_v12000"), "cudaGetDeviceProperties_v2");
    EXPECT_EQ(apiDisplayName("cuMemcpyHtoD_v2"), "cuMemcpyHtoD_v2");
    EXPECT_EQ(apiDisplayName("cuLaunchKernel"), "cuLaunchKernel");
    EXPECT_EQ(apiDisplayName("cuFoo_v12a4"), "cuFoo_v12a4");
    EXPECT_EQ(apiDisplayName("_v1234"), "");
    EXPECT_EQ(apiDisplayName(""), "");
}

// ---- the real libcupti, no GPU ------------------------------------------------------------

bool toolkitHasCupti() {
    const std::string dir = TUNEUP_CUDA_LIBRARY_DIR;
    return access((dir + "/libcupti.so").c_str(), F_OK) == 0;
}

bool realDriverInstalled() {
    // dlopen without cuInit: only asks whether an NVIDIA driver is there.
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD);
    if (!driver) driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    return driver != nullptr;
}

TEST(CuptiLoader, LoadsTheToolkitsLibcupti) {
    if (!toolkitHasCupti()) GTEST_SKIP() << "no libcupti in " << TUNEUP_CUDA_LIBRARY_DIR;
    CuptiApi api;
    std::string error;
    ASSERT_TRUE(loadCupti("", api, error)) << error;
    EXPECT_FALSE(api.path.empty());
    uint32_t version = 0;
    ASSERT_EQ(api.getVersion(&version), CUPTI_SUCCESS);
    EXPECT_GE(version, 13u); // CUPTI 11.0's API version; 13.0 is 130001
    EXPECT_EQ(api.resultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED),
        "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
    EXPECT_EQ(api.resultString(CUptiResult(123456)), "CUPTI error 123456");

    // Loading again reuses the mapped library (as for torch's own libcupti), found by dl_iterate_phdr.
    CuptiApi again;
    ASSERT_TRUE(loadCupti("/nonexistent/libcupti.so", again, error)) << error;
    EXPECT_TRUE(again.reused);
    EXPECT_EQ(again.getVersion, api.getVersion);
}

TEST(CuptiLoader, CallbackNamesFromTheRealLibrary) {
    if (!cupti() || !cupti()->getCallbackName) GTEST_SKIP() << "no libcupti with cuptiGetCallbackName";
    const char* name = nullptr;
    ASSERT_EQ(
        cupti()->getCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &name),
        CUPTI_SUCCESS);
    ASSERT_NE(name, nullptr);
    EXPECT_EQ(apiDisplayName(name), "cudaLaunchKernel");
    ASSERT_EQ(cupti()->getCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &name),
        CUPTI_SUCCESS);
    EXPECT_EQ(apiDisplayName(name), "cuLaunchKernel");
}

TEST(CudaApiNames, BaseNamesAndClasses) {
    EXPECT_EQ(cuda_api::baseName("cudaStreamQuery_ptsz"), "cudaStreamQuery");
    EXPECT_EQ(cuda_api::baseName("cuStreamGetCaptureInfo_v3"), "cuStreamGetCaptureInfo");
    EXPECT_EQ(cuda_api::baseName("cudaGetDevice_v3020"), "cudaGetDevice");
    EXPECT_EQ(cuda_api::baseName("cuMemcpyHtoD_v2"), "cuMemcpyHtoD");
    EXPECT_EQ(cuda_api::baseName("cudaLaunchKernel"), "cudaLaunchKernel");
    EXPECT_EQ(cuda_api::baseName("_v"), "_v");
    EXPECT_TRUE(cuda_api::isNoisy("cudaStreamQuery_ptsz"));
    EXPECT_TRUE(cuda_api::isQuery("cuEventQuery"));
    EXPECT_FALSE(cuda_api::isNoisy("cudaStreamSynchronize"));
    EXPECT_FALSE(cuda_api::isQuery("cudaEventSynchronize"));
    EXPECT_FALSE(cuda_api::isNoisy("cudaLaunchKernel"));
}

TEST(CudaApiNames, EveryNoisyNameIsARealCuptiFunction) {
    // The list is matched against CUPTI's own callback names: a misspelt entry would never match.
    if (!cupti() || !cupti()->getCallbackName) GTEST_SKIP() << "no libcupti with cuptiGetCallbackName";
    std::set<std::string> names;
    for (const auto domain : { CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_CB_DOMAIN_DRIVER_API })
        for (uint32_t cbid = 1; cbid < 2000; ++cbid) {
            const char* name = nullptr;
            if (cupti()->getCallbackName(domain, cbid, &name) == CUPTI_SUCCESS && name)
                names.insert(std::string(cuda_api::baseName(apiDisplayName(name))));
        }
    ASSERT_GT(names.size(), 500u);
    for (std::string_view noisy : cuda_api::kNoisy)
        EXPECT_TRUE(names.count(std::string(noisy))) << noisy << " is not a CUDA API function this CUPTI knows";
    for (std::string_view query : cuda_api::kQueries)
        EXPECT_TRUE(cuda_api::isNoisy(query)) << query;
}

TEST(CuptiCapture, NotSelectedIsOff) {
    Config config;
    config.trace.kernel = config.trace.memcpy = config.trace.memset = config.trace.sync = config.trace.runtime
        = config.trace.driver = false;
    std::string status;
    EXPECT_FALSE(startCuptiCapture(config, status));
    EXPECT_EQ(status, "off: not selected (TUNEUP_TRACE)");
    EXPECT_FALSE(cuptiCaptureOn());
}

TEST(CuptiCapture, WithoutDriverIsOffWithAReason) {
    if (!toolkitHasCupti()) GTEST_SKIP() << "no libcupti in " << TUNEUP_CUDA_LIBRARY_DIR;
    std::string status;
    const bool on = startCuptiCapture(Config {}, status);
    if (realDriverInstalled()) { // a GPU machine: either works, and says so
        EXPECT_TRUE(on ? status == "on" : status.starts_with("off: ")) << status;
        stopCuptiCapture();
        return;
    }
    EXPECT_FALSE(on);
    EXPECT_FALSE(cuptiCaptureOn());
    EXPECT_TRUE(status.starts_with("off: cuptiSubscribe: CUPTI_ERROR_")) << status;
    EXPECT_NE(status.find("libcuda"), std::string::npos) << status;
    std::printf("status: %s\n", status.c_str());
    // A second try is allowed (InitializeInjection after the constructor) and fails the same way.
    std::string again;
    EXPECT_FALSE(startCuptiCapture(Config {}, again));
    EXPECT_TRUE(again.starts_with("off: cuptiSubscribe: ")) << again;
}

// Runs `body` in a forked child (capture state is per process); true when it returned true.
template <typename Body> bool inChild(Body body) {
    const pid_t child = fork();
    if (child == 0) _exit(body() ? 0 : 1);
    int wstatus = 0;
    return child > 0 && waitpid(child, &wstatus, 0) == child && WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
}

TEST(CuptiCapture, StopWhenOffIsHarmless) {
    Config none;
    std::string error;
    ASSERT_TRUE(parseTraceSelection("none", none.trace, error)) << error;
    std::string status;
    EXPECT_FALSE(startCuptiCapture(none, status));
    stopCuptiCapture();
    stopCuptiCapture();
    EXPECT_FALSE(startCuptiCapture(none, status));
    EXPECT_EQ(status, "off: not selected (TUNEUP_TRACE)");
}

TEST(CuptiCapture, WithTheStubDriverIsOffWithAReason) {
    const std::string stub = std::string(TUNEUP_CUDA_LIBRARY_DIR) + "/stubs/libcuda.so";
    if (!toolkitHasCupti() || realDriverInstalled() || access(stub.c_str(), F_OK) != 0)
        GTEST_SKIP() << "needs libcupti, the toolkit's stub libcuda and no real driver";
    ASSERT_NE(dlopen(stub.c_str(), RTLD_NOW | RTLD_GLOBAL), nullptr) << dlerror();
    std::string status;
    EXPECT_FALSE(startCuptiCapture(Config {}, status));
    EXPECT_TRUE(status.starts_with("off: cuptiSubscribe: CUPTI_ERROR_")) << status;
    EXPECT_NE(status.find("stub"), std::string::npos) << status;
    std::printf("status: %s\n", status.c_str());
}

TEST(CuptiCapture, ForkedChildNeverStarts) {
    EXPECT_TRUE(inChild([] {
        disableCuptiAfterFork();
        std::string status;
        const bool on = startCuptiCapture(Config {}, status);
        stopCuptiCapture();
        return !on && status == "off: forked child" && !cuptiCaptureOn();
    }));
}

} // namespace
} // namespace tuneup::agent
