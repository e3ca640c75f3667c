// The trace model, TraceBuilder, format detection and the Kineto JSON importer.
//
// Expected figures for the real traces in ../shared/traces were derived independently of this
// importer, with Python's json module (numbers read as decimal.Decimal, never as float), e.g.
//   zcat FILE | python3 -c 'import json,sys,decimal; d=json.load(sys.stdin, parse_float=decimal.Decimal); ...'
// counting complete ("ph": "X") events per category. The exact scripts are quoted next to each figure.

#include "import/decimal_text.h"
#include "import/format_detect.h"
#include "import/import_error.h"
#include "import/kineto_json.h"
#include "model/trace_builder.h"
#include "shared_traces.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iostream>
#include <map>
#include <sstream>
#include <zlib.h>

namespace fs = std::filesystem;
using namespace tuneup::analysis;

namespace {

const fs::path kTraces = TUNEUP_SHARED_TRACES;

#define REQUIRE_TRACES() TUNEUP_REQUIRE_SHARED_TRACES(kTraces)

TraceModel load(const std::string& relative) {
    return importKinetoJson((kTraces / relative).string());
}

std::string readFile(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

std::string gzipBytes(std::string_view text) {
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

ImportError importError(std::string_view bytes) {
    return expectImportError([&] { importKinetoJsonBytes(bytes, "test.json"); });
}

RowIndex findRow(const TraceModel& m, const std::vector<StringId>& names, std::string_view name) {
    for (size_t i = 0; i < names.size(); ++i)
        if (m.str(names[i]) == name) return static_cast<RowIndex>(i);
    return kNoRow;
}

size_t countPrefix(const TraceModel& m, const std::vector<StringId>& names, std::string_view prefix) {
    return static_cast<size_t>(
        std::count_if(names.begin(), names.end(), [&](StringId id) { return m.str(id).starts_with(prefix); }));
}

} // namespace

// ---- exact numbers ---------------------------------------------------------------------------------

TEST(DecimalText, MicrosecondsBecomeExactNanoseconds) {
    EXPECT_EQ(microsToNanos("1712195495519689.047"), 1712195495519689047); // 19 digits: a double cannot hold it
    EXPECT_EQ(microsToNanos("63.813"), 63813);
    EXPECT_EQ(microsToNanos("100"), 100000);
    EXPECT_EQ(microsToNanos("0"), 0);
    EXPECT_EQ(microsToNanos("-2.5"), -2500);
    EXPECT_EQ(microsToNanos("1.2345"), 1235); // halves round away from zero
    EXPECT_EQ(microsToNanos("-1.2345"), -1235);
    EXPECT_EQ(microsToNanos("1.2344"), 1234);
    EXPECT_EQ(microsToNanos("1e3"), 1000000);
    EXPECT_EQ(microsToNanos("1.5E-3"), 2);
    EXPECT_EQ(microsToNanos("4E-4"), 0);
    EXPECT_EQ(microsToNanos("0.000000000000000000000000000000000000001"), 0);
    EXPECT_EQ(microsToNanos("9223372036854775.807"), INT64_MAX);
    EXPECT_EQ(microsToNanos("9223372036854775.808"), std::nullopt); // beyond int64
    EXPECT_EQ(microsToNanos("1e30"), std::nullopt);
    for (std::string_view bad : { "", "-", ".", "abc", "NaN", "Infinity", "1.2.3", "1e", "12a", "--1" })
        EXPECT_EQ(microsToNanos(bad), std::nullopt) << bad;
}

TEST(DecimalText, UnsignedIdsKeepAll64Bits) {
    EXPECT_EQ(parseUnsigned("10159970886766084423"), 10159970886766084423ull); // > 2^63
    EXPECT_EQ(parseUnsigned("18446744073709551615"), UINT64_MAX);
    EXPECT_EQ(parseUnsigned("18446744073709551616"), std::nullopt);
    EXPECT_EQ(parseUnsigned("0x1F"), 31u);
    EXPECT_EQ(parseUnsigned("-1"), std::nullopt);
    EXPECT_EQ(parseInteger("-42"), -42);
}

// ---- model pieces ----------------------------------------------------------------------------------

TEST(StringTable, InternsOnceAndKeepsViewsValid) {
    StringTable t;
    EXPECT_EQ(t.intern(""), kEmptyString);
    const StringId a = t.intern("aten::mm");
    const std::string_view view = t.get(a);
    std::vector<StringId> ids;
    for (int i = 0; i < 100000; ++i)
        ids.push_back(t.intern("name " + std::to_string(i)));
    ids.push_back(t.intern(std::string(200000, 'x'))); // bigger than an arena chunk
    EXPECT_EQ(t.intern("aten::mm"), a);
    EXPECT_EQ(view, "aten::mm");
    EXPECT_EQ(view.data(), t.get(a).data()); // not moved by growth
    for (int i = 0; i < 100000; i += 997)
        EXPECT_EQ(t.get(ids[static_cast<size_t>(i)]), "name " + std::to_string(i));
    EXPECT_EQ(t.get(ids.back()).size(), 200000u);
    EXPECT_EQ(t.find("name 77"), ids[77]);
    EXPECT_EQ(t.find("absent"), std::nullopt);
    EXPECT_EQ(t.get(99999999), ""); // out of range reads as empty

    StringTable moved = std::move(t);
    EXPECT_EQ(moved.get(a), "aten::mm");
    EXPECT_EQ(t.size(), 1u); // moved-from: empty but usable
    EXPECT_EQ(t.intern("again"), 1u);
}

TEST(TraceBuilder, SortsTablesAndLinksRows) {
    TraceBuilder b(SourceFormat::Unknown, "synthetic");
    const ThreadIndex t = b.thread(10, 11);
    EXPECT_EQ(b.thread(10, 11), t);
    EXPECT_NE(b.thread(10, 12), t);
    b.setThreadName(10, 11, "main");
    b.setThreadName(0, 7, "stream 7"); // a thread with no events: not listed

    // Added out of order on purpose.
    Kernel k2;
    k2.startNs = 300, k2.endNs = 400, k2.correlation = 2, k2.name = b.intern("k2");
    Kernel k1;
    k1.startNs = 100, k1.endNs = 150, k1.correlation = 1, k1.externalId = 7, k1.name = b.intern("k1");
    const RowIndex k2Row = b.addKernel(k2);
    b.addKernel(k1);
    ApiCall a1;
    a1.startNs = 90, a1.endNs = 95, a1.thread = t, a1.correlation = 1, a1.externalId = 7,
    a1.name = b.intern("cudaLaunchKernel");
    ApiCall a2;
    a2.startNs = 290, a2.endNs = 295, a2.thread = t, a2.correlation = 2, a2.externalId = 8,
    a2.name = b.intern("cudaLaunchKernel");
    b.addApiCall(a2);
    b.addApiCall(a1);
    CpuOp inner;
    inner.startNs = 280, inner.endNs = 298, inner.thread = t, inner.externalId = 8, inner.name = b.intern("aten::mm");
    CpuOp outer;
    outer.startNs = 270, outer.endNs = 299, outer.thread = t, outer.externalId = 9,
    outer.name = b.intern("aten::linear");
    CpuOp first;
    first.startNs = 80, first.endNs = 96, first.thread = t, first.externalId = 7, first.name = b.intern("aten::add");
    b.addCpuOp(inner);
    b.addCpuOp(outer);
    b.addCpuOp(first);
    Collective c;
    c.startNs = 300, c.endNs = 400, c.origin = CollectiveOrigin::Kernel, c.eventRow = k2Row,
    c.name = b.intern("allreduce");
    b.addCollective(c);

    TraceModel m = b.finish();
    ASSERT_EQ(m.kernels.size(), 2u);
    EXPECT_EQ(m.str(m.kernels.name[0]), "k1");
    EXPECT_EQ(m.str(m.kernels.name[1]), "k2");
    EXPECT_EQ(m.apiCalls.startNs[0], 90);
    // kernel -> API call (correlation) -> CPU op (external id)
    EXPECT_EQ(m.kernels.apiCall[0], 0);
    EXPECT_EQ(m.kernels.apiCall[1], 1);
    EXPECT_EQ(m.str(m.cpuOps.name[static_cast<size_t>(m.kernels.cpuOp[0])]), "aten::add");
    EXPECT_EQ(m.str(m.cpuOps.name[static_cast<size_t>(m.kernels.cpuOp[1])]), "aten::mm"); // via the API call
    EXPECT_EQ(m.kernelByCorrelation(2), 1);
    EXPECT_EQ(m.kernelByCorrelation(99), std::nullopt);
    EXPECT_EQ(m.apiCallByCorrelation(1), 0);
    // nesting
    const RowIndex mm = findRow(m, m.cpuOps.name, "aten::mm");
    const RowIndex linear = findRow(m, m.cpuOps.name, "aten::linear");
    EXPECT_EQ(m.cpuOps.parent[static_cast<size_t>(mm)], linear);
    EXPECT_EQ(m.cpuOps.depth[static_cast<size_t>(mm)], 1);
    EXPECT_EQ(m.cpuOps.depth[static_cast<size_t>(linear)], 0);
    // collective rows follow their kernel through the sort
    ASSERT_EQ(m.collectives.size(), 1u);
    EXPECT_EQ(m.collectives.eventRow[0], 1);
    // names only for threads with events
    ASSERT_EQ(m.threads.size(), 2u);
    EXPECT_EQ(m.str(m.threads[t].name), "main");
    const auto span = m.span();
    ASSERT_TRUE(span);
    EXPECT_EQ(span->startNs, 80);
    EXPECT_EQ(span->endNs, 400);
}

// Lookups by id when ids do not follow time (several streams) and when rows share one (HTA rewrites).
TEST(TraceBuilder, LookupsFindIdsOutOfTimeOrderAndTheFirstOfSharedOnes) {
    TraceBuilder b(SourceFormat::Unknown, "synthetic");
    const uint64_t correlations[] = { 50, 10, 40, 10, 30, 0, 20 };
    for (int i = 0; i < 7; ++i) {
        Kernel k;
        k.startNs = 100 * i, k.endNs = 100 * i + 50, k.correlation = correlations[i];
        b.addKernel(k);
    }
    const TraceModel m = b.finish();
    EXPECT_EQ(m.kernelByCorrelation(50), 0);
    EXPECT_EQ(m.kernelByCorrelation(40), 2);
    EXPECT_EQ(m.kernelByCorrelation(20), 6);
    EXPECT_EQ(m.kernelByCorrelation(10), 1); // the first of the two rows with id 10
    EXPECT_EQ(m.kernelByCorrelation(0), std::nullopt); // 0 is "unknown", never a key
    EXPECT_EQ(m.kernelByCorrelation(35), std::nullopt);
    EXPECT_EQ(m.kernelByCorrelation(60), std::nullopt);
}

TEST(TraceModel, ParsesInputDimsAndTypes) {
    const auto dims = parseInputDims("[[2048,125],[125,320],[],[[1,2],[3]],[7]]");
    ASSERT_EQ(dims.size(), 5u);
    EXPECT_EQ(dims[0], (std::vector<int64_t> { 2048, 125 }));
    EXPECT_EQ(dims[1], (std::vector<int64_t> { 125, 320 }));
    EXPECT_TRUE(dims[2].empty());
    EXPECT_TRUE(dims[3].empty()); // a tensor list is not one shape
    EXPECT_EQ(dims[4], (std::vector<int64_t> { 7 }));
    EXPECT_TRUE(parseInputDims("").empty());
    EXPECT_TRUE(parseInputDims("[]").empty());
    const auto types = splitInputTypes("float,,Scalar");
    ASSERT_EQ(types.size(), 3u);
    EXPECT_EQ(types[1], "");
    EXPECT_EQ(dtypeBytes("BFloat16"), 2);
    EXPECT_EQ(dtypeBytes("Float8_e4m3fn"), 1);
    EXPECT_EQ(dtypeBytes("Mystery"), 0);
}

// ---- format detection ------------------------------------------------------------------------------

namespace {
TraceFileFormat detect(std::string_view bytes) {
    return detectFormat(
        std::span<const unsigned char>(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size()));
}
} // namespace

TEST(FormatDetect, RecognisesContentNotNames) {
    EXPECT_EQ(detect("  \n{\"traceEvents\": []}"), TraceFileFormat::KinetoJson);
    EXPECT_EQ(detect("\xEF\xBB\xBF[ {\"ph\":\"X\"}]"), TraceFileFormat::KinetoJson);
    EXPECT_EQ(detect("[]"), TraceFileFormat::KinetoJson);
    EXPECT_EQ(detect("{"), TraceFileFormat::KinetoJson); // too short to tell more
    EXPECT_EQ(detect(gzipBytes("{\"schemaVersion\": 1}")), TraceFileFormat::KinetoJson);
    EXPECT_EQ(detect(gzipBytes("hello")), TraceFileFormat::Unknown);
    EXPECT_EQ(detect("[1,2,3]"), TraceFileFormat::Unknown);
    EXPECT_EQ(detect("PK\x03\x04"), TraceFileFormat::Unknown);
    EXPECT_EQ(detect(""), TraceFileFormat::Unknown);

    std::string sqlite(100, '\0');
    std::memcpy(sqlite.data(), "SQLite format 3", 16);
    EXPECT_EQ(detect(sqlite), TraceFileFormat::NsysSqlite);
    sqlite[68] = 'T', sqlite[69] = 'U', sqlite[70] = 'N', sqlite[71] = 'E'; // tuneup's application_id
    EXPECT_EQ(detect(sqlite), TraceFileFormat::TuneupDb);
    EXPECT_EQ(detect(std::string_view(sqlite).substr(0, 20)), TraceFileFormat::NsysSqlite);
}

TEST(FormatDetect, RealFiles) {
    REQUIRE_TRACES();
    EXPECT_EQ(detectFileFormat((kTraces / "nvfuser/ee4fcf30/report1.sqlite").string()), TraceFileFormat::NsysSqlite);
    EXPECT_EQ(detectFileFormat((kTraces / "dynamicvit/nsys_profile.sqlite").string()), TraceFileFormat::NsysSqlite);
    EXPECT_EQ(detectFileFormat((kTraces / "pipit/pipit/tests/data/cloverleaf-nsys/cloverleaf_gpu_trace.csv").string()),
        TraceFileFormat::Unknown);
    EXPECT_EQ(detectFileFormat((kTraces / "param/et_replay/tests/inputs/resnet_kineto.json.gz").string()),
        TraceFileFormat::KinetoJson);
    EXPECT_EQ(detectFileFormat(
                  (kTraces / "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json")
                      .string()),
        TraceFileFormat::KinetoJson);
    const auto missing = expectImportError([] { detectFileFormat((kTraces / "no/such/file.json").string()); });
    EXPECT_EQ(missing.kind(), ImportError::Kind::NotFound);
}

// ---- synthetic JSON --------------------------------------------------------------------------------

namespace {
// Every feature in one small trace. Note the trailing comma after the last event (tolerated), the
// baseTimeNanoseconds after the events, nested unknown keys, and a flow whose end comes first.
constexpr std::string_view kSynthetic = R"json({
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
} // namespace

TEST(KinetoJson, SyntheticTraceFillsEveryTable) {
    for (bool compressed : { false, true }) {
        SCOPED_TRACE(compressed ? "gzip" : "plain");
        const std::string bytes = compressed ? gzipBytes(kSynthetic) : std::string(kSynthetic);
        const TraceModel m = importKinetoJsonBytes(bytes, "synthetic.json");
        constexpr int64_t base = 1700000000000000000;

        EXPECT_EQ(m.info.format, SourceFormat::KinetoJson);
        EXPECT_EQ(m.info.baseTimeNs, base);
        EXPECT_EQ(m.info.rank, 3);
        EXPECT_EQ(m.info.worldSize, 8);
        EXPECT_EQ(m.info.backend, "nccl");
        EXPECT_EQ(m.info.displayTimeUnit, "ms");
        EXPECT_EQ(m.info.metadataValue("host_name"), "node7");
        EXPECT_EQ(m.info.metadataValue("distributedInfo.nccl_version"), "2.21.5");
        EXPECT_EQ(m.info.vendor, GpuVendor::Nvidia);
        ASSERT_EQ(m.devices.size(), 1u);
        EXPECT_EQ(m.devices[0].name, "NVIDIA H100 80GB HBM3");
        EXPECT_EQ(m.devices[0].computeMajor, 9);
        EXPECT_EQ(m.devices[0].smCount, 132);
        EXPECT_EQ(m.devices[0].globalMemoryBytes, 85000000000);

        ASSERT_EQ(m.kernels.size(), 2u); // sorted: the NCCL kernel (900 µs) first
        EXPECT_EQ(m.str(m.kernels.name[0]), "ncclDevKernel_AllGather_RING_LL(x)");
        const Kernel k = m.kernels.row(1);
        EXPECT_EQ(k.startNs, base + 1000500);
        EXPECT_EQ(k.endNs, base + 1000500 + 2250);
        EXPECT_EQ(k.device, 0);
        EXPECT_EQ(k.stream, 7);
        EXPECT_EQ(k.gridX * k.gridY * k.gridZ, 8);
        EXPECT_EQ(k.blockX, 128);
        EXPECT_EQ(k.registersPerThread, 32);
        EXPECT_EQ(k.sharedMemoryBytes, 1024);
        ASSERT_NE(k.apiCall, kNoRow);
        EXPECT_EQ(m.str(m.apiCalls.name[static_cast<size_t>(k.apiCall)]), "cudaLaunchKernel");
        EXPECT_EQ(m.apiCalls.cbid[static_cast<size_t>(k.apiCall)], 211);
        ASSERT_NE(k.cpuOp, kNoRow);
        const CpuOp mm = m.cpuOps.row(static_cast<size_t>(k.cpuOp));
        EXPECT_EQ(m.str(mm.name), "aten::mm");
        EXPECT_EQ(m.str(mm.inputDims), "[[8,3],[3,5]]");
        EXPECT_EQ(m.str(mm.inputTypes), "float,float");
        EXPECT_EQ(mm.sequenceNumber, 4);
        EXPECT_EQ(m.str(m.threads[mm.thread].name), "main");
        ASSERT_EQ(m.processes.size(), 1u);
        EXPECT_EQ(m.processes[0].name, "python3");

        ASSERT_EQ(m.annotations.size(), 1u);
        EXPECT_EQ(m.str(m.annotations.name[0]), "ProfilerStep#1");
        ASSERT_EQ(m.memcpys.size(), 1u);
        EXPECT_EQ(m.memcpys.copyKind[0], CopyKind::HtoD);
        EXPECT_EQ(m.memcpys.srcKind[0], MemoryKind::Pageable);
        EXPECT_EQ(m.memcpys.dstKind[0], MemoryKind::Device);
        EXPECT_EQ(m.memcpys.bytes[0], 4096);
        ASSERT_EQ(m.memsets.size(), 1u);
        EXPECT_EQ(m.memsets.memoryKind[0], MemoryKind::Device);
        ASSERT_EQ(m.syncs.size(), 1u);
        EXPECT_EQ(m.syncs.type[0], SyncType::StreamWaitEvent);
        EXPECT_EQ(m.syncs.eventId[0], 3);
        EXPECT_EQ(m.syncs.waitStream[0], 9);

        ASSERT_EQ(m.collectives.size(), 2u);
        const Collective cpuSide = m.collectives.row(0); // 890 µs
        EXPECT_EQ(cpuSide.origin, CollectiveOrigin::CpuOp);
        EXPECT_EQ(m.str(m.cpuOps.name[static_cast<size_t>(cpuSide.eventRow)]), "record_param_comms");
        EXPECT_EQ(m.str(cpuSide.name), "allgather");
        EXPECT_EQ(cpuSide.inNelems, 10);
        EXPECT_EQ(cpuSide.outNelems, 80);
        EXPECT_EQ(cpuSide.groupSize, 8);
        EXPECT_EQ(cpuSide.elementBytes, 2);
        EXPECT_EQ(cpuSide.commsId, UINT64_MAX);
        const Collective gpuSide = m.collectives.row(1);
        EXPECT_EQ(gpuSide.origin, CollectiveOrigin::Kernel);
        EXPECT_EQ(gpuSide.eventRow, 0);
        EXPECT_EQ(m.str(gpuSide.name), "allgather"); // from the kernel name

        ASSERT_EQ(m.flows.size(), 1u);
        EXPECT_EQ(m.flows.startNs[0], base + 999000);
        EXPECT_EQ(m.flows.endNs[0], base + 1000500);
        EXPECT_EQ(m.flows.endTid[0], 7);

        ASSERT_EQ(m.pythonFunctions.size(), 1u); // python_function frames are kept
        EXPECT_EQ(m.str(m.pythonFunctions.name[0]), "train.py(1): step");
        EXPECT_EQ(m.stats.value("skipped_memory_events"), 1);
        EXPECT_EQ(m.stats.value("events_without_ts"), 1);
        EXPECT_EQ(m.stats.unknownCategories.at("mystery"), 1);
        EXPECT_EQ(m.stats.eventsRead, 17u);
        EXPECT_EQ(m.stats.bytesRead, kSynthetic.size());
    }
}

TEST(KinetoJson, LegacyTopLevelArray) {
    // The 2020 form: no wrapper, capitalised categories, string tids, "stream N" GPU rows.
    constexpr std::string_view text = R"json([
      {"ph": "X", "cat": "Operator", "name": "ProfilerStep#3", "pid": 1, "tid": "2263107392", "ts": 10, "dur": 100,
       "args": {"Input dims": [], "External id": 1}},
      {"ph": "X", "cat": "Operator", "name": "aten::addmm", "pid": 1, "tid": "2263107392", "ts": 11, "dur": 10,
       "args": {"Input dims": [[1000], [32, 2048], [2048, 1000], [], []], "Input type": [], "External id": 2}},
      {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": "2263107392", "ts": 12, "dur": 2,
       "args": {"cbid": 211, "correlation": 5, "external id": 2}},
      {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_tn", "pid": 0, "tid": "stream 7", "ts": 20, "dur": 5,
       "args": {"correlation": 5, "external id": 2}},
      {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": "stream 7", "ts": 30, "dur": 1,
       "args": {"device": 0, "stream": 7, "bytes": 128}}
    ])json";
    const TraceModel m = importKinetoJsonBytes(text, "legacy.json");
    EXPECT_TRUE(m.info.legacyArrayForm);
    ASSERT_EQ(m.annotations.size(), 1u);
    EXPECT_EQ(m.str(m.annotations.name[0]), "ProfilerStep#3");
    ASSERT_EQ(m.cpuOps.size(), 1u);
    EXPECT_EQ(m.str(m.cpuOps.inputDims[0]), "[[1000],[32,2048],[2048,1000],[],[]]");
    EXPECT_EQ(m.cpuOps.inputTypes[0], kEmptyString);
    EXPECT_EQ(m.threads[m.cpuOps.thread[0]].tid, 2263107392);
    ASSERT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.kernels.stream[0], 7);
    EXPECT_EQ(m.kernels.device[0], 0);
    EXPECT_EQ(m.kernels.apiCall[0], 0);
    EXPECT_EQ(m.kernels.cpuOp[0], 0);
    EXPECT_EQ(m.memcpys.srcKind[0], MemoryKind::Pinned);
}

