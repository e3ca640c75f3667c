#include "cupti_decode.h"

#include "trace_schema.h"

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace tuneup::agent {

namespace {

// Record layouts. The running CUPTI (torch's 12.x, say) may be older or newer than these headers,
// and each emits its own latest struct version of a kind. Newer versions only append fields, so
// every field is read through the OLDEST struct that has it, whose offsets the newer versions keep
// (checked below against this toolkit's current structs):
//   kernels   CUpti_ActivityKernel5 (CUDA 11.0; graphId is its newest field we read)
//   memcpy    CUpti_ActivityMemcpy,     peer copies CUpti_ActivityMemcpyPtoP
//   memset    CUpti_ActivityMemset,     sync CUpti_ActivitySynchronization
//   API       CUpti_ActivityAPI (never versioned), devices CUpti_ActivityDevice2 (uuid)
//   memory    CUpti_ActivityMemory2 (CUDA 11.2, the first record of MEMORY2; isAsync is its newest field we read)
// So the agent reads records of CUPTI 11.0 and later (memory records from 11.2).
using KernelLayout = CUpti_ActivityKernel5;
using MemcpyLayout = CUpti_ActivityMemcpy;
using PeerCopyLayout = CUpti_ActivityMemcpyPtoP;
using MemsetLayout = CUpti_ActivityMemset;
using SyncLayout = CUpti_ActivitySynchronization;
using ApiLayout = CUpti_ActivityAPI;
using DeviceLayout = CUpti_ActivityDevice2;
using ExternalCorrelationLayout = CUpti_ActivityExternalCorrelation; // never versioned
using MemoryLayout = CUpti_ActivityMemory2;

#define TUNEUP_SAME_OFFSET(Old, New, field)                                                                            \
    static_assert(offsetof(Old, field) == offsetof(New, field), #New "." #field " moved: update the decoder")

TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, registersPerThread);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, start);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, end);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, deviceId);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, contextId);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, streamId);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, gridX);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, gridY);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, gridZ);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, blockX);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, blockY);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, blockZ);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, staticSharedMemory);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, dynamicSharedMemory);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, correlationId);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, name);
TUNEUP_SAME_OFFSET(KernelLayout, CUpti_ActivityKernel10, graphId);
TUNEUP_SAME_OFFSET(MemcpyLayout, CUpti_ActivityMemcpy6, copyKind);
TUNEUP_SAME_OFFSET(MemcpyLayout, CUpti_ActivityMemcpy6, srcKind);
TUNEUP_SAME_OFFSET(MemcpyLayout, CUpti_ActivityMemcpy6, dstKind);
TUNEUP_SAME_OFFSET(MemcpyLayout, CUpti_ActivityMemcpy6, bytes);
TUNEUP_SAME_OFFSET(MemcpyLayout, CUpti_ActivityMemcpy6, start);
TUNEUP_SAME_OFFSET(MemcpyLayout, CUpti_ActivityMemcpy6, end);
TUNEUP_SAME_OFFSET(MemcpyLayout, CUpti_ActivityMemcpy6, deviceId);
TUNEUP_SAME_OFFSET(MemcpyLayout, CUpti_ActivityMemcpy6, contextId);
TUNEUP_SAME_OFFSET(MemcpyLayout, CUpti_ActivityMemcpy6, streamId);
TUNEUP_SAME_OFFSET(MemcpyLayout, CUpti_ActivityMemcpy6, correlationId);
TUNEUP_SAME_OFFSET(PeerCopyLayout, CUpti_ActivityMemcpyPtoP4, copyKind);
TUNEUP_SAME_OFFSET(PeerCopyLayout, CUpti_ActivityMemcpyPtoP4, srcKind);
TUNEUP_SAME_OFFSET(PeerCopyLayout, CUpti_ActivityMemcpyPtoP4, dstKind);
TUNEUP_SAME_OFFSET(PeerCopyLayout, CUpti_ActivityMemcpyPtoP4, bytes);
TUNEUP_SAME_OFFSET(PeerCopyLayout, CUpti_ActivityMemcpyPtoP4, start);
TUNEUP_SAME_OFFSET(PeerCopyLayout, CUpti_ActivityMemcpyPtoP4, end);
TUNEUP_SAME_OFFSET(PeerCopyLayout, CUpti_ActivityMemcpyPtoP4, deviceId);
TUNEUP_SAME_OFFSET(PeerCopyLayout, CUpti_ActivityMemcpyPtoP4, contextId);
TUNEUP_SAME_OFFSET(PeerCopyLayout, CUpti_ActivityMemcpyPtoP4, streamId);
TUNEUP_SAME_OFFSET(PeerCopyLayout, CUpti_ActivityMemcpyPtoP4, srcDeviceId);
TUNEUP_SAME_OFFSET(PeerCopyLayout, CUpti_ActivityMemcpyPtoP4, dstDeviceId);
TUNEUP_SAME_OFFSET(PeerCopyLayout, CUpti_ActivityMemcpyPtoP4, correlationId);
TUNEUP_SAME_OFFSET(MemsetLayout, CUpti_ActivityMemset4, value);
TUNEUP_SAME_OFFSET(MemsetLayout, CUpti_ActivityMemset4, bytes);
TUNEUP_SAME_OFFSET(MemsetLayout, CUpti_ActivityMemset4, start);
TUNEUP_SAME_OFFSET(MemsetLayout, CUpti_ActivityMemset4, end);
TUNEUP_SAME_OFFSET(MemsetLayout, CUpti_ActivityMemset4, deviceId);
TUNEUP_SAME_OFFSET(MemsetLayout, CUpti_ActivityMemset4, contextId);
TUNEUP_SAME_OFFSET(MemsetLayout, CUpti_ActivityMemset4, streamId);
TUNEUP_SAME_OFFSET(MemsetLayout, CUpti_ActivityMemset4, correlationId);
TUNEUP_SAME_OFFSET(MemsetLayout, CUpti_ActivityMemset4, memoryKind);
TUNEUP_SAME_OFFSET(SyncLayout, CUpti_ActivitySynchronization2, type);
TUNEUP_SAME_OFFSET(SyncLayout, CUpti_ActivitySynchronization2, start);
TUNEUP_SAME_OFFSET(SyncLayout, CUpti_ActivitySynchronization2, end);
TUNEUP_SAME_OFFSET(SyncLayout, CUpti_ActivitySynchronization2, correlationId);
TUNEUP_SAME_OFFSET(SyncLayout, CUpti_ActivitySynchronization2, contextId);
TUNEUP_SAME_OFFSET(SyncLayout, CUpti_ActivitySynchronization2, streamId);
TUNEUP_SAME_OFFSET(SyncLayout, CUpti_ActivitySynchronization2, cudaEventId);
TUNEUP_SAME_OFFSET(DeviceLayout, CUpti_ActivityDevice5, globalMemoryBandwidth);
TUNEUP_SAME_OFFSET(DeviceLayout, CUpti_ActivityDevice5, globalMemorySize);
TUNEUP_SAME_OFFSET(DeviceLayout, CUpti_ActivityDevice5, coreClockRate);
TUNEUP_SAME_OFFSET(DeviceLayout, CUpti_ActivityDevice5, numMultiprocessors);
TUNEUP_SAME_OFFSET(DeviceLayout, CUpti_ActivityDevice5, computeCapabilityMajor);
TUNEUP_SAME_OFFSET(DeviceLayout, CUpti_ActivityDevice5, computeCapabilityMinor);
TUNEUP_SAME_OFFSET(DeviceLayout, CUpti_ActivityDevice5, id);
TUNEUP_SAME_OFFSET(DeviceLayout, CUpti_ActivityDevice5, uuid);
TUNEUP_SAME_OFFSET(DeviceLayout, CUpti_ActivityDevice5, name);
TUNEUP_SAME_OFFSET(MemoryLayout, CUpti_ActivityMemory4, memoryOperationType);
TUNEUP_SAME_OFFSET(MemoryLayout, CUpti_ActivityMemory4, memoryKind);
TUNEUP_SAME_OFFSET(MemoryLayout, CUpti_ActivityMemory4, correlationId);
TUNEUP_SAME_OFFSET(MemoryLayout, CUpti_ActivityMemory4, address);
TUNEUP_SAME_OFFSET(MemoryLayout, CUpti_ActivityMemory4, bytes);
TUNEUP_SAME_OFFSET(MemoryLayout, CUpti_ActivityMemory4, timestamp);
TUNEUP_SAME_OFFSET(MemoryLayout, CUpti_ActivityMemory4, deviceId);
TUNEUP_SAME_OFFSET(MemoryLayout, CUpti_ActivityMemory4, contextId);
TUNEUP_SAME_OFFSET(MemoryLayout, CUpti_ActivityMemory4, streamId);
TUNEUP_SAME_OFFSET(MemoryLayout, CUpti_ActivityMemory4, isAsync);
#undef TUNEUP_SAME_OFFSET

