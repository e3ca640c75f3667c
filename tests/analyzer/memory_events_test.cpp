// GPU memory events from traces recorded elsewhere: Kineto's "[memory]" instants (TraceLens's H100 traces,
// recorded with profile_memory=True; older PyTorch's sizes-only form written here), nsys's
// CUDA_GPU_MEMORY_USAGE_EVENTS (on an export built here: no shared export has rows in it), and the Chrome
// trace export writing them back. Expected values were read from the JSON with Python, independently of
// the importer.

#include "export/chrome_trace_writer.h"
#include "import/importer.h"
#include "import/kineto_json.h"
#include "model/trace_builder.h"
#include "nsys_fixture.h"
#include "shared_traces.h"
#include "temp_dir.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <sstream>

namespace fs = std::filesystem;
using namespace tuneup::analysis;
using tuneup::test::nsysGlobalId;
using tuneup::test::writeNsysExport;

namespace {

const fs::path kTraces = TUNEUP_SHARED_TRACES;
const std::string kBert = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz";

size_t onDevice(const TraceModel& m, int32_t device) {
    return size_t(std::count(m.memoryEvents.device.begin(), m.memoryEvents.device.end(), device));
}

} // namespace

TEST(MemoryEvents, KinetoMemoryEventsOfARealTrace) {
    TUNEUP_REQUIRE_SHARED_TRACES(kTraces);
    const TraceModel m = importTrace((kTraces / kBert).string());
    // Python: 236 "[memory]" events, 218 with Device Type 1 (CUDA) on device 0, 18 with Device Type 0 (CPU).
    ASSERT_EQ(m.memoryEvents.size(), 236u);
    EXPECT_EQ(onDevice(m, 0), 218u);
    EXPECT_EQ(onDevice(m, kHostMemory), 18u);
    EXPECT_EQ(m.stats.value("memory_events_unread"), 0);
    // The first GPU event: ts 1419247333400.919 us, Total Allocated 91505152, Total Reserved 121634816,
    // Bytes 144384, Addr 128184607182336, on pid/tid 19392.
    size_t first = 0;
    while (m.memoryEvents.device[first] != 0)
        ++first;
    const MemoryEvent e = m.memoryEvents.row(first);
    EXPECT_EQ(e.timeNs - *m.info.baseTimeNs, 1419247333400919);
    EXPECT_EQ(e.allocatedBytes, 91505152);
    EXPECT_EQ(e.reservedBytes, 121634816);
    EXPECT_EQ(e.deltaBytes, 144384);
    EXPECT_EQ(e.deltaOf, MemoryTotal::Allocated);
    EXPECT_EQ(e.address, 128184607182336u);
    ASSERT_NE(e.thread, kNoThread);
    EXPECT_EQ(m.threads[e.thread].tid, 19392);
    // Highest totals on the GPU (Python: max Total Allocated 101305344, max Total Reserved 121634816).
    int64_t allocated = 0, reserved = 0;
    for (size_t i = 0; i < m.memoryEvents.size(); ++i)
        if (m.memoryEvents.device[i] == 0) {
            allocated = std::max(allocated, m.memoryEvents.allocatedBytes[i]);
            reserved = std::max(reserved, m.memoryEvents.reservedBytes[i]);
        }
    EXPECT_EQ(allocated, 101305344);
    EXPECT_EQ(reserved, 121634816);
    EXPECT_TRUE(std::is_sorted(m.memoryEvents.timeNs.begin(), m.memoryEvents.timeNs.end()));
    // The GPU's capacity is read from deviceProperties (totalGlobalMem 85018279936).
    ASSERT_NE(m.device(0), nullptr);
    EXPECT_EQ(m.device(0)->globalMemoryBytes, 85018279936);
}