TEST(KinetoJson, EmptyTraceIsValid) {
    const TraceModel m = importKinetoJsonBytes(R"({"traceEvents": []})", "empty-events.json");
    EXPECT_EQ(m.eventCount(), 0u);
    EXPECT_FALSE(m.hasGpuActivity());
    ASSERT_FALSE(m.stats.notes.empty());
    EXPECT_NE(m.stats.notes[0].find("CPU-only"), std::string::npos);
}

TEST(KinetoJson, NonObjectEventsAreCountedNotFatal) {
    const TraceModel m = importKinetoJsonBytes(R"({"traceEvents": [1, "x", [2], {"ph": "B"}]})", "odd.json");
    EXPECT_EQ(m.stats.value("skipped_non_object_events"), 3);
    EXPECT_EQ(m.stats.value("skipped_begin_end_events"), 1);
}

TEST(KinetoJson, NanAndInfinityAreTolerated) {
    // Python's json writes NaN/Infinity (e.g. an occupancy of NaN); a timestamp cannot be one.
    const TraceModel m = importKinetoJsonBytes(R"({"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 1,
         "args": {"est. achieved occupancy %": NaN, "warps per SM": -Infinity, "device": 0}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": NaN, "dur": 1}]})",
        "nan.json");
    EXPECT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.stats.value("events_without_ts"), 1);
}