// Copies the record's prefix: no alignment or aliasing assumptions about the buffer. Every record
// CUPTI emits is at least as large as the oldest layout of its kind.
template <typename Layout> Layout read(const CUpti_Activity* record) {
    Layout layout;
    std::memcpy(&layout, record, sizeof layout);
    return layout;
}

// CUDA 12.8+ (CUPTI 26+) appends the call's return value to synchronisation records.
using SyncReturnLayout = CUpti_ActivitySynchronization2;
static_assert(offsetof(SyncReturnLayout, returnValue) >= sizeof(SyncLayout));

class Decoder {
public:
    Decoder(const DecodeOptions& options, ActivitySink& sink, DecodeStats& stats, std::vector<SyncRecord>& syncs,
        std::unordered_set<uint32_t>& queries)
        : m_options(options)
        , m_sink(sink)
        , m_stats(stats)
        , m_syncs(syncs)
        , m_queries(queries) { }

    void decode(const CUpti_Activity* record, size_t size) {
        CUpti_ActivityKind kind;
        std::memcpy(&kind, record, sizeof kind);
        switch (kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
            kernel(read<KernelLayout>(record));
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY:
            memcpy(read<MemcpyLayout>(record));
            break;
        case CUPTI_ACTIVITY_KIND_MEMCPY2:
            peerCopy(read<PeerCopyLayout>(record));
            break;
        case CUPTI_ACTIVITY_KIND_MEMSET:
            memset(read<MemsetLayout>(record));
            break;
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
            // The return value exists only in records of CUPTIs that emit the longer layout.
            if (size >= sizeof(SyncReturnLayout) && read<SyncReturnLayout>(record).returnValue != 0) {
                ++m_stats.syncNotWaits; // a query of unfinished work (CUDA_ERROR_NOT_READY): no wait
                break;
            }
            sync(read<SyncLayout>(record));
            break;
        case CUPTI_ACTIVITY_KIND_RUNTIME:
            api(read<ApiLayout>(record), schema::kApiRuntime);
            break;
        case CUPTI_ACTIVITY_KIND_DRIVER:
            api(read<ApiLayout>(record), schema::kApiDriver);
            break;
        case CUPTI_ACTIVITY_KIND_DEVICE:
            device(read<DeviceLayout>(record));
            break;
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
            externalCorrelation(read<ExternalCorrelationLayout>(record));
            break;
        case CUPTI_ACTIVITY_KIND_MEMORY2:
            memory(read<MemoryLayout>(record));
            break;
        default:
            ++m_stats.unknownKind;
            break;
        }
    }

private:
    // Applies the clock offset and the timestamp rules; false when the record must not be written.
    bool times(uint64_t start, uint64_t end, uint64_t& startNs, uint64_t& endNs) {
        if (start == 0 && end == 0) {
            ++m_stats.noTimestamp;
            return false;
        }
        if (end < start) {
            ++m_stats.endBeforeStart;
            end = start;
        }
        startNs = shift(start);
        endNs = shift(end);
        return true;
    }

