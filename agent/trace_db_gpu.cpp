// The rows of GPU activity and of the interposed library calls (TraceDb's CUPTI and cuBLAS/cuDNN side).
#include "trace_db.h"
#include "trace_db_bind.h"
#include "trace_schema.h"

#include <algorithm>
#include <sqlite3.h>

namespace tuneup::agent {

void TraceDb::kernel(const KernelRecord& k) {
    if (!m_kernel)
        m_kernel = prepare("INSERT INTO kernels(start_ns, end_ns, device_id, context_id, stream_id, correlation_id, "
                           "name_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, "
                           "static_shared_bytes, dynamic_shared_bytes, graph_id) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_kernel;
    sqlite3_bind_int64(s, 1, int64_t(k.startNs));
    sqlite3_bind_int64(s, 2, int64_t(k.endNs));
    sqlite3_bind_int64(s, 3, k.deviceId);
    sqlite3_bind_int64(s, 4, k.contextId);
    sqlite3_bind_int64(s, 5, k.streamId);
    sqlite3_bind_int64(s, 6, k.correlationId);
    sqlite3_bind_int64(s, 7, intern(k.name));
    const int64_t dims[] = { k.gridX, k.gridY, k.gridZ, k.blockX, k.blockY, k.blockZ };
    for (int i = 0; i < 6; ++i)
        sqlite3_bind_int64(s, 8 + i, dims[i]);
    sqlite3_bind_int64(s, 14, k.registersPerThread);
    sqlite3_bind_int64(s, 15, k.staticSharedBytes);
    sqlite3_bind_int64(s, 16, k.dynamicSharedBytes);
    sqlite3_bind_int64(s, 17, k.graphId);
    if (stepGpuRecord(s)) ++m_eventsWritten;
}

void TraceDb::memcpy(const MemcpyRecord& m) {
    if (!m_memcpy)
        m_memcpy = prepare("INSERT INTO memcpys(start_ns, end_ns, device_id, context_id, stream_id, correlation_id, "
                           "copy_kind, src_kind, dst_kind, bytes, src_device_id, dst_device_id) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_memcpy;
    sqlite3_bind_int64(s, 1, int64_t(m.startNs));
    sqlite3_bind_int64(s, 2, int64_t(m.endNs));
    sqlite3_bind_int64(s, 3, m.deviceId);
    sqlite3_bind_int64(s, 4, m.contextId);
    sqlite3_bind_int64(s, 5, m.streamId);
    sqlite3_bind_int64(s, 6, m.correlationId);
    sqlite3_bind_int(s, 7, m.copyKind);
    sqlite3_bind_int(s, 8, m.srcKind);
    sqlite3_bind_int(s, 9, m.dstKind);
    sqlite3_bind_int64(s, 10, int64_t(m.bytes));
    bindOptional(s, 11, m.srcDeviceId >= 0 ? std::optional<int64_t>(m.srcDeviceId) : std::nullopt);
    bindOptional(s, 12, m.dstDeviceId >= 0 ? std::optional<int64_t>(m.dstDeviceId) : std::nullopt);
    if (stepGpuRecord(s)) ++m_eventsWritten;
}

void TraceDb::memset(const MemsetRecord& m) {
    if (!m_memset)
        m_memset = prepare("INSERT INTO memsets(start_ns, end_ns, device_id, context_id, stream_id, correlation_id, "
                           "bytes, value, memory_kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_memset;
    sqlite3_bind_int64(s, 1, int64_t(m.startNs));
    sqlite3_bind_int64(s, 2, int64_t(m.endNs));
    sqlite3_bind_int64(s, 3, m.deviceId);
    sqlite3_bind_int64(s, 4, m.contextId);
    sqlite3_bind_int64(s, 5, m.streamId);
    sqlite3_bind_int64(s, 6, m.correlationId);
    sqlite3_bind_int64(s, 7, int64_t(m.bytes));
    sqlite3_bind_int64(s, 8, m.value);
    sqlite3_bind_int(s, 9, m.memoryKind);
    if (stepGpuRecord(s)) ++m_eventsWritten;
}

void TraceDb::sync(const SyncRecord& r) {
    if (!m_sync)
        m_sync = prepare("INSERT INTO syncs(start_ns, end_ns, sync_type, context_id, stream_id, event_id, "
                         "correlation_id) VALUES (?, ?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_sync;
    sqlite3_bind_int64(s, 1, int64_t(r.startNs));
    sqlite3_bind_int64(s, 2, int64_t(r.endNs));
    sqlite3_bind_int64(s, 3, r.type);
    sqlite3_bind_int64(s, 4, r.contextId);
    bindOptional(s, 5, r.streamId >= 0 ? std::optional<int64_t>(r.streamId) : std::nullopt);
    bindOptional(s, 6, r.eventId >= 0 ? std::optional<int64_t>(r.eventId) : std::nullopt);
    sqlite3_bind_int64(s, 7, r.correlationId);
    if (stepGpuRecord(s)) ++m_eventsWritten;
}

void TraceDb::api(const ApiRecord& a) {
    if (!m_api)
        m_api
            = prepare("INSERT INTO api_calls(start_ns, end_ns, tid, api, cbid, name_id, correlation_id, return_value) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_api;
    sqlite3_bind_int64(s, 1, int64_t(a.startNs));
    sqlite3_bind_int64(s, 2, int64_t(a.endNs));
    sqlite3_bind_int64(s, 3, a.threadId);
    sqlite3_bind_int64(s, 4, a.api);
    sqlite3_bind_int64(s, 5, a.cbid);
    sqlite3_bind_int64(s, 6, intern(a.name.empty() ? std::string_view("<unknown>") : a.name));
    sqlite3_bind_int64(s, 7, a.correlationId);
    sqlite3_bind_int64(s, 8, a.returnValue);
    if (stepGpuRecord(s)) ++m_eventsWritten;
}

void TraceDb::device(const DeviceRecord& d) {
    if (!m_device)
        m_device = prepare("INSERT OR REPLACE INTO devices(id, name, compute_major, compute_minor, sm_count, "
                           "global_memory_bytes, memory_bandwidth_gbs, core_clock_khz, uuid) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_device;
    sqlite3_bind_int64(s, 1, d.id);
    bindText(s, 2, d.name);
    sqlite3_bind_int64(s, 3, d.computeMajor);
    sqlite3_bind_int64(s, 4, d.computeMinor);
    sqlite3_bind_int64(s, 5, d.smCount);
    sqlite3_bind_int64(s, 6, int64_t(d.globalMemoryBytes));
    sqlite3_bind_double(s, 7, double(d.globalMemoryBandwidthKBs) / 1e6);
    sqlite3_bind_int64(s, 8, d.coreClockKHz);
    if (d.uuid.empty())
        sqlite3_bind_null(s, 9);
    else
        bindText(s, 9, d.uuid);
    step(s);
}

void TraceDb::memory(const MemoryRecord& m) {
    if (!m_memory)
        m_memory = prepare("INSERT INTO memory_events(ts_ns, device_id, source, delta_bytes, delta_of, memory_kind, "
                           "address, correlation_id, stream_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_memory;
    const int64_t bytes = int64_t(std::min<uint64_t>(m.bytes, INT64_MAX));
    sqlite3_bind_int64(s, 1, int64_t(m.timeNs));
    sqlite3_bind_int64(s, 2, m.deviceId);
    sqlite3_bind_int(s, 3, schema::kMemoryFromCupti);
    sqlite3_bind_int64(s, 4, m.operation == MemoryRecord::kRelease ? -bytes : bytes);
    // cudaMalloc takes memory from the driver (a caching allocator's reserved memory); a stream-ordered
    // allocation comes out of a pool the driver keeps, as a tensor's memory does out of PyTorch's cache.
    sqlite3_bind_int(s, 5, m.isAsync ? schema::kTotalAllocated : schema::kTotalReserved);
    sqlite3_bind_int(s, 6, m.memoryKind);
    bindOptional(s, 7, m.address ? std::optional<int64_t>(int64_t(m.address)) : std::nullopt);
    sqlite3_bind_int64(s, 8, m.correlationId);
    bindOptional(s, 9, m.streamId >= 0 ? std::optional<int64_t>(m.streamId) : std::nullopt);
    if (stepGpuRecord(s)) ++m_eventsWritten;
}

void TraceDb::addGemmCall(uint64_t startNs, int tid, int64_t nameId, const GemmCallFixed& c) {
    if (!m_gemmCall)
        m_gemmCall
            = prepare("INSERT INTO gemm_calls(start_ns, end_ns, tid, api, name_id, transa, transb, m, n, k, batch, "
                      "a_type, b_type, c_type, compute_type, lda, ldb, ldc, stride_a, stride_b, stride_c, "
                      "epilogue, external_id, status) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_gemmCall;
    sqlite3_bind_int64(s, 1, int64_t(startNs));
    sqlite3_bind_int64(s, 2, int64_t(std::max(c.endNs, startNs)));
    sqlite3_bind_int(s, 3, tid);
    sqlite3_bind_int(s, 4, c.api);
    sqlite3_bind_int64(s, 5, nameId);
    bindKnown(s, 6, c.transa, -1);
    bindKnown(s, 7, c.transb, -1);
    const int64_t sizes[] = { c.m, c.n, c.k };
    for (int i = 0; i < 3; ++i)
        bindKnown(s, 8 + i, sizes[i], kUnknown);
    sqlite3_bind_int64(s, 11, c.batch == kUnknown ? 1 : c.batch);
    const int32_t types[] = { c.aType, c.bType, c.cType, c.computeType };
    for (int i = 0; i < 4; ++i)
        bindKnown(s, 12 + i, types[i], -1);
    const int64_t lds[] = { c.lda, c.ldb, c.ldc, c.strideA, c.strideB, c.strideC };
    for (int i = 0; i < 6; ++i)
        bindKnown(s, 16 + i, lds[i], kUnknown);
    bindKnown(s, 22, c.epilogue, -1);
    bindKnown(s, 23, int64_t(c.externalId), 0);
    sqlite3_bind_int(s, 24, c.status);
    if (step(s)) ++m_eventsWritten;
}

void TraceDb::addConvCall(uint64_t startNs, int tid, int64_t nameId, const ConvCallFixed& c) {
    if (!m_convCall)
        m_convCall
            = prepare("INSERT INTO conv_calls(start_ns, end_ns, tid, api, name_id, call_kind, direction, n, c, d, h, "
                      "w, k, t, r, s, filter_c, pad_d, pad_h, pad_w, stride_d, stride_h, stride_w, dilation_d, "
                      "dilation_h, dilation_w, groups, data_type, compute_type, math_type, layout, algo, "
                      "algo_source, plan_id, external_id, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                      "?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_convCall;
    const ConvShape& x = c.shape;
    sqlite3_bind_int64(s, 1, int64_t(startNs));
    sqlite3_bind_int64(s, 2, int64_t(std::max(c.endNs, startNs)));
    sqlite3_bind_int(s, 3, tid);
    sqlite3_bind_int(s, 4, c.api);
    sqlite3_bind_int64(s, 5, nameId);
    sqlite3_bind_int(s, 6, c.callKind);
    bindKnown(s, 7, x.direction, -1);
    const int32_t dims[] = { x.n, x.c, x.d, x.h, x.w, x.k, x.t, x.r, x.s, x.filterC, x.pad[0], x.pad[1], x.pad[2],
        x.stride[0], x.stride[1], x.stride[2], x.dilation[0], x.dilation[1], x.dilation[2], x.groups, x.dataType,
        x.computeType, x.mathType };
    for (int i = 0; i < int(sizeof dims / sizeof dims[0]); ++i)
        bindKnown(s, 8 + i, dims[i], -1);
    bindKnown(s, 31, x.layout, -1);
    bindKnown(s, 32, c.algo, kUnknown);
    sqlite3_bind_int(s, 33, c.algoSource);
    bindKnown(s, 34, int64_t(c.planId), 0);
    bindKnown(s, 35, int64_t(c.externalId), 0);
    sqlite3_bind_int(s, 36, c.status);
    if (step(s)) ++m_eventsWritten;
}

void TraceDb::externalCorrelation(const ExternalCorrelationRecord& r) {
    if (!m_externalCorrelation)
        m_externalCorrelation
            = prepare("INSERT INTO external_correlations(correlation_id, kind, external_id) VALUES (?, ?, ?)");
    sqlite3_stmt* s = m_externalCorrelation;
    sqlite3_bind_int64(s, 1, r.correlationId);
    sqlite3_bind_int64(s, 2, r.kind);
    sqlite3_bind_int64(s, 3, int64_t(r.externalId));
    stepGpuRecord(s);
}

} // namespace tuneup::agent