TEST(KinetoJson, ThreadedAndInlineReadingAgree) {
    // A text bigger than a chunk, so that chunk boundaries fall inside tokens.
    std::string text = R"({"traceEvents": [)";
    for (int i = 0; i < 40000; ++i)
        text += R"({"ph": "X", "cat": "kernel", "name": "kernel_with_a_long_name_)" + std::to_string(i % 97)
            + R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(i) + ".125, \"dur\": 0.5},";
    text += "{}]}";
    for (bool gzip : { false, true }) {
        const std::string bytes = gzip ? gzipBytes(text) : text;
        uint64_t progressed = 0;
        KinetoImportOptions inline_;
        inline_.background = false;
        inline_.progress = [&](uint64_t n) { progressed = n; };
        const TraceModel a = importKinetoJsonBytes(bytes, "a.json", inline_);
        const TraceModel b = importKinetoJsonBytes(bytes, "b.json");
        ASSERT_EQ(a.kernels.size(), 40000u);
        EXPECT_EQ(a.kernels.startNs, b.kernels.startNs);
        EXPECT_EQ(a.kernels.endNs, b.kernels.endNs);
        EXPECT_EQ(a.kernels.startNs[39999], 39999125);
        EXPECT_EQ(a.strings.size(), b.strings.size());
        EXPECT_EQ(progressed, text.size());
        EXPECT_GT(text.size(), size_t(2) << 20);
    }
}