    uint64_t shift(uint64_t ts) const {
        const int64_t shifted = int64_t(ts) - m_options.clockOffsetNs;
        return shifted > 0 ? uint64_t(shifted) : 0;
    }

    void externalCorrelation(const ExternalCorrelationLayout& e) {
        ExternalCorrelationRecord out;
        out.kind = uint32_t(e.externalKind);
        out.externalId = e.externalId;
        out.correlationId = e.correlationId;
        m_sink.externalCorrelation(out);
        ++m_stats.externalCorrelations;
    }

    void memory(const MemoryLayout& m) {
        if (m.memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
            && m.memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
            ++m_stats.memoryNotOperations;
            return;
        }
        if (m.timestamp == 0) {
            ++m_stats.noTimestamp;
            return;
        }
        MemoryRecord out;
        out.timeNs = shift(m.timestamp);
        out.deviceId = m.deviceId;
        out.contextId = m.contextId;
        out.correlationId = m.correlationId;
        out.isAsync = m.isAsync != 0;
        out.streamId = out.isAsync && m.streamId != CUPTI_INVALID_STREAM_ID ? int64_t(m.streamId) : -1;
        out.operation = uint8_t(m.memoryOperationType);
        out.memoryKind = uint8_t(m.memoryKind);
        out.bytes = m.bytes;
        out.address = m.address;
        m_sink.memory(out);
        ++m_stats.memories;
    }