TEST(MemoryEvents, OlderKinetoSizesOnlyAndEventsNotRead) {
    // PyTorch before 1.10: Bytes without totals. Device Type 6 is HIP; 13 (MPS) is no GPU this reads;
    // a [memory] event without a size says nothing.
    constexpr std::string_view text = R"json({"traceEvents": [
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 2, "ts": 10,
       "args": {"Device Type": 1, "Device Id": 1, "Bytes": 512, "Addr": 4096}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 2, "ts": 11,
       "args": {"Device Type": 6, "Device Id": 0, "Bytes": -256}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 2, "ts": 12,
       "args": {"Device Type": 0, "Device Id": -1, "Bytes": 64}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 2, "ts": 13,
       "args": {"Device Type": 13, "Device Id": 0, "Bytes": 64}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 2, "ts": 14,
       "args": {"Device Type": 1, "Device Id": 0}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[OutOfMemory]", "pid": 1, "tid": 2, "ts": 15,
       "args": {"Device Type": 1, "Device Id": 0, "Bytes": 1}},
      {"ph": "i", "cat": "cpu_instant_event", "name": "[memory]", "pid": 1, "tid": 2,
       "args": {"Device Type": 1, "Device Id": 0, "Bytes": 1}}
    ]})json";
    const TraceModel m = importKinetoJsonBytes(text, "old.json");
    ASSERT_EQ(m.memoryEvents.size(), 3u);
    EXPECT_EQ(m.memoryEvents.device[0], 1);
    EXPECT_EQ(m.memoryEvents.deltaBytes[0], 512);
    EXPECT_EQ(m.memoryEvents.allocatedBytes[0], -1);
    EXPECT_EQ(m.memoryEvents.reservedBytes[0], -1);
    EXPECT_EQ(m.memoryEvents.address[0], 4096u);
    EXPECT_EQ(m.memoryEvents.device[1], 0);
    EXPECT_EQ(m.memoryEvents.deltaBytes[1], -256);
    EXPECT_EQ(m.memoryEvents.device[2], kHostMemory);
    EXPECT_EQ(m.stats.value("memory_events_unread"), 2); // MPS, and no size
    EXPECT_EQ(m.stats.value("skipped_cpu_instant_events"), 1); // [OutOfMemory]
    EXPECT_EQ(m.stats.value("events_without_ts"), 1);
}

TEST(MemoryEvents, ChromeTraceExportWritesThemBack) {
    TraceBuilder b(SourceFormat::TuneupDb, "memory.db");
    const ThreadIndex main = b.thread(10, 11);
    MemoryEvent e;
    e.timeNs = 1'000'000'123;
    e.device = 0;
    e.allocatedBytes = 5'000'000;
    e.reservedBytes = 8'388'608;
    e.deltaBytes = 1'000'000;
    e.address = 0x7f0000001000;
    e.thread = main;
    b.addMemoryEvent(e);
    e.timeNs += 1'001;
    e.device = kHostMemory;
    e.allocatedBytes = e.reservedBytes = -1;
    e.deltaBytes = -64;
    e.address = 0;
    b.addMemoryEvent(e);
    e.deltaOf = MemoryTotal::Reserved; // nsys's driver-level allocations have no Kineto form
    e.thread = kNoThread;
    e.device = 0;
    b.addMemoryEvent(e);
    const TraceModel model = b.finish();
    std::ostringstream out;
    writeChromeTrace(out, model);
    const TraceModel back = importKinetoJsonBytes(out.str(), "exported.json");
    ASSERT_EQ(back.memoryEvents.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        SCOPED_TRACE(i);
        EXPECT_EQ(back.memoryEvents.timeNs[i], model.memoryEvents.timeNs[i]);
        EXPECT_EQ(back.memoryEvents.device[i], model.memoryEvents.device[i]);
        EXPECT_EQ(back.memoryEvents.allocatedBytes[i], model.memoryEvents.allocatedBytes[i]);
        EXPECT_EQ(back.memoryEvents.reservedBytes[i], model.memoryEvents.reservedBytes[i]);
        EXPECT_EQ(back.memoryEvents.deltaBytes[i], model.memoryEvents.deltaBytes[i]);
        EXPECT_EQ(back.memoryEvents.address[i], model.memoryEvents.address[i]);
        EXPECT_EQ(back.threads[back.memoryEvents.thread[i]].tid, 11);
    }
}

class NsysMemory : public ::testing::Test {
protected:
    tuneup::test::TempDir m_tmp { "memory_events_test" };
    std::string path(const std::string& name) const { return (fs::path(m_tmp.path()) / name).string(); }
};