// ---- windows: the events are cut into windows, parsed on several threads and merged ---------------------

namespace {

// Everything a model holds, as text (columns byte for byte): two imports agree when these do.
std::string modelText(const TraceModel& m) {
    std::ostringstream out;
    auto table = [&out](const char* name, const auto& t) {
        out << name << ' ' << t.size() << '\n';
        t.forEachColumn([&out](const auto& column) {
            out.write(reinterpret_cast<const char*>(column.data()),
                static_cast<std::streamsize>(column.size() * sizeof(column[0])));
        });
    };
    table("kernels", m.kernels);
    table("memcpys", m.memcpys);
    table("memsets", m.memsets);
    table("syncs", m.syncs);
    table("apiCalls", m.apiCalls);
    table("cpuOps", m.cpuOps);
    table("annotations", m.annotations);
    table("gpuAnnotations", m.gpuAnnotations);
    table("collectives", m.collectives);
    table("flows", m.flows);
    table("counterRanges", m.counterRanges);
    table("counterValues", m.counterValues);
    table("pythonFunctions", m.pythonFunctions);
    for (StringId id = 0; id < m.strings.size(); ++id)
        out << m.str(id) << '\n';
    for (const auto& t : m.threads)
        out << "thread " << t.pid << ' ' << t.tid << ' ' << t.name << '\n';
    for (const auto& p : m.processes)
        out << "process " << p.pid << ' ' << p.name << ' ' << p.labels << '\n';
    for (const auto& d : m.devices)
        out << "device " << d.id << ' ' << d.name << '\n';
    for (const auto& w : m.info.profilerWindows)
        out << "window " << w.startNs << ' ' << w.endNs << '\n';
    for (const auto& [k, v] : m.info.metadata)
        out << "meta " << k << '=' << v << '\n';
    out << "vendor " << int(m.info.vendor) << " base " << m.info.baseTimeNs.value_or(-1) << " legacy "
        << m.info.legacyArrayForm << " events " << m.stats.eventsRead << " bytes " << m.stats.bytesRead << '\n';
    for (const auto& e : m.stats.entries())
        out << "stat " << e.name << ' ' << e.value << '\n';
    for (const auto& [k, v] : m.stats.unknownCategories)
        out << "unknown " << k << ' ' << v << '\n';
    for (const auto& n : m.stats.notes)
        out << "note " << n << '\n';
    return out.str();
}

// Flows whose halves are far apart (in other windows), names given after the events they name and
// again later, string and numeric flow ids, and events of every kind.
std::string tracePartsMustMeet(int events) {
    std::string text = R"({"traceEvents": [)";
    for (int i = 0; i < events; ++i) {
        const std::string n = std::to_string(i), ts = std::to_string(i * 10) + ".5";
        text += R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i % 13)
            + R"(", "pid": 0, "tid": 7, "ts": )" + ts
            + R"(, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": )" + n + "}},\n";
        text += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": )"
            + std::to_string(i % 3) + R"(, "ts": )" + ts + R"(, "dur": 1, "args": {"correlation": )" + n + "}},";
        text += R"({"ph": "X", "cat": "cpu_op", "name": "op)" + std::to_string(i % 7)
            + R"(", "pid": 1, "tid": "main", "ts": )" + ts + R"(, "dur": 5, "args": {"Input Dims": [[)" + n
            + R"(, 2], []], "Input type": ["float"]}},)";
        if (i % 5 == 0)
            text += R"({"ph": "s", "id": )" + std::to_string(i / 5) + R"(, "pid": 1, "tid": 1, "ts": )" + ts
                + R"(, "cat": "ac2g"},)";
        if (i % 5 == 0 && i >= 100)
            text += R"({"ph": "f", "id": )" + std::to_string(i / 5 - 20) + R"(, "pid": 0, "tid": 7, "ts": )" + ts
                + R"(, "cat": "ac2g", "bp": "e"},)";
        if (i % 97 == 0)
            text += R"({"ph": "f", "id": "s)" + std::to_string(i)
                + R"(", "pid": 0, "tid": 7, "ts": 1, "cat": "fwdbwd"},)"
                + R"({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 0, "ts": )" + ts
                + R"(, "dur": 1, "args": {"Collective name": "allreduce", "dtype": "Float"}},)"
                + R"({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL", "pid": 0, "tid": 8, "ts": )"
                + ts + R"(, "dur": 1},)";
        if (i % 211 == 0)
            text += R"({"ph": "M", "name": "thread_name", "pid": 1, "tid": )" + std::to_string(i % 3)
                + R"(, "args": {"name": "thread )" + n + R"("}},)"
                + R"({"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python )" + n + R"("}},)"
                + R"({"ph": "X", "cat": "cuda_profiler_range", "name": "k1", "pid": 0, "tid": 7, "ts": )" + ts
                + R"(, "dur": 1, "args": {"metric.sum": )" + n + "}},";
    }
    text += R"({"ph": "s", "id": "s0", "pid": 1, "tid": 1, "ts": 2, "cat": "fwdbwd"}], "baseTimeNanoseconds": 1000})";
    return text;
}

} // namespace

TEST(KinetoJsonWindows, AnyWindowSizeGivesTheSameModel) {
    // Windows of one element each on small traces; on real ones, windows of a few events and the default.
    struct Input {
        std::string name, bytes;
        std::vector<size_t> windowBytes;
    };
    std::vector<Input> inputs = { { "synthetic.json", std::string(kSynthetic), { 1, 100, 0 } },
        { "parts.json", tracePartsMustMeet(500), { 1, 1000 } },
        { "parts.json.gz", gzipBytes(tracePartsMustMeet(3000)), { 5000, 0 } } };
    if (fs::is_directory(kTraces))
        for (const char* relative :
            { "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
                "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json",
                "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/"
                "worker0_span1.pt.trace.json.gz" })
            inputs.push_back({ relative, readFile(kTraces / relative), { 5000, 0 } });
    for (const auto& [name, bytes, sizes] : inputs) {
        SCOPED_TRACE(name);
        KinetoImportOptions whole; // one window, read on this thread: as the importer read before windows
        whole.background = false;
        whole.windowBytes = size_t(1) << 40;
        const std::string expected = modelText(importKinetoJsonBytes(bytes, name, whole));
        EXPECT_GT(expected.size(), 1000u);
        for (size_t windowBytes : sizes)
            for (int threads : { 0, 1, 3 }) {
                KinetoImportOptions options;
                options.windowBytes = windowBytes;
                options.background = threads > 0;
                options.parsingThreads = threads;
                EXPECT_EQ(modelText(importKinetoJsonBytes(bytes, name, options)), expected)
                    << windowBytes << " bytes per window, " << threads << " threads";
            }
    }
    const TraceModel m = importKinetoJsonBytes(tracePartsMustMeet(3000), "parts.json");
    EXPECT_EQ(m.flows.size(), 580u + 1u); // starts 0..579 met their ends 100 events later; "s0" at the end
    EXPECT_EQ(m.stats.value("flows_unpaired"), 20 + 30); // starts 580..599, string ends but "s0"
    EXPECT_EQ(m.processes.at(0).name, "python 2954"); // the last name given
    EXPECT_EQ(m.cpuOps.size(), 3000u + 31u);
}