    void kernel(const KernelLayout& k) {
        KernelRecord out;
        if (!times(k.start, k.end, out.startNs, out.endNs)) return;
        out.deviceId = k.deviceId;
        out.contextId = k.contextId;
        out.streamId = k.streamId;
        out.correlationId = k.correlationId;
        out.name = k.name ? std::string_view(k.name) : std::string_view();
        out.gridX = k.gridX;
        out.gridY = k.gridY;
        out.gridZ = k.gridZ;
        out.blockX = k.blockX;
        out.blockY = k.blockY;
        out.blockZ = k.blockZ;
        out.registersPerThread = k.registersPerThread;
        out.staticSharedBytes = uint32_t(k.staticSharedMemory);
        out.dynamicSharedBytes = uint32_t(k.dynamicSharedMemory);
        out.graphId = k.graphId;
        m_sink.kernel(out);
        ++m_stats.kernels;
    }

    void memcpy(const MemcpyLayout& m) {
        MemcpyRecord out;
        if (!times(m.start, m.end, out.startNs, out.endNs)) return;
        out.deviceId = m.deviceId;
        out.contextId = m.contextId;
        out.streamId = m.streamId;
        out.correlationId = m.correlationId;
        out.copyKind = m.copyKind;
        out.srcKind = m.srcKind; // CUpti_ActivityMemoryKind: PAGEABLE 1, PINNED 2, ... = schema::MemoryKind
        out.dstKind = m.dstKind;
        out.bytes = m.bytes;
        m_sink.memcpy(out);
        ++m_stats.memcpys;
    }

    void peerCopy(const PeerCopyLayout& m) {
        MemcpyRecord out;
        if (!times(m.start, m.end, out.startNs, out.endNs)) return;
        out.deviceId = m.deviceId;
        out.contextId = m.contextId;
        out.streamId = m.streamId;
        out.correlationId = m.correlationId;
        out.copyKind = m.copyKind;
        out.srcKind = m.srcKind;
        out.dstKind = m.dstKind;
        out.bytes = m.bytes;
        out.srcDeviceId = m.srcDeviceId;
        out.dstDeviceId = m.dstDeviceId;
        m_sink.memcpy(out);
        ++m_stats.memcpys;
    }

    void memset(const MemsetLayout& m) {
        MemsetRecord out;
        if (!times(m.start, m.end, out.startNs, out.endNs)) return;
        out.deviceId = m.deviceId;
        out.contextId = m.contextId;
        out.streamId = m.streamId;
        out.correlationId = m.correlationId;
        out.bytes = m.bytes;
        out.value = m.value;
        out.memoryKind = uint8_t(m.memoryKind);
        m_sink.memset(out);
        ++m_stats.memsets;
    }

    void sync(const SyncLayout& s) {
        SyncRecord out;
        if (!times(s.start, s.end, out.startNs, out.endNs)) return;
        out.type = uint32_t(s.type);
        out.contextId = s.contextId;
        out.correlationId = s.correlationId;
        out.streamId = s.streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : int64_t(s.streamId);
        out.eventId = s.cudaEventId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? -1 : int64_t(s.cudaEventId);
        m_syncs.push_back(out); // written at the end of the pass, unless its call was a query
    }

    void api(const ApiLayout& a, schema::ApiKind kind) {
        const ApiNameInfo info = m_options.apiName ? m_options.apiName(kind, a.cbid) : ApiNameInfo {};
        if (info.query) m_queries.insert(a.correlationId);
        if (info.noisy && !m_options.noisyApiRows) {
            auto it = m_stats.countedApis.find(info.name);
            if (it == m_stats.countedApis.end()) it = m_stats.countedApis.emplace(std::string(info.name), 0).first;
            ++it->second;
            return;
        }
        ApiRecord out;
        if (!times(a.start, a.end, out.startNs, out.endNs)) return;
        out.api = uint32_t(kind);
        out.cbid = a.cbid;
        out.processId = a.processId;
        out.threadId = a.threadId;
        out.correlationId = a.correlationId;
        out.returnValue = int64_t(a.returnValue); // CUresult or cudaError_t
        out.name = info.name;
        m_sink.api(out);
        ++(kind == schema::kApiRuntime ? m_stats.runtimeApis : m_stats.driverApis);
    }

    void device(const DeviceLayout& d) {
        DeviceRecord out;
        out.id = d.id;
        out.name = d.name ? std::string_view(d.name) : std::string_view();
        out.computeMajor = d.computeCapabilityMajor;
        out.computeMinor = d.computeCapabilityMinor;
        out.smCount = d.numMultiprocessors;
        out.globalMemoryBytes = d.globalMemorySize;
        out.globalMemoryBandwidthKBs = d.globalMemoryBandwidth;
        out.coreClockKHz = d.coreClockRate;
        // As nvidia-smi prints it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx. Empty when CUPTI left it zero.
        char uuid[64];
        bool any = false;
        for (char byte : d.uuid.bytes)
            any |= byte != 0;
        if (any) {
            static constexpr char kHex[] = "0123456789abcdef";
            std::copy_n("GPU-", 4, uuid);
            size_t n = 4;
            for (int i = 0; i < 16; ++i) {
                if (i == 4 || i == 6 || i == 8 || i == 10) uuid[n++] = '-';
                const auto byte = uint8_t(d.uuid.bytes[i]);
                uuid[n++] = kHex[byte >> 4];
                uuid[n++] = kHex[byte & 15];
            }
            out.uuid = std::string_view(uuid, n);
        }
        m_sink.device(out);
        ++m_stats.devices;
    }