TEST_F(NsysMemory, GpuMemoryUsageEventsAreAllocationsAndFrees) {
    // The table as nsys 2022-2025 exports it (`--cuda-memory-usage=true`), with its enum: a kernel so that the
    // export has CUDA activity, then two device allocations, a pinned host allocation and a free.
    const std::string pid = std::to_string(nsysGlobalId(100, 0));
    const std::string sql = "INSERT INTO StringIds VALUES (2, 'k');"
                            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 1, 7, 1, "
        + pid
        + ", 2, 2, NULL, 32, 1, 1, 1, 32, 1, 1, 0, 0);"
          "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL, globalPid INTEGER NOT NULL, "
          "deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, address INTEGER NOT NULL, pc INTEGER NOT NULL, "
          "bytes INTEGER NOT NULL, memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL, name TEXT, "
          "correlationId INTEGER);"
          "CREATE TABLE ENUM_CUDA_DEV_MEM_EVENT_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
          "INSERT INTO ENUM_CUDA_DEV_MEM_EVENT_OPER VALUES (0, 'CUDA_DEV_MEM_EVENT_OPR_ALLOCATION', 'Allocation'), "
          "(1, 'CUDA_DEV_MEM_EVENT_OPR_DEALLOCATION', 'Deallocation');"
          "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (500, "
        + pid + ", 0, 1, 139000000000000, 0, 2097152, 2, 0, NULL, 5), (600, " + pid
        + ", 0, 1, 139000002097152, 0, 20971520, 2, 0, NULL, 6), (700, " + pid
        + ", 0, 1, 140000000000000, 0, 4096, 1, 0, NULL, 7), (3000, " + pid
        + ", 0, 1, 139000000000000, 0, 2097152, 2, 1, NULL, 8)";
    writeNsysExport(path("memory.sqlite"), sql);
    const TraceModel m = importTrace(path("memory.sqlite"));
    ASSERT_EQ(m.memoryEvents.size(), 4u);
    EXPECT_EQ(m.memoryEvents.timeNs[0], 500);
    EXPECT_EQ(m.memoryEvents.deltaBytes[0], 2097152);
    EXPECT_EQ(m.memoryEvents.deltaOf[0], MemoryTotal::Reserved);
    EXPECT_EQ(m.memoryEvents.allocatedBytes[0], -1);
    EXPECT_EQ(m.memoryEvents.reservedBytes[0], -1);
    EXPECT_EQ(m.memoryEvents.device[0], 0);
    EXPECT_EQ(m.memoryEvents.address[0], 139000000000000u);
    EXPECT_EQ(m.memoryEvents.thread[0], kNoThread);
    EXPECT_EQ(m.memoryEvents.device[2], kHostMemory); // pinned host memory
    EXPECT_EQ(m.memoryEvents.deltaBytes[3], -2097152); // the free
    EXPECT_EQ(m.stats.value("nsys.CUDA_GPU_MEMORY_USAGE_EVENTS"), 4);
    EXPECT_EQ(m.stats.value("nsys.not_read.CUDA_GPU_MEMORY_USAGE_EVENTS"), 0);
}

TEST_F(NsysMemory, RowsThatCannotBeReadAreCountedNotGuessed) {
    const std::string pid = std::to_string(nsysGlobalId(100, 0));
    const std::string sql = "INSERT INTO StringIds VALUES (2, 'k');"
                            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 1, 7, 1, "
        + pid
        + ", 2, 2, NULL, 32, 1, 1, 1, 32, 1, 1, 0, 0);"
          "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, globalPid INTEGER, deviceId INTEGER, "
          "address INTEGER, bytes INTEGER, memKind INTEGER, memoryOperationType INTEGER);"
          "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (NULL, "
        + pid + ", 0, 1, 64, 2, 0), (10, " + pid + ", 0, 1, 64, 2, 9), (20, " + pid + ", NULL, 1, 64, 2, 0), (30, "
        + pid + ", 0, 1, 'many', 2, 0), (40, " + pid + ", 0, 1, 64, 2, 0)";
    writeNsysExport(path("damaged.sqlite"), sql);
    const TraceModel m = importTrace(path("damaged.sqlite"));
    ASSERT_EQ(m.memoryEvents.size(), 1u); // no time, an unknown operation, no GPU, a size that is text
    EXPECT_EQ(m.memoryEvents.timeNs[0], 40);
    EXPECT_EQ(m.stats.value("nsys.CUDA_GPU_MEMORY_USAGE_EVENTS.unreadable_rows"), 4);
    // Without the columns that matter the table is not read, and the import says so.
    writeNsysExport(path("odd.sqlite"),
        "INSERT INTO StringIds VALUES (2, 'k');INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 2000, 0, 1, 7, 1, "
            + pid
            + ", 2, 2, NULL, 32, 1, 1, 1, 32, 1, 1, 0, 0);"
              "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, size INTEGER);"
              "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (1, 2)");
    const TraceModel odd = importTrace(path("odd.sqlite"));
    EXPECT_TRUE(odd.memoryEvents.empty());
    EXPECT_EQ(odd.stats.value("nsys.CUDA_GPU_MEMORY_USAGE_EVENTS.unreadable"), 1);
}

TEST(NsysMemoryShared, ExportsWithoutMemoryUsageImportAsBefore) {
    // None of the shared exports was captured with --cuda-memory-usage: saxpy has the table, empty; the
    // others lack it (nsys leaves empty tables out). No memory events, and nothing said about them.
    TUNEUP_REQUIRE_SHARED_TRACES(kTraces);
    for (const char* file : { "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite",
             "nvfuser/ee4fcf30/report1.sqlite", "nvfuser/df8f397e/report2.sqlite",
             "pipit/pipit/tests/data/cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite" }) {
        SCOPED_TRACE(file);
        const TraceModel m = importTrace((kTraces / file).string());
        EXPECT_TRUE(m.memoryEvents.empty());
        for (const ImportStat& s : m.stats.entries())
            EXPECT_EQ(s.name.find("MEMORY_USAGE"), std::string::npos) << s.name;
    }
}