// Small enough for TSan (label "threads"): windows handed to three workers, parts merged in order,
// and a failing window among others in flight.
TEST(KinetoJsonThreads, WindowsOnSeveralThreadsAgree) {
    const std::string text = tracePartsMustMeet(1500);
    KinetoImportOptions whole;
    whole.background = false;
    whole.windowBytes = size_t(1) << 40;
    const std::string expected = modelText(importKinetoJsonBytes(text, "parts.json", whole));
    KinetoImportOptions threaded;
    threaded.windowBytes = 4096;
    threaded.parsingThreads = 3;
    EXPECT_EQ(modelText(importKinetoJsonBytes(gzipBytes(text), "parts.json", threaded)), expected);

    std::string bad = text;
    const size_t at = bad.find("\"ts\"", bad.size() / 2);
    bad[at + 4] = ' '; // "ts" 123: the first of several errors
    bad[bad.size() - 100] = '!';
    const ImportError e = expectImportError([&] { importKinetoJsonBytes(bad, "bad.json", threaded); });
    EXPECT_EQ(e.kind(), ImportError::Kind::Malformed) << e.what();
    EXPECT_EQ(e.offset(), at + 6) << e.what(); // at the value that follows without a colon
}

TEST(KinetoJsonWindows, ErrorsInALaterWindowKeepTheirOffset) {
    const std::string text = tracePartsMustMeet(20000);
    ASSERT_GT(text.size(), size_t(4) << 20);
    KinetoImportOptions small;
    small.windowBytes = 64 * 1024;
    for (bool gzip : { false, true }) {
        SCOPED_TRACE(gzip ? "gzip" : "plain");
        std::string bad = text;
        const size_t at = bad.find("\"cat\"", bad.size() * 3 / 4);
        bad[at + 5] = ';'; // "cat"; "kernel"
        const ImportError e
            = expectImportError([&] { importKinetoJsonBytes(gzip ? gzipBytes(bad) : bad, "bad.json", small); });
        EXPECT_EQ(e.kind(), ImportError::Kind::Malformed) << e.what();
        EXPECT_EQ(e.offset(), at + 5) << e.what();
        std::string before = bad.substr(at + 5 - 32, 32);
        std::replace(before.begin(), before.end(), '\n', ' '); // as messages show control bytes
        EXPECT_NE(std::string(e.what()).find(R"(near ")" + before + "<HERE>; "), std::string::npos) << e.what();

        const std::string cut = text.substr(0, text.size() * 2 / 3);
        const ImportError t
            = expectImportError([&] { importKinetoJsonBytes(gzip ? gzipBytes(cut) : cut, "cut.json", small); });
        EXPECT_EQ(t.kind(), ImportError::Kind::Truncated) << t.what();
        EXPECT_EQ(t.offset(), cut.size()) << t.what();
    }
    // A '}' in place of the array's ']': reported where it is, as by one parser reading all.
    std::string wrong = text;
    wrong[wrong.rfind(']')] = '}';
    const ImportError w = expectImportError([&] { importKinetoJsonBytes(wrong, "wrong.json", small); });
    EXPECT_EQ(w.kind(), ImportError::Kind::Malformed);
    EXPECT_EQ(w.offset(), text.rfind(']'));
    EXPECT_NE(std::string(w.what()).find("Missing a comma or ']' after an array element"), std::string::npos)
        << w.what();
}

TEST(KinetoJsonWindows, ProgressAboutOncePerMiB) {
    const std::string text = tracePartsMustMeet(20000);
    std::vector<uint64_t> seen;
    KinetoImportOptions options;
    options.progress = [&seen](uint64_t bytes) { seen.push_back(bytes); };
    importKinetoJsonBytes(gzipBytes(text), "progress.json.gz", options);
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back(), text.size());
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_GE(seen.size(), text.size() >> 20);
    EXPECT_LE(seen.size(), (text.size() >> 20) + 3);
}

// ---- bad input --------------------------------------------------------------------------------------

TEST(KinetoJsonErrors, MalformedJsonNamesTheByteOffset) {
    {
        const std::string text = R"({"traceEvents": [{"ph" "X"}]})";
        const ImportError e = importError(text);
        EXPECT_EQ(e.kind(), ImportError::Kind::Malformed);
        EXPECT_EQ(e.offset(), text.find("\"X\""));
        EXPECT_EQ(e.path(), "test.json");
        EXPECT_NE(
            std::string(e.what()).find("test.json: at byte 23: malformed JSON: Missing a colon"), std::string::npos)
            << e.what();
    }
    {
        const std::string text = R"({"traceEvents": [{"ph": "X", "ts": 12,, "dur": 1}]})";
        const ImportError e = importError(text);
        EXPECT_EQ(e.kind(), ImportError::Kind::Malformed);
        EXPECT_EQ(e.offset(), text.find(",,") + 1);
        EXPECT_NE(std::string(e.what()).find("near"), std::string::npos) << e.what();
    }
    {
        // The same error inside gzip: the offset counts the uncompressed text.
        const std::string text = R"({"traceEvents": [{"ph": "X", "ts": 12}}]})";
        const ImportError e = expectImportError([&] { importKinetoJsonBytes(gzipBytes(text), "test.json.gz"); });
        EXPECT_EQ(e.kind(), ImportError::Kind::Malformed);
        EXPECT_EQ(e.offset(), text.find("}}") + 1);
        EXPECT_NE(std::string(e.what()).find("of the uncompressed data"), std::string::npos) << e.what();
    }
}

TEST(KinetoJsonErrors, TruncatedJson) {
    const std::string text = R"({"traceEvents": [{"ph": "X", "ts": 1)";
    const ImportError e = importError(text);
    EXPECT_EQ(e.kind(), ImportError::Kind::Truncated);
    EXPECT_EQ(e.offset(), text.size());
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
}

TEST(KinetoJsonErrors, NotATrace) {
    for (std::string_view text : { "42", "\"hello\"", "{\"foo\": 1}", "{\"traceEvents\": {}}", "{\"traceEvents\": 3}",
             "<html><body>Not found</body></html>",
             "\x7f"
             "ELF\x02\x01" }) {
        const ImportError e = importError(text);
        EXPECT_EQ(e.kind(), ImportError::Kind::NotATrace) << text << " -> " << e.what();
    }
    EXPECT_EQ(importError("").kind(), ImportError::Kind::Empty);
    EXPECT_EQ(importError(" \n\t ").kind(), ImportError::Kind::Empty);
    std::string sqlite(4096, '\0');
    std::memcpy(sqlite.data(), "SQLite format 3", 16);
    const ImportError e = importError(sqlite);
    EXPECT_EQ(e.kind(), ImportError::Kind::UnknownFormat);
    EXPECT_NE(std::string(e.what()).find("SQLite"), std::string::npos);
}

TEST(KinetoJsonErrors, DeepNestingDoesNotCrash) {
    const std::string text = "{\"traceEvents\": [{\"args\": {\"x\": " + std::string(200000, '[') + "]}}]}";
    EXPECT_EQ(importError(text).kind(), ImportError::Kind::Malformed);
    const std::string closed = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"args\": {\"x\": "
        + std::string(100000, '[') + std::string(100000, ']') + "}}]}";
    EXPECT_EQ(importKinetoJsonBytes(closed, "deep.json").kernels.size(), 1u);
}

