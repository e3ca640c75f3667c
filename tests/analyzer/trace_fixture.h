#pragma once
// Builds small tuneup trace files with the real schema, as the agent writes them, for reader tests.

#include "trace_schema.h"

#include <cstdlib>
#include <sqlite3.h>
#include <stdexcept>
#include <string>

namespace tuneup::test {

struct TraceSpec {
    int schemaVersion = schema::kSchemaVersion;
    bool endNs = true; // a clean exit writes meta end_ns
    bool walMode = false; // the agent's journal mode
    int kernels = 3, memcpys = 2, memsets = 1, syncs = 1, apiCalls = 4, nvtxRanges = 2, nvtxMarks = 5;
    bool frameworkFlags = true; // three readings (schema 2 and later)
    bool libraryCalls = false; // two GEMM calls, two convolution calls, one external correlation (schema 3)
    bool threadStates = false; // three samples of the main thread (schema 2 and later)
    std::string machine; // meta `machine`; none when empty (files before it was written)
    int pageSize = 4096;
};

inline void exec(sqlite3* db, const std::string& sql) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
        const std::string error = message ? message : "?";
        sqlite3_free(message);
        throw std::runtime_error("fixture SQL failed: " + error + " in: " + sql.substr(0, 200));
    }
}

// Times: the process runs from 1'000'000'000 ns to 3'000'000'000 ns; events lie within.
inline void fillTrace(sqlite3* db, const TraceSpec& spec) {
    exec(db, "PRAGMA page_size=" + std::to_string(spec.pageSize));
    if (spec.walMode) exec(db, "PRAGMA journal_mode=WAL");
    exec(db,
        "PRAGMA application_id=" + std::to_string(schema::kApplicationId)
            + "; PRAGMA user_version=" + std::to_string(spec.schemaVersion));
    exec(db, "BEGIN");
    exec(db, std::string(schema::schemaSql()));
    exec(db,
        "INSERT INTO meta VALUES ('format', '" + std::string(schema::kFormatName) + "'), ('schema_version', '"
            + std::to_string(spec.schemaVersion) + "'), ('tuneup_version', '9.9.9'), ('pid', '4242'), "
            + "('parent_pid', '1'), ('role', 'main'), ('host', 'testhost'), ('command_line', 'python train.py'), "
            + "('start_ns', '1000000000'), ('clock.realtime_ns', '1700000000000000000'), "
            + "('clock.monotonic_ns', '1000000000'), ('capture.nvtx', 'on'), "
            + "('capture.cuda', 'off: no CUDA driver')");
    if (spec.endNs) exec(db, "INSERT INTO meta VALUES ('end_ns', '3000000000')");
    exec(db, "INSERT INTO strings VALUES (1, 'volta_sgemm_128x64_nn'), (2, 'cudaLaunchKernel'), (3, 'step')");
    exec(db,
        "INSERT INTO devices VALUES (0, 'NVIDIA H100 80GB HBM3', 9, 0, 132, 85000000000, 3352.0, 1980000, "
        "'GPU-0')");
    exec(db,
        "INSERT INTO stats VALUES ('events.produced', 'info', 100, 'events made'), "
        "('events.dropped', 'data_loss', 7, 'ring full'), ('cupti.dropped', 'data_loss', 2, 'CUPTI drops'), "
        "('cupti.records', 'info', 11, 'records')");
    for (int i = 0; i < spec.kernels; ++i)
        exec(db,
            "INSERT INTO kernels (start_ns, end_ns, device_id, stream_id, correlation_id, name_id) VALUES ("
                + std::to_string(1100000000 + i * 1000) + ", " + std::to_string(1100000500 + i * 1000) + ", 0, 7, "
                + std::to_string(i) + ", 1)");
    for (int i = 0; i < spec.memcpys; ++i)
        exec(db,
            "INSERT INTO memcpys (start_ns, end_ns, device_id, copy_kind, src_kind, dst_kind, bytes) VALUES ("
                + std::to_string(1200000000 + i) + ", 1200001000, 0, 1, 1, 3, 4096)");
    for (int i = 0; i < spec.memsets; ++i)
        exec(db, "INSERT INTO memsets (start_ns, end_ns, device_id, bytes) VALUES (1300000000, 1300000100, 0, 64)");
    for (int i = 0; i < spec.syncs; ++i)
        exec(db, "INSERT INTO syncs (start_ns, end_ns, sync_type) VALUES (1400000000, 1400000100, 3)");
    for (int i = 0; i < spec.apiCalls; ++i)
        exec(db,
            "INSERT INTO api_calls (start_ns, end_ns, tid, api, cbid, name_id) VALUES ("
                + std::to_string(1050000000 + i) + ", 1050000100, 4242, 1, 211, 2)");
    exec(db, "INSERT INTO nvtx_domains VALUES (0, NULL)");
    for (int i = 0; i < spec.nvtxRanges; ++i)
        exec(db,
            "INSERT INTO nvtx_ranges (start_ns, end_ns, tid, domain_id, name_id, kind) VALUES ("
                + std::to_string(1010000000 + i) + ", " + (i == 0 ? "2990000000" : "NULL") + ", 4242, 0, 3, 1)");
    for (int i = 0; i < spec.nvtxMarks; ++i)
        exec(db,
            "INSERT INTO nvtx_marks (ts_ns, tid, domain_id, name_id) VALUES (" + std::to_string(1020000000 + i)
                + ", 4242, 0, 3)");
    // Framework flags (schema 2): the torch probes' readings; a version-1 file has no such table.
    if (spec.schemaVersion >= 2 && spec.frameworkFlags)
        exec(db,
            "INSERT INTO strings VALUES (4, 'cudnn.benchmark'), (5, 'autograd.anomaly'); "
            "INSERT INTO framework_flags (ts_ns, tid, name_id, value) VALUES (1010000000, 4242, 4, 0), "
            "(1010000000, 4242, 5, NULL), (1500000000, 4242, 4, 1)");
    else if (spec.schemaVersion < 2)
        exec(db, "DROP TABLE framework_flags; DROP TABLE thread_states");
    if (spec.schemaVersion >= 2 && spec.threadStates)
        exec(db,
            "INSERT INTO thread_states (ts_ns, tid, state, syscall) VALUES (1010000000, 4242, 'R', -1), "
            "(1020000000, 4242, 'S', 98), (1030000000, 4242, 'D', NULL)");
    if (!spec.machine.empty()) exec(db, "INSERT INTO meta VALUES ('machine', '" + spec.machine + "')");
    // The interposers' calls (schema 3): a cuBLAS GEMM with its kernel tied by CUPTI's external correlation,
    // a cuBLASLt matmul, a legacy heuristic query and a backend run.
    if (spec.schemaVersion >= 3 && spec.libraryCalls)
        exec(db,
            "INSERT INTO strings VALUES (6, 'cublasGemmEx'), (7, 'cublasLtMatmul'), "
            "(8, 'cudnnGetConvolutionForwardAlgorithm_v7'), (9, 'cudnnBackendExecute'); "
            "INSERT INTO gemm_calls (start_ns, end_ns, tid, api, name_id, transa, transb, m, n, k, batch, a_type, "
            "b_type, c_type, compute_type, lda, ldb, ldc, stride_a, stride_b, stride_c, epilogue, external_id, status) "
            "VALUES (1099990000, 1100000000, 4242, 1, 6, 0, 1, 30, 1001, 30, 1, 2, 2, 2, 68, 30, 1001, 30, NULL, NULL, "
            "NULL, NULL, 17, 0), (1200000000, 1200000500, 4242, 2, 7, 1, 0, 32, 64, 1008, 12, 14, 14, 14, 77, 1008, "
            "1008, 32, 32256, 64512, 2048, 4, NULL, 1); "
            "INSERT INTO conv_calls (start_ns, end_ns, tid, api, name_id, call_kind, direction, n, c, d, h, w, k, "
            "filter_c, t, r, s, pad_d, pad_h, pad_w, stride_d, stride_h, stride_w, dilation_d, dilation_h, dilation_w, "
            "groups, data_type, compute_type, math_type, layout, algo, algo_source, plan_id, external_id, status) "
            "VALUES (1300000000, 1300001000, 4242, 1, 8, 3, 1, 8, 3, NULL, 224, 224, 64, 3, NULL, 7, 7, NULL, 3, 3, "
            "NULL, 2, 2, NULL, 1, 1, 1, 2, 0, 1, 1, 1, 2, NULL, NULL, 0), (1400000000, 1400002000, 4242, 2, 9, 1, 2, "
            "16, 64, 8, 56, 56, 128, 32, 3, 3, 3, 1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 9, 0, NULL, 2, 7, 3, 3, NULL, 2000); "
            "INSERT INTO external_correlations VALUES (0, 5, 17), (1, 3, 17)");
    else if (spec.schemaVersion < 3)
        exec(db, "DROP TABLE gemm_calls; DROP TABLE conv_calls; DROP TABLE external_correlations");
    if (spec.schemaVersion < 6) exec(db, "DROP TABLE memory_events; DROP TABLE memory_peaks");
    exec(db, "COMMIT");
}

inline void writeTrace(const std::string& path, const TraceSpec& spec = {}) {
    sqlite3* db = nullptr;
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) throw std::runtime_error("cannot create " + path);
    try {
        fillTrace(db, spec);
    } catch (...) {
        sqlite3_close(db);
        throw;
    }
    sqlite3_close(db);
}

} // namespace tuneup::test
