// The trace model's pieces: exact decimal numbers, the string table, the TraceBuilder (sorting and
// linking rows), input shapes, and format detection by content.

#include "import/decimal_text.h"
#include "import/format_detect.h"
#include "import/large_buffer.h"
#include "kineto_test_support.h"
#include "model/sort_runs.h"
#include "model/trace_builder.h"

#include <algorithm>
#include <cstring>
#include <gtest/gtest.h>
#include <map>

using namespace tuneup::analysis;
using namespace tuneup::test::kineto;

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

// Kineto's integer timestamps in microseconds have 16 digits, 19 in nanoseconds; fractions of up to 19
// digits; checked against arithmetic in 128 bits, at the edges of int64 and around rounding.
TEST(DecimalText, NineteenDigitTimestampsAndEveryFractionMatchWideArithmetic) {
    EXPECT_EQ(microsToNanos("1661203462611636"), 1661203462611636000); // HTA's trace_diff traces
    EXPECT_EQ(microsToNanos("9223372036854775"), 9223372036854775000);
    EXPECT_EQ(microsToNanos("9223372036854776"), std::nullopt); // 19 digits past int64
    EXPECT_EQ(microsToNanos("18446744073709551"), std::nullopt); // past uint64 once scaled
    EXPECT_EQ(microsToNanos("-9223372036854775.808"), INT64_MIN);
    EXPECT_EQ(microsToNanos("1.9999999999999999995"), 2000); // 20 digits: the general path
    EXPECT_EQ(microsToNanos("0.0005"), 1);
    EXPECT_EQ(microsToNanos("9999999999999999.9995"), std::nullopt);
    EXPECT_EQ(scaledDecimal("9999999999999999999", 0), std::nullopt); // 19 nines: within uint64, not int64
    EXPECT_EQ(scaledDecimal("999999999999999999.5", 0), 1000000000000000000);
    EXPECT_EQ(scaledDecimal("0.9999999999999999995", 19), std::nullopt);
    EXPECT_EQ(scaledDecimal("0.5", 19), 5000000000000000000);

    __extension__ typedef __int128 i128;
    uint64_t state = 12345;
    auto next = [&state] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
    for (int n = 0; n < 20000; ++n) {
        const int digits = 1 + int(next() >> 59) % 19, fraction = int(next() >> 60) % (digits + 1);
        const int scale = int(next() >> 61) % 8;
        std::string text = next() % 4 == 0 ? "-" : "";
        i128 value = 0;
        for (int d = 0; d < digits; ++d) {
            if (d == digits - fraction && fraction > 0) text += '.';
            const int digit = int(next() >> 60) % 10;
            text += char('0' + digit);
            value = value * 10 + digit;
        }
        // value * 10^(scale - fraction), rounded half away from zero.
        for (int k = fraction; k < scale; ++k)
            value *= 10;
        if (fraction > scale) {
            i128 divisor = 1;
            for (int k = scale; k < fraction; ++k)
                divisor *= 10;
            const i128 rest = value % divisor;
            value = value / divisor + (rest * 2 >= divisor ? 1 : 0);
        }
        if (text[0] == '-') value = -value;
        const bool fits = value >= INT64_MIN && value <= INT64_MAX;
        const auto got = scaledDecimal(text, scale);
        ASSERT_EQ(got.has_value(), fits) << text << " scale " << scale;
        if (fits) {
            ASSERT_EQ(*got, int64_t(value)) << text << " scale " << scale;
        }
    }
}

TEST(DecimalText, UnsignedIdsKeepAll64Bits) {
    EXPECT_EQ(parseUnsigned("10159970886766084423"), 10159970886766084423ull); // > 2^63
    EXPECT_EQ(parseUnsigned("18446744073709551615"), UINT64_MAX);
    EXPECT_EQ(parseUnsigned("18446744073709551616"), std::nullopt);
    EXPECT_EQ(parseUnsigned("0x1F"), 31u);
    EXPECT_EQ(parseUnsigned("-1"), std::nullopt);
    EXPECT_EQ(parseInteger("-42"), -42);
}

// Rows nearly in order (runs of a thread's events) are sorted by merging their runs; either way the result is
// std::stable_sort's, ties in their first order.
TEST(SortRuns, MergingRunsSortsAsStableSortDoes) {
    uint64_t state = 99;
    auto next = [&state] { return state = state * 6364136223846793005ull + 1442695040888963407ull; };
    for (size_t runs : { size_t(1), size_t(2), size_t(3), size_t(7), size_t(64), size_t(1000) }) {
        std::vector<std::pair<int, int>> rows; // (key, arrival): sorted by key only
        for (size_t r = 0; r < runs; ++r) {
            int key = int(next() >> 58);
            for (int i = 0; i < 50; ++i) {
                key += int(next() >> 62); // non-decreasing inside a run, with ties
                rows.emplace_back(key, int(rows.size()));
            }
        }
        const auto byKey = [](const auto& a, const auto& b) { return a.first < b.first; };
        std::vector<std::pair<int, int>> expected = rows;
        std::stable_sort(expected.begin(), expected.end(), byKey);
        std::vector<std::pair<int, int>> merged = rows;
        const bool took = mergeRuns(merged, byKey, runs + 1);
        EXPECT_TRUE(took) << runs << " runs";
        EXPECT_EQ(merged, expected) << runs << " runs";
        std::vector<std::pair<int, int>> refused = rows;
        if (runs > 1) {
            EXPECT_FALSE(mergeRuns(refused, byKey, runs - 1)) << "more runs than allowed";
            EXPECT_EQ(refused, rows) << "left as they were";
        }
        std::vector<std::pair<int, int>> sorted = rows;
        stableSortRuns(sorted, byKey);
        EXPECT_EQ(sorted, expected) << runs << " runs";
    }
}

// Buffers for windows and chunks: uninitialised, usable to the last byte, on 2 MiB boundaries from 2 MiB on
// (so that huge pages can back them), freed with free().
TEST(LargeBuffer, WholeHugePagesFromTwoMebibytes) {
    for (size_t bytes : { size_t(0), size_t(1), size_t(4096), (size_t(2) << 20) - 1, size_t(2) << 20,
             (size_t(4) << 20) - 66, (size_t(9) << 20) + 1 }) {
        LargeBuffer buffer = allocateLargeBuffer(bytes);
        ASSERT_NE(buffer.get(), nullptr) << bytes;
        if (bytes >= (size_t(2) << 20)) {
            EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.get()) % (size_t(2) << 20), 0u) << bytes;
        }
        if (bytes > 0) {
            std::memset(buffer.get(), 'x', bytes);
            EXPECT_EQ(buffer[bytes - 1], 'x');
        }
    }
}

// ---- model pieces ----------------------------------------------------------------------------------

TEST(StringTable, InternsOnceAndKeepsViewsValid) {
    StringTable t;
    EXPECT_EQ(t.intern(""), kEmptyString);
    const StringId a = t.intern("aten::mm");
    const std::string_view view = t.get(a);
    std::vector<StringId> ids;
    ids.reserve(100001);
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
    EXPECT_EQ(t.size(), 1u); // NOLINT(bugprone-use-after-move): moved-from, a table is empty but usable
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