TEST(KinetoJsonErrors, FilesThatCannotBeRead) {
    EXPECT_EQ(
        expectImportError([] { importKinetoJson("/nonexistent/trace.json"); }).kind(), ImportError::Kind::NotFound);
    EXPECT_EQ(expectImportError([] { importKinetoJson("/tmp"); }).kind(), ImportError::Kind::Unreadable);
}

TEST(KinetoJsonErrors, TruncatedGzipOfARealTrace) {
    REQUIRE_TRACES();
    const std::string raw
        = readFile(kTraces / "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    ASSERT_EQ(raw.size(), 1152519u);
    const std::string cut = raw.substr(0, raw.size() / 2);
    const ImportError e = expectImportError([&] { importKinetoJsonBytes(cut, "cut.json.gz"); });
    EXPECT_EQ(e.kind(), ImportError::Kind::Truncated) << e.what();
    // python3: len(zlib.decompressobj(16 + 15).decompress(raw[:len(raw)//2])) == 7229506
    EXPECT_EQ(e.offset(), 7229506u) << e.what();
    EXPECT_NE(std::string(e.what()).find("cut.json.gz: at byte 7229506 of the uncompressed data"), std::string::npos)
        << e.what();
}

TEST(KinetoJsonErrors, CorruptGzip) {
    const std::string text = "{\"traceEvents\": [" + std::string(100000, ' ') + "]}";
    std::string bytes = gzipBytes(text);
    bytes[bytes.size() - 6] ^= 0x55; // inside the CRC/length trailer
    const ImportError e = expectImportError([&] { importKinetoJsonBytes(bytes, "bad.json.gz"); });
    EXPECT_EQ(e.kind(), ImportError::Kind::Corrupt) << e.what();
    EXPECT_EQ(e.offset(), text.size());
    std::string middle = gzipBytes(std::string(kSynthetic) + std::string(50000, ' '));
    for (size_t i = 20; i < 40; ++i)
        middle[i] = static_cast<char>(0xFF);
    EXPECT_EQ(
        expectImportError([&] { importKinetoJsonBytes(middle, "bad2.json.gz"); }).kind(), ImportError::Kind::Corrupt);
}

// ---- the real traces ---------------------------------------------------------------------------------

namespace {
struct Expected {
    const char* path;
    size_t kernels, memcpys, memsets, syncs, apiCalls, cpuOps, annotations, gpuAnnotations, counterRanges, steps;
};
// From /tmp/survey/expected.py (python json, independent of this importer): per file, the "X" events
// by category: kernel|Kernel, gpu_memcpy|Memcpy, gpu_memset|Memset, cuda_sync, cuda_runtime|Runtime|
// cuda_driver, cpu_op|Operator (minus the 2020 record_function ranges), user_annotation (plus those
// ranges: names starting ProfilerStep#, enumerate(DataLoader)#, Optimizer., DistributedDataParallel.,
// or "## ... ##"), gpu_user_annotation, cuda_profiler_range, and ProfilerStep# ranges.
constexpr Expected kExpected[] = {
    { "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 14, 2, 0, 0, 21, 70, 3, 2, 0, 2 },
    { "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", 79, 16, 3, 41, 361, 359,
        8, 0, 0, 0 },
    { "hta/tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz", 4, 1, 0, 4, 12, 10, 1, 0, 0, 1 },
    { "hta/tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz", 3, 0, 3, 5, 39, 6, 0, 0, 0,
        0 },
    { "hta/tests/data/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz", 79, 16, 3, 41, 331,
        359, 8, 0, 0, 0 },
    { "hta/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz", 0, 0, 0, 0, 1862, 375, 8, 0, 77,
        0 },
    { "hta/tests/data/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz", 1, 0, 0, 0, 0, 1, 0, 0, 0,
        0 },
    { "hta/tests/data/nccl_parser_config/nccl_data.json.gz", 2700, 960, 114, 0, 8740, 14346, 42, 30, 0, 3 },
    { "hta/tests/data/negative_queue_length_values_check/rank0.json.gz", 6080, 1390, 277, 0, 33924, 25185, 360, 0, 0,
        5 },
    { "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 4350, 1600, 145, 0, 15329,
        23910, 70, 15, 0, 5 },
    { "hta/tests/data/rank_non_gpu/rank_non_gpu.json.gz", 0, 0, 0, 0, 0, 2424, 43, 0, 0, 1 },
    { "hta/tests/data/trace_diff/control/control.json.gz", 8568, 228, 654, 0, 24692, 40506, 288, 0, 0, 6 },
    { "hta/tests/data/trace_diff/test/test.json.gz", 9876, 4856, 900, 0, 21167, 31236, 288, 0, 0, 6 },
    { "hta/tests/data/trace_filter/sampled_rank-0.json.gz", 1154, 40, 10, 0, 1204, 2329, 73, 0, 0, 2 },
    { "hta/tests/data/trace_filter/sampled_rank-1.json.gz", 1104, 40, 10, 0, 1154, 2302, 65, 0, 0, 2 },
    { "hta/tests/data/triton_example/triton_example.json.gz", 1, 0, 0, 0, 2, 3, 1, 0, 0, 1 },
    { "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz", 130, 10, 0, 0, 180, 643, 10, 10, 0,
        0 },
    { "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/bert_newAPI_fp16_ddp_4dataloader/"
      "worker0_round1.pt.trace.json.gz",
        6277, 434, 416, 0, 8755, 34436, 5, 0, 0, 2 },
    { "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/bert_newAPI_fp16_ddp_4dataloader/"
      "worker1_round1.pt.trace.json.gz",
        6277, 434, 416, 0, 8755, 34526, 5, 0, 0, 2 },
    { "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz", 6205,
        1291, 183, 0, 7971, 53586, 16, 0, 0, 4 },
    { "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker1_span1.pt.trace.json.gz", 7801,
        1424, 220, 0, 10024, 53700, 16, 0, 0, 4 },
    { "param/et_replay/tests/inputs/resnet_kineto.json.gz", 9628, 123, 362, 0, 25928, 39416, 90, 0, 0, 0 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json", 245, 16, 0, 0, 525, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json", 310, 16, 0, 0, 527, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker2_step_12.1694128201554.pt.trace.json", 246, 16, 0, 0, 513, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker3_step_12.1694128201557.pt.trace.json", 315, 16, 6, 0, 541, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker4_step_12.1694128201547.pt.trace.json", 251, 16, 6, 0, 523, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker5_step_12.1694128201549.pt.trace.json", 245, 16, 0, 0, 505, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker6_step_12.1694128201553.pt.trace.json", 246, 16, 0, 0, 515, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker7_step_12.1694128201553.pt.trace.json", 246, 16, 0, 0, 504, 1633,
        40, 0, 0, 1 },
    { "tracelens/tests/traces/b200/eager_trace.json.gz", 768, 161, 0, 0, 1372, 4809, 3, 3, 0, 0 },
    { "tracelens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz", 154, 0, 2, 0, 383, 1258, 1, 1, 0,
        1 },
    { "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", 1465, 1, 241, 0, 1922, 4186, 1, 1, 0, 1 },
    { "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz", 446, 2, 86, 0, 929, 3540,
        1, 1, 0, 1 },
    { "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz", 60, 1, 0, 0, 132, 479, 1, 1, 0, 1 },
};
} // namespace

TEST(KinetoJsonRealTraces, CountsMatchAnIndependentReading) {
    REQUIRE_TRACES();
    for (const Expected& x : kExpected) {
        SCOPED_TRACE(x.path);
        const TraceModel m = load(x.path);
        EXPECT_EQ(m.kernels.size(), x.kernels);
        EXPECT_EQ(m.memcpys.size(), x.memcpys);
        EXPECT_EQ(m.memsets.size(), x.memsets);
        EXPECT_EQ(m.syncs.size(), x.syncs);
        EXPECT_EQ(m.apiCalls.size(), x.apiCalls);
        EXPECT_EQ(m.cpuOps.size(), x.cpuOps);
        EXPECT_EQ(m.annotations.size(), x.annotations);
        EXPECT_EQ(m.gpuAnnotations.size(), x.gpuAnnotations);
        EXPECT_EQ(m.counterRanges.size(), x.counterRanges);
        EXPECT_EQ(countPrefix(m, m.annotations.name, "ProfilerStep#"), x.steps);
        // Every table is sorted by start time.
        EXPECT_TRUE(std::is_sorted(m.kernels.startNs.begin(), m.kernels.startNs.end()));
        EXPECT_TRUE(std::is_sorted(m.cpuOps.startNs.begin(), m.cpuOps.startNs.end()));
        EXPECT_TRUE(std::is_sorted(m.annotations.startNs.begin(), m.annotations.startNs.end()));
        EXPECT_TRUE(m.stats.unknownCategories.empty()) << m.stats.unknownCategories.begin()->first;
    }
}

TEST(KinetoJsonRealTraces, EveryKinetoFileImports) {
    REQUIRE_TRACES();
    // Recognised by content: every file of the folder is looked at, whatever its name.
    std::map<std::string, bool> listed;
    for (const Expected& x : kExpected)
        listed[x.path] = false;
    size_t kineto = 0;
    for (const auto& entry : fs::recursive_directory_iterator(kTraces)) {
        if (!entry.is_regular_file()) continue;
        const std::string relative = fs::relative(entry.path(), kTraces).string();
        if (detectFileFormat(entry.path().string()) != TraceFileFormat::KinetoJson) continue;
        ++kineto;
        SCOPED_TRACE(relative);
        EXPECT_NO_THROW({
            const TraceModel m = importKinetoJson(entry.path().string());
            EXPECT_GT(m.eventCount(), 0u);
        });
        auto it = listed.find(relative);
        EXPECT_NE(it, listed.end()) << "a Kineto file without expected counts: add it to kExpected";
        if (it != listed.end()) it->second = true;
    }
    EXPECT_EQ(kineto, std::size(kExpected));
    for (const auto& [path, seen] : listed)
        EXPECT_TRUE(seen) << path << " was not recognised as Kineto JSON";
}

TEST(KinetoJsonRealTraces, NanosecondResolutionIsExact) {
    REQUIRE_TRACES();
    const TraceModel m = load("hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    EXPECT_EQ(m.info.displayTimeUnit, "ns");
    EXPECT_FALSE(m.info.baseTimeNs);
    // python: first X event: "autograd::engine::evaluate_function: DivBackward1", External id 2049,
    // ts 1712195495519689.047, dur 63.813 -> int(ts * 1000) with Decimal
    const auto op = m.cpuOpByExternalId(2049);
    ASSERT_TRUE(op);
    const CpuOp row = m.cpuOps.row(static_cast<size_t>(*op));
    EXPECT_EQ(m.str(row.name), "autograd::engine::evaluate_function: DivBackward1");
    EXPECT_EQ(row.startNs, 1712195495519689047);
    EXPECT_EQ(row.endNs - row.startNs, 63813);
    // The first kernel in the file: correlation 135071, ts 1712195495505582.988, dur 4.928.
    const auto k = m.kernelByCorrelation(135071);
    ASSERT_TRUE(k);
    EXPECT_EQ(m.kernels.startNs[static_cast<size_t>(*k)], 1712195495505582988);
    EXPECT_EQ(m.kernels.endNs[static_cast<size_t>(*k)] - m.kernels.startNs[static_cast<size_t>(*k)], 4928);
    // Unknown top-level keys (Meta job facts) are kept as metadata, not errors.
    EXPECT_EQ(m.info.metadataValue("host_name"), "twshared39868.02.pnb3.facebook.com");
}

TEST(KinetoJsonRealTraces, BaseTimeIsAddedExactly) {
    REQUIRE_TRACES();
    const TraceModel m = load("hta/tests/data/nccl_parser_config/nccl_data.json.gz");
    EXPECT_EQ(m.info.baseTimeNs, 1711964646000000000);
    // python: the earliest kernel, correlation 19812, ts 4458676422880.181 -> base + 4458676422880181
    EXPECT_EQ(m.kernels.startNs[0], 1716423322422880181);
    EXPECT_EQ(m.kernels.correlation[0], 19812u);
    // distributedInfo and deviceProperties
    EXPECT_EQ(m.info.rank, 0);
    EXPECT_EQ(m.info.worldSize, 2);
    EXPECT_EQ(m.info.backend, "nccl");
    ASSERT_EQ(m.devices.size(), 8u);
    EXPECT_EQ(m.devices[0].name, "NVIDIA A100-PG509-200");
    EXPECT_EQ(m.devices[0].computeMajor, 8);
    EXPECT_EQ(m.devices[0].computeMinor, 0);
    EXPECT_EQ(m.devices[0].smCount, 108);
    EXPECT_EQ(m.devices[0].globalMemoryBytes, 42297524224);
    EXPECT_EQ(m.info.vendor, GpuVendor::Nvidia);
}

TEST(KinetoJsonRealTraces, CollectivesFromOpsAndNcclKernels) {
    REQUIRE_TRACES();
    const TraceModel m = load("hta/tests/data/nccl_parser_config/nccl_data.json.gz");
    // python: 27 record_param_comms cpu_ops (all with "Collective name"); 21 NCCL kernels (15
    // ncclKernel_AllReduce_RING_LL_Sum_float, 6 ncclKernel_Broadcast_RING_LL_Sum_int8_t), all with args.
    size_t ops = 0, kernels = 0, allreduceKernels = 0;
    for (size_t i = 0; i < m.collectives.size(); ++i) {
        if (m.collectives.origin[i] == CollectiveOrigin::CpuOp)
            ++ops;
        else {
            ++kernels;
            allreduceKernels += m.str(m.collectives.name[i]) == "allreduce";
            EXPECT_TRUE(
                m.str(m.kernels.name[static_cast<size_t>(m.collectives.eventRow[i])]).starts_with("ncclKernel_"));
        }
    }
    EXPECT_EQ(ops, 27u);
    EXPECT_EQ(kernels, 21u);
    EXPECT_EQ(allreduceKernels, 15u);
    // The earliest record_param_comms: broadcast of 53120 Float on a group of 2, ranks "[0, 1]".
    const Collective first = m.collectives.row(0);
    EXPECT_EQ(first.origin, CollectiveOrigin::CpuOp);
    EXPECT_EQ(m.str(first.name), "broadcast");
    EXPECT_EQ(first.inNelems, 53120);
    EXPECT_EQ(first.groupSize, 2);
    EXPECT_EQ(m.str(first.dtype), "Float");
    EXPECT_EQ(first.elementBytes, 4);
    EXPECT_EQ(m.str(first.groupRanks), "[0, 1]");
}

TEST(KinetoJsonRealTraces, LargeIntegerIds) {
    REQUIRE_TRACES();
    const TraceModel m = load("hta/tests/data/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz");
    // The file holds "Comms Id": 10159970886766084423 (> 2^63) on a record_param_comms op.
    ASSERT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.kernels.device[0], 0); // no args: device and stream from pid and tid
    EXPECT_EQ(m.kernels.stream[0], 0);
    EXPECT_EQ(m.kernels.startNs[0], 100000);
    ASSERT_EQ(m.collectives.size(), 2u); // the op, and the kernel by its name
    const Collective op = m.collectives.row(m.collectives.origin[0] == CollectiveOrigin::CpuOp ? 0 : 1);
    EXPECT_EQ(op.commsId, 10159970886766084423ull);
}

TEST(KinetoJsonRealTraces, CorrelationLinksKernelsToLaunches) {
    REQUIRE_TRACES();
    const TraceModel m = load("hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz");
    // python: all 79 kernels have a cuda_runtime with their correlation, all cudaLaunchKernel; one
    // kernel's External id matches a cpu_op's.
    size_t linked = 0;
    for (size_t i = 0; i < m.kernels.size(); ++i) {
        if (m.kernels.apiCall[i] == kNoRow) continue;
        ++linked;
        EXPECT_EQ(m.str(m.apiCalls.name[static_cast<size_t>(m.kernels.apiCall[i])]), "cudaLaunchKernel");
    }
    EXPECT_EQ(linked, 79u);
    // python: 16 "Memcpy HtoD (Pageable -> Device)" copies, 244403360 bytes in all.
    int64_t bytes = 0;
    for (size_t i = 0; i < m.memcpys.size(); ++i) {
        EXPECT_EQ(m.memcpys.copyKind[i], CopyKind::HtoD);
        EXPECT_EQ(m.memcpys.srcKind[i], MemoryKind::Pageable);
        bytes += m.memcpys.bytes[i];
    }
    EXPECT_EQ(bytes, 244403360);
    // python: cuda_sync_kind: 20 Stream Wait Event, 16 Stream Sync, 5 Context Sync.
    std::map<SyncType, int> syncs;
    for (SyncType t : m.syncs.type)
        ++syncs[t];
    EXPECT_EQ(syncs[SyncType::StreamWaitEvent], 20);
    EXPECT_EQ(syncs[SyncType::StreamSynchronize], 16);
    EXPECT_EQ(syncs[SyncType::ContextSynchronize], 5);
    // python: one CPU thread; 139 ac2g flows with both ends, 222 halves alone.
    EXPECT_EQ(m.threads.size(), 1u);
    EXPECT_EQ(m.flows.size(), 139u);
    EXPECT_EQ(m.stats.value("flows_unpaired"), 222);
}

TEST(KinetoJsonRealTraces, LegacyFormatFiles) {
    REQUIRE_TRACES();
    const TraceModel m = load(
        "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz");
    EXPECT_TRUE(m.info.legacyArrayForm);
    EXPECT_FALSE(m.info.rank); // no distributedInfo in 2020
    // python: memcpy names: 1280 DtoD (Device -> Device), 8 HtoD (Pinned -> Device), 3 DtoH (Device -> Pageable)
    int dtod = 0, pinnedHtoD = 0, pageableDtoH = 0;
    for (size_t i = 0; i < m.memcpys.size(); ++i) {
        dtod += m.memcpys.copyKind[i] == CopyKind::DtoD;
        pinnedHtoD += m.memcpys.copyKind[i] == CopyKind::HtoD && m.memcpys.srcKind[i] == MemoryKind::Pinned;
        pageableDtoH += m.memcpys.copyKind[i] == CopyKind::DtoH && m.memcpys.dstKind[i] == MemoryKind::Pageable;
    }
    EXPECT_EQ(dtod, 1280);
    EXPECT_EQ(pinnedHtoD, 8);
    EXPECT_EQ(pageableDtoH, 3);
    // python: kernels on streams 7 (6178) and 15 (27); 5557 of 6205 have a Runtime with their correlation.
    EXPECT_EQ(std::count(m.kernels.stream.begin(), m.kernels.stream.end(), 15), 27);
    EXPECT_EQ(std::count_if(m.kernels.apiCall.begin(), m.kernels.apiCall.end(), [](RowIndex r) { return r != kNoRow; }),
        5557);
    // python: ProfilerStep#5..#8; #5 at ts 1608033697195207 µs, dur 1925746 µs.
    const RowIndex step = findRow(m, m.annotations.name, "ProfilerStep#5");
    ASSERT_NE(step, kNoRow);
    EXPECT_EQ(m.annotations.startNs[static_cast<size_t>(step)], 1608033697195207000);
    EXPECT_EQ(
        m.annotations.endNs[static_cast<size_t>(step)] - m.annotations.startNs[static_cast<size_t>(step)], 1925746000);
    EXPECT_EQ(countPrefix(m, m.annotations.name, "Optimizer.zero_grad#"), 4u);
    EXPECT_EQ(countPrefix(m, m.annotations.name, "enumerate(DataLoader)#"), 4u);
    // "Input dims" (the older spelling) fills the same column.
    const RowIndex conv = findRow(m, m.cpuOps.name, "aten::cudnn_convolution");
    ASSERT_NE(conv, kNoRow);
    EXPECT_EQ(m.str(m.cpuOps.inputDims[static_cast<size_t>(conv)]), "[[32,3,224,224],[64,3,7,7],[],[],[],[],[],[],[]]");
}

TEST(KinetoJsonRealTraces, GemmShapes) {
    REQUIRE_TRACES();
    const TraceModel m = load("hta/tests/data/trace_filter/sampled_rank-1.json.gz");
    // python: aten::mm Input Dims counted: [[2048,125],[125,320]] x8, [[2048,110],[110,18030]] x6.
    std::map<std::string_view, int> shapes;
    for (size_t i = 0; i < m.cpuOps.size(); ++i)
        if (m.str(m.cpuOps.name[i]) == "aten::mm") ++shapes[m.str(m.cpuOps.inputDims[i])];
    EXPECT_EQ(shapes["[[2048,125],[125,320]]"], 8);
    EXPECT_EQ(shapes["[[2048,110],[110,18030]]"], 6);
    const auto dims = parseInputDims("[[2048,110],[110,18030]]");
    EXPECT_EQ(dims[1][1], 18030);
    EXPECT_EQ(m.info.worldSize, 128);
    EXPECT_TRUE(m.devices.empty()); // no deviceProperties in this file
}

TEST(KinetoJsonRealTraces, AmdCpuOnlyAndCounterRangeTraces) {
    REQUIRE_TRACES();
    {
        const TraceModel m = load("hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
        EXPECT_EQ(m.info.vendor, GpuVendor::Amd);
        ASSERT_EQ(m.devices.size(), 4u);
        EXPECT_EQ(m.devices[0].vendor, GpuVendor::Amd);
        EXPECT_EQ(m.devices[0].smCount, 104);
        EXPECT_EQ(std::count(m.kernels.device.begin(), m.kernels.device.end(), 2), 14); // python: all on device 2
        EXPECT_EQ(m.memcpys.bytes[0], -1); // ROCm copies carry no size
        EXPECT_EQ(m.memcpys.copyKind[0], CopyKind::HtoD);
        bool noted = false;
        for (const auto& n : m.stats.notes)
            noted |= n.find("AMD") != std::string::npos;
        EXPECT_TRUE(noted);
    }
    {
        const TraceModel m = load("hta/tests/data/rank_non_gpu/rank_non_gpu.json.gz");
        EXPECT_FALSE(m.hasGpuActivity());
        EXPECT_EQ(m.info.vendor, GpuVendor::Unknown);
        EXPECT_EQ(m.info.rank, 0);
        ASSERT_FALSE(m.stats.notes.empty());
        EXPECT_NE(m.stats.notes[0].find("CPU-only"), std::string::npos);
    }
    {
        const TraceModel m = load("hta/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz");
        EXPECT_TRUE(m.kernels.empty());
        ASSERT_EQ(m.counterRanges.size(), 77u);
        ASSERT_FALSE(m.stats.notes.empty());
        EXPECT_NE(m.stats.notes[0].find("no kernel activity, only counter ranges"), std::string::npos);
        // python: the "__missing__" range has 9 counters, ffma = 9119334400.
        const RowIndex missing = findRow(m, m.counterRanges.name, "__missing__");
        ASSERT_NE(missing, kNoRow);
        int counters = 0;
        for (size_t i = 0; i < m.counterValues.size(); ++i) {
            if (m.counterValues.range[i] != missing) continue;
            ++counters;
            if (m.str(m.counterValues.metric[i]) == "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum") {
                EXPECT_EQ(m.counterValues.value[i], 9119334400.0);
            }
        }
        EXPECT_EQ(counters, 9);
    }
}

TEST(KinetoJsonRealTraces, ImportSpeed) {
    REQUIRE_TRACES();
    // The largest trace here (34.8 MB of JSON, 1.8 MB gzip). Printed, not asserted: machines differ.
    const std::string path = (kTraces / "hta/tests/data/trace_diff/control/control.json.gz").string();
    double best = 1e9;
    uint64_t bytes = 0;
    for (int i = 0; i < 3; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const TraceModel m = importKinetoJson(path);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        bytes = m.stats.bytesRead;
    }
    const double mbps = static_cast<double>(bytes) / 1e6 / best;
    std::cout << "[ speed    ] control.json.gz: " << bytes << " bytes of JSON in " << best * 1000 << " ms = " << mbps
              << " MB/s\n";
    RecordProperty("kineto_import_mb_per_s", std::to_string(mbps));
    EXPECT_GT(mbps, 1.0);
}
