#pragma once
// What the Kineto importer's tests share (kineto_json_test and the files beside it): the real traces,
// gzip, expected import errors, rows by name, and one small trace with every feature.

#include "import/import_error.h"
#include "import/kineto_json.h"
#include "model/trace_model.h"
#include "shared_traces.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>
#include <zlib.h>

namespace tuneup::test::kineto {

using namespace tuneup::analysis;
namespace fs = std::filesystem;

inline const fs::path kTraces = TUNEUP_SHARED_TRACES;

inline TraceModel load(const std::string& relative) {
    return importKinetoJson((kTraces / relative).string());
}

inline std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

inline std::string gzipBytes(std::string_view text) {
    z_stream z;
    std::memset(&z, 0, sizeof(z));
    EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
    std::string out(deflateBound(&z, static_cast<uLong>(text.size())) + 64, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = static_cast<uInt>(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

// Runs f, which must throw ImportError, and returns it.
template <class F> ImportError expectImportError(F&& f) {
    try {
        f();
    } catch (const ImportError& e) {
        return e;
    }
    ADD_FAILURE() << "no ImportError thrown";
    return ImportError(ImportError::Kind::Unreadable, "", "none");
}

inline ImportError importError(std::string_view bytes) {
    return expectImportError([&] { importKinetoJsonBytes(bytes, "test.json"); });
}

inline RowIndex findRow(const TraceModel& m, const std::vector<StringId>& names, std::string_view name) {
    for (size_t i = 0; i < names.size(); ++i)
        if (m.str(names[i]) == name) return static_cast<RowIndex>(i);
    return kNoRow;
}

inline size_t countPrefix(const TraceModel& m, const std::vector<StringId>& names, std::string_view prefix) {
    return static_cast<size_t>(
        std::count_if(names.begin(), names.end(), [&](StringId id) { return m.str(id).starts_with(prefix); }));
}

// Every feature in one small trace. Note the trailing comma after the last event (tolerated), the
// baseTimeNanoseconds after the events, nested unknown keys, and a flow whose end comes first.
inline constexpr std::string_view kSynthetic = R"json({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85000000000,
     "computeMajor": 9, "computeMinor": 0, "numSms": 132, "warpSize": 32, "extra": {"nested": [1, 2]}}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8, "pg_config": [{"a": 1}], "nccl_version": "2.21.5"},
  "unknownTop": {"deep": [[[1]]]},
  "host_name": "node7",
  "traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": 1000.5, "dur": 2.25,
     "args": {"device": 0, "stream": 7, "correlation": 11, "External id": 5, "grid": [4, 2, 1], "block": [128, 1, 1],
              "registers per thread": 32, "shared memory": 1024, "unknown": {"x": [1]}}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 101, "ts": 999, "dur": 1,
     "args": {"correlation": 11, "External id": 5, "cbid": 211}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 101, "ts": 998, "dur": 3,
     "args": {"External id": 5, "Input Dims": [[8, 3], [3, 5]], "Input type": ["float", "float"], "Sequence number": 4}},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 100, "tid": 101, "ts": 990, "dur": 20},
    {"ph": "f", "id": 11, "pid": 0, "tid": 7, "ts": 1000.5, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "s", "id": 11, "pid": 100, "tid": 101, "ts": 999, "cat": "ac2g", "name": "ac2g"},
    {"ph": "X", "cat": "python_function", "name": "train.py(1): step", "pid": 100, "tid": 101, "ts": 990, "dur": 1},
    {"ph": "X", "cat": "mystery", "name": "?", "pid": 100, "tid": 101, "ts": 990, "dur": 1},
    {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 100, "tid": 101, "ts": 991, "s": "t"},
    {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 100, "tid": 101, "ts": 992.5, "s": "t",
     "args": {"Total Reserved": 2097152, "Total Allocated": 1048576, "Bytes": -4096, "Addr": 140000000000000,
              "Device Id": 0, "Device Type": 1, "Ev Idx": 7}},
    {"ph": "M", "name": "thread_name", "pid": 100, "tid": 101, "args": {"name": "main"}},
    {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python3"}},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 1003, "dur": 1,
     "args": {"device": 0, "stream": 7, "correlation": 12, "bytes": 4096}},
    {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 1004, "dur": 1,
     "args": {"device": 0, "stream": 7, "correlation": 13, "bytes": 64}},
    {"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event", "pid": 0, "tid": 7, "ts": 1005, "dur": 1,
     "args": {"cuda_sync_kind": "Stream Wait Event", "stream": 7, "device": 0, "correlation": 14,
              "wait_on_stream": 9, "wait_on_cuda_event_id": 3}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL(x)", "pid": 0, "tid": 8, "ts": 900, "dur": 50,
     "args": {"device": 0, "stream": 8, "correlation": 15}},
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 100, "tid": 101, "ts": 890, "dur": 5,
     "args": {"Collective name": "allgather", "In msg nelems": 10, "Out msg nelems": 80, "Group size": 8,
              "dtype": "BFloat16", "Comms Id": 18446744073709551615}},
    {"ph": "X", "cat": "cpu_op", "name": "no timestamp", "pid": 100, "tid": 101},
  ],
  "baseTimeNanoseconds": 1700000000000000000,
  "displayTimeUnit": "ms"
})json";

} // namespace tuneup::test::kineto

#define REQUIRE_TRACES() TUNEUP_REQUIRE_SHARED_TRACES(::tuneup::test::kineto::kTraces)
