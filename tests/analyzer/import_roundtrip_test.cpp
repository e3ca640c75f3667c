// `tuneup import`'s path through the library: a Kineto trace and Nsight Systems exports from
// ../shared/traces written as tuneup files (export/tuneup_writer.h) and read back keep every table's rows
// and exact times; what the tuneup schema has no table for is counted in the file's stats.

#include "export/tuneup_writer.h"
#include "import/importer.h"
#include "model/trace_builder.h"
#include "shared_traces.h"
#include "temp_dir.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <numeric>
#include <tuple>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace tuneup::analysis;

namespace {

const fs::path kTraces = TUNEUP_SHARED_TRACES;

class ImportRoundTrip : public ::testing::TestWithParam<std::string> {
protected:
    tuneup::test::TempDir m_tmp { "import_roundtrip_test" };
    std::string m_dir = m_tmp.path();
};

template <class Table> int64_t totalDuration(const Table& t) {
    int64_t total = 0;
    for (size_t i = 0; i < t.size(); ++i)
        total += t.endNs[i] - t.startNs[i];
    return total;
}

TEST_P(ImportRoundTrip, EveryTableKeepsItsRows) {
    TUNEUP_REQUIRE_SHARED_TRACES(kTraces);
    const TraceModel source = importTrace((kTraces / GetParam()).string());
    const std::string file = (fs::path(m_dir) / "imported.db").string();
    writeTuneupFile(source, file);
    const TraceModel back = importTrace(file);
    EXPECT_EQ(back.info.format, SourceFormat::TuneupDb);

    // Tables of the tuneup schema: the same rows, the same nanoseconds.
    EXPECT_EQ(back.kernels.size(), source.kernels.size());
    EXPECT_EQ(back.memcpys.size(), source.memcpys.size());
    EXPECT_EQ(back.memsets.size(), source.memsets.size());
    EXPECT_EQ(back.syncs.size(), source.syncs.size());
    EXPECT_EQ(back.apiCalls.size(), source.apiCalls.size());
    EXPECT_EQ(back.annotations.size(), source.annotations.size());
    EXPECT_EQ(back.gemmCalls.size(), source.gemmCalls.size());
    EXPECT_EQ(back.convCalls.size(), source.convCalls.size());
    EXPECT_EQ(back.frameworkFlags.size(), source.frameworkFlags.size());
    EXPECT_EQ(back.externalCorrelations.size(), source.externalCorrelations.size());
    EXPECT_EQ(back.programFacts.size(), source.programFacts.size());
    EXPECT_EQ(back.memoryEvents.size(), source.memoryEvents.size());
    EXPECT_EQ(back.devices.size(), source.devices.size());
    EXPECT_EQ(totalDuration(back.kernels), totalDuration(source.kernels));
    EXPECT_EQ(totalDuration(back.memcpys), totalDuration(source.memcpys));
    EXPECT_EQ(totalDuration(back.apiCalls), totalDuration(source.apiCalls));
    EXPECT_EQ(totalDuration(back.annotations), totalDuration(source.annotations));
    ASSERT_FALSE(source.kernels.empty());
    EXPECT_EQ(back.kernels.startNs.front(), source.kernels.startNs.front());
    EXPECT_EQ(back.str(back.kernels.name.front()), source.str(source.kernels.name.front()));
    EXPECT_EQ(back.memcpys.srcKind, source.memcpys.srcKind);
    EXPECT_EQ(back.syncs.type, source.syncs.type);
    // Launches still link to their kernels.
    const auto linked = [](const TraceModel& m) {
        return std::count_if(
            m.kernels.apiCall.begin(), m.kernels.apiCall.end(), [](RowIndex r) { return r != kNoRow; });
    };
    EXPECT_EQ(linked(back), linked(source));

    // Tables the schema lacks: none read back, each counted in the file's stats.
    const std::pair<const char*, size_t> notWritten[] = { { "cpu_ops", source.cpuOps.size() },
        { "gpu_annotations", source.gpuAnnotations.size() }, { "collectives", source.collectives.size() },
        { "flows", source.flows.size() }, { "counter_ranges", source.counterRanges.size() },
        { "python_functions", source.pythonFunctions.size() } };
    for (const auto& [table, rows] : notWritten)
        EXPECT_EQ(back.stats.value(std::string("recording.export.not_written.") + table), int64_t(rows)) << table;
    EXPECT_EQ(back.cpuOps.size() + back.gpuAnnotations.size() + back.collectives.size() + back.flows.size()
            + back.counterRanges.size() + back.pythonFunctions.size(),
        0u);
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, ImportRoundTrip,
    ::testing::Values("hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
        "nvfuser/ee4fcf30/report1.sqlite", "pipit/pipit/tests/data/cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite",
        "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite"),
    [](const ::testing::TestParamInfo<std::string>& param) {
        std::string name = fs::path(param.param).stem().stem().string();
        for (char& c : name)
            if (!isalnum(static_cast<unsigned char>(c))) c = '_';
        return name;
    });

// A tuneup file written from a tuneup recording keeps the program's facts (the Python bootstrap's marks)
// and the torch flags, so the rules that read them say the same of the copy.
TEST(ImportRoundTripFacts, ProgramFactsAndFlagsSurviveATuneupCopy) {
    const tuneup::test::TempDir dir("import_roundtrip_facts");
    TraceBuilder b(SourceFormat::TuneupDb, "run.db");
    const ThreadIndex main = b.thread(100, 100);
    Annotation step;
    step.startNs = 1000, step.endNs = 5000, step.thread = main, step.name = b.intern("step");
    b.addAnnotation(step);
    b.addProgramFact({ 1100, b.intern("tuneup.dataloader.num_workers"), 0 });
    b.addProgramFact({ 1200, b.intern("tuneup.zero_grad.set_to_none"), 1 });
    b.addProgramFact({ 1300, b.intern("tuneup.big"), int64_t(1) << 40 });
    b.addFrameworkFlag({ 1050, b.intern("cudnn.benchmark"), 0 });
    const TraceModel source = b.finish();
    const std::string file = dir.path() + "/copy.db";
    writeTuneupFile(source, file);
    const TraceModel back = importTrace(file);

    ASSERT_EQ(back.programFacts.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(back.programFacts.timeNs[i], source.programFacts.timeNs[i]);
        EXPECT_EQ(back.str(back.programFacts.name[i]), source.str(source.programFacts.name[i]));
        EXPECT_EQ(back.programFacts.value[i], source.programFacts.value[i]);
    }
    ASSERT_EQ(back.frameworkFlags.size(), 1u);
    EXPECT_EQ(back.str(back.frameworkFlags.name[0]), "cudnn.benchmark");
    EXPECT_EQ(back.frameworkFlags.value[0], 0);
    ASSERT_EQ(back.annotations.size(), 1u); // the facts' marks are not ranges
}

// Memory events (Kineto's, with totals, sizes and addresses; a driver allocation; host memory) and the
// allocator's peaks come back as they were, so memory-headroom reads the copy as it reads the source.
TEST(ImportRoundTripFacts, MemoryEventsAndPeaksSurviveATuneupCopy) {
    const tuneup::test::TempDir dir("import_roundtrip_memory");
    TraceBuilder b(SourceFormat::KinetoJson, "trace.json");
    const ThreadIndex main = b.thread(100, 101);
    MemoryEvent allocation;
    allocation.timeNs = 2000, allocation.device = 0, allocation.allocatedBytes = 3 << 20;
    allocation.reservedBytes = 8 << 20, allocation.deltaBytes = 1 << 20, allocation.address = 0x7f00001000;
    allocation.thread = main;
    b.addMemoryEvent(allocation);
    MemoryEvent driver;
    driver.timeNs = 2500, driver.device = 1, driver.deltaBytes = -(int64_t(1) << 33);
    driver.deltaOf = MemoryTotal::Reserved;
    b.addMemoryEvent(driver);
    MemoryEvent host;
    host.timeNs = 3000, host.device = kHostMemory, host.deltaBytes = 4096;
    b.addMemoryEvent(host);
    MemoryPeak peak;
    peak.startNs = 1000, peak.endNs = 4000, peak.device = 0, peak.allocatedBytes = int64_t(5) << 30;
    peak.thread = main;
    b.addMemoryPeak(peak);
    MemoryPeak reservedOnly;
    reservedOnly.startNs = 4000, reservedOnly.endNs = 6000, reservedOnly.device = 1;
    reservedOnly.reservedBytes = int64_t(7) << 30;
    b.addMemoryPeak(reservedOnly);
    const TraceModel source = b.finish();
    const std::string file = dir.path() + "/copy.db";
    writeTuneupFile(source, file);
    const TraceModel back = importTrace(file);

    const auto rowsOf = [](const TraceModel& m) {
        std::vector<std::tuple<int64_t, int32_t, int64_t, int64_t, int64_t, MemoryTotal, uint64_t, int64_t>> rows;
        const MemoryEventTable& e = m.memoryEvents;
        for (size_t i = 0; i < e.size(); ++i)
            rows.emplace_back(e.timeNs[i], e.device[i], e.allocatedBytes[i], e.reservedBytes[i], e.deltaBytes[i],
                e.deltaOf[i], e.address[i], e.thread[i] == kNoThread ? -1 : m.threads[e.thread[i]].tid);
        return rows;
    };
    EXPECT_EQ(rowsOf(back), rowsOf(source));
    const auto peaksOf = [](const TraceModel& m) {
        std::vector<std::tuple<int64_t, int64_t, int32_t, int64_t, int64_t, int64_t>> rows;
        const MemoryPeakTable& p = m.memoryPeaks;
        for (size_t i = 0; i < p.size(); ++i)
            rows.emplace_back(p.startNs[i], p.endNs[i], p.device[i], p.allocatedBytes[i], p.reservedBytes[i],
                p.thread[i] == kNoThread ? -1 : m.threads[p.thread[i]].tid);
        return rows;
    };
    ASSERT_EQ(back.memoryPeaks.size(), 2u);
    EXPECT_EQ(peaksOf(back), peaksOf(source));
    EXPECT_EQ(back.stats.value("recording.export.not_written.memory_events"), 0);
}

} // namespace