    const DecodeOptions& m_options;
    ActivitySink& m_sink;
    DecodeStats& m_stats;
    std::vector<SyncRecord>& m_syncs;
    std::unordered_set<uint32_t>& m_queries;
};

} // namespace

RecordWalker::Step CuptiRecordWalker::next(uint8_t* buffer, size_t validSize, CUpti_Activity*& record) const {
    switch (m_nextRecord(buffer, validSize, &record)) {
    case CUPTI_SUCCESS:
        return Step::Record;
    case CUPTI_ERROR_MAX_LIMIT_REACHED: // the end; also a record cut short by validSize
        return Step::End;
    default: // CUPTI_ERROR_INVALID_KIND: a kind this CUPTI does not know, so its size is unknown
        return Step::Invalid;
    }
}

DecodeStats& DecodeStats::operator+=(const DecodeStats& other) {
    buffers += other.buffers;
    kernels += other.kernels;
    memcpys += other.memcpys;
    memsets += other.memsets;
    syncs += other.syncs;
    runtimeApis += other.runtimeApis;
    driverApis += other.driverApis;
    devices += other.devices;
    memories += other.memories;
    memoryNotOperations += other.memoryNotOperations;
    externalCorrelations += other.externalCorrelations;
    unknownKind += other.unknownKind;
    noTimestamp += other.noTimestamp;
    endBeforeStart += other.endBeforeStart;
    invalidBuffers += other.invalidBuffers;
    syncNotWaits += other.syncNotWaits;
    for (const auto& [name, calls] : other.countedApis)
        countedApis[name] += calls;
    return *this;
}

void ActivityDecoder::record(const CUpti_Activity* record, size_t size) {
    Decoder(m_options, m_sink, m_stats, m_syncs, m_queryCorrelations).decode(record, size);
}

void ActivityDecoder::decode(uint8_t* buffer, size_t validSize, const RecordWalker& walker) {
    ++m_stats.buffers;
    if (!buffer || validSize == 0) return;
    // One record ahead: a record's size is the distance to the next one (or to the end), which tells
    // which version of its struct the running CUPTI wrote.
    CUpti_Activity* current = nullptr;
    RecordWalker::Step step = walker.next(buffer, validSize, current);
    while (step == RecordWalker::Step::Record) {
        CUpti_Activity* next = current;
        const RecordWalker::Step nextStep = walker.next(buffer, validSize, next);
        const auto* at = reinterpret_cast<const uint8_t*>(current);
        const size_t size = nextStep == RecordWalker::Step::Record ? size_t(reinterpret_cast<const uint8_t*>(next) - at)
                                                                   : validSize - size_t(at - buffer);
        record(current, size);
        current = next;
        step = nextStep;
    }
    if (step == RecordWalker::Step::Invalid) ++m_stats.invalidBuffers;
}

void ActivityDecoder::finish() {
    for (const SyncRecord& sync : m_syncs) {
        if (m_queryCorrelations.count(sync.correlationId)) {
            ++m_stats.syncNotWaits;
            continue;
        }
        m_sink.sync(sync);
        ++m_stats.syncs;
    }
    m_syncs.clear();
    m_queryCorrelations.clear();
}

void decodeActivityBuffer(uint8_t* buffer, size_t validSize, const RecordWalker& walker, const DecodeOptions& options,
    ActivitySink& sink, DecodeStats& stats) {
    ActivityDecoder decoder(options, sink, stats);
    decoder.decode(buffer, validSize, walker);
    decoder.finish();
}

size_t stringFieldOffset(CUpti_ActivityKind kind) {
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return offsetof(KernelLayout, name);
    case CUPTI_ACTIVITY_KIND_DEVICE:
        return offsetof(DeviceLayout, name);
    default:
        return 0;
    }
}

std::string_view apiDisplayName(std::string_view name) {
    const size_t tag = name.rfind("_v");
    if (tag == std::string_view::npos || name.size() - tag - 2 < 4) return name;
    for (size_t i = tag + 2; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9') return name;
    return name.substr(0, tag);
}

} // namespace tuneup::agent
