// TraceDb: the file the writer creates. The schema and its version marks, interned strings, meta
// and stats rows, processes, GPU rows, reopening after exec, and a clear error for a bad path.

#include "sqlite_query.h"
#include "temp_dir.h"
#include "trace_db.h"
#include "trace_schema.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <memory>

using namespace tuneup::agent;
using tuneup::test::Row;
using tuneup::test::SqliteQuery;

namespace {

std::optional<std::string> v(const std::string& text) {
    return text;
}
const std::optional<std::string> null = std::nullopt;

std::string readAll(const std::string& path) {
    std::string text;
    if (FILE* f = fopen(path.c_str(), "rb")) {
        char buffer[4096];
        size_t n;
        while ((n = fread(buffer, 1, sizeof buffer, f)) > 0)
            text.append(buffer, n);
        fclose(f);
    }
    return text;
}

class TraceDbTest : public ::testing::Test {
protected:
    std::unique_ptr<TraceDb> create() {
        std::string error;
        auto db = TraceDb::create(m_path, error);
        EXPECT_TRUE(db) << error;
        EXPECT_TRUE(error.empty());
        return db;
    }

    tuneup::test::TempDir m_tmp { "tuneup-tracedb-test" };
    std::string m_dir = m_tmp.path(), m_path = m_dir + "/trace.db";
};

} // namespace

TEST_F(TraceDbTest, NewFileHasTheSchemaAndItsVersionMarks) {
    create().reset();
    SqliteQuery q(m_path);
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(q.scalar("PRAGMA application_id"), tuneup::schema::kApplicationId);
    EXPECT_EQ(q.scalar("PRAGMA user_version"), tuneup::schema::kSchemaVersion);
    EXPECT_EQ(q.text("PRAGMA journal_mode"), v("wal"));
    for (const char* table : { "meta", "strings", "devices", "processes", "threads", "kernels", "memcpys", "memsets",
             "syncs", "api_calls", "nvtx_domains", "nvtx_categories", "nvtx_ranges", "nvtx_marks", "stats" })
        EXPECT_EQ(
            q.scalar(std::string("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '") + table + "'"),
            1)
            << table;
    EXPECT_EQ(q.scalar("SELECT count(*) FROM copy_kinds"), 11);
    EXPECT_EQ(q.text("SELECT name FROM memory_kinds WHERE code = 1"), v("pageable"));
    EXPECT_EQ(q.text("PRAGMA integrity_check"), v("ok"));
}

TEST_F(TraceDbTest, CreateFailsClearlyForAnUnwritablePath) {
    std::string error;
    auto db = TraceDb::create(m_dir + "/no/such/dir/trace.db", error);
    EXPECT_FALSE(db);
    EXPECT_NE(error.find(m_dir + "/no/such/dir/trace.db"), std::string::npos) << error;
}

TEST_F(TraceDbTest, StringsAreInternedOnce) {
    auto db = create();
    db->begin();
    const int64_t a = db->intern("alpha");
    const int64_t b = db->intern("beta");
    EXPECT_NE(a, b);
    EXPECT_EQ(db->intern("alpha"), a);
    EXPECT_EQ(db->intern(std::string("be") + "ta"), b);
    const int64_t empty = db->intern("");
    EXPECT_NE(empty, a);
    db->commit();
    db.reset();
    SqliteQuery q(m_path);
    EXPECT_EQ(q.rows("SELECT id, value FROM strings ORDER BY id"),
        (std::vector<Row> {
            { std::to_string(a), v("alpha") }, { std::to_string(b), v("beta") }, { std::to_string(empty), v("") } }));
}

TEST_F(TraceDbTest, MetaAndStatsAreReplacedByKey) {
    auto db = create();
    db->begin();
    db->setMeta("host", "a");
    db->setMeta("host", "b");
    EXPECT_EQ(db->metaValue("host"), "b");
    EXPECT_EQ(db->metaValue("absent"), "");
    db->setStat("events.dropped", "data_loss", 1, "first");
    db->setStat("events.dropped", "data_loss", 7, "dropped events");
    db->commit();
    db.reset();
    SqliteQuery q(m_path);
    EXPECT_EQ(q.meta("host"), v("b"));
    EXPECT_EQ(q.rows("SELECT name, severity, value, description FROM stats"),
        (std::vector<Row> { { v("events.dropped"), v("data_loss"), v("7"), v("dropped events") } }));
}

TEST_F(TraceDbTest, ProcessesStartAndEnd) {
    auto db = create();
    db->begin();
    db->addProcess(10, 1, "main", "python train.py", 1000);
    db->addProcess(11, 10, "forked-child", "python train.py", 2000);
    db->endProcess(10, 5000);
    db->commit();
    db.reset();
    SqliteQuery q(m_path);
    EXPECT_EQ(q.rows("SELECT pid, parent_pid, role, command_line, start_ns, end_ns FROM processes ORDER BY pid"),
        (std::vector<Row> { { v("10"), v("1"), v("main"), v("python train.py"), v("1000"), v("5000") },
            { v("11"), v("10"), v("forked-child"), v("python train.py"), v("2000"), null } }));
}

TEST_F(TraceDbTest, GpuRowsAreWrittenAndCounted) {
    auto db = create();
    db->begin();
    KernelRecord k;
    k.startNs = 100;
    k.endNs = 200;
    k.deviceId = 0;
    k.streamId = 7;
    k.correlationId = 42;
    k.name = "_Z6kernelv";
    k.gridX = 128;
    k.blockX = 256;
    db->kernel(k);
    MemcpyRecord m;
    m.startNs = 300;
    m.endNs = 400;
    m.copyKind = 1;
    m.srcKind = 1;
    m.dstKind = 3;
    m.bytes = 4096;
    db->memcpy(m);
    MemsetRecord s;
    s.startNs = 500;
    s.endNs = 510;
    s.bytes = 64;
    db->memset(s);
    SyncRecord y;
    y.startNs = 600;
    y.endNs = 700;
    y.type = 3;
    y.streamId = 7;
    db->sync(y);
    ApiRecord a;
    a.startNs = 90;
    a.endNs = 110;
    a.api = 1;
    a.cbid = 211;
    a.threadId = 99;
    a.correlationId = 42;
    db->api(a); // no name: stored as <unknown>
    DeviceRecord d;
    d.id = 0;
    d.name = "Test GPU";
    d.globalMemoryBandwidthKBs = 2'000'000'000;
    db->device(d);
    EXPECT_EQ(db->gpuRecordsWritten(), 5u);
    EXPECT_EQ(db->eventsWritten(), 5u);
    db->commit();
    db.reset();
    SqliteQuery q(m_path);
    EXPECT_EQ(q.rows("SELECT k.start_ns, k.end_ns, k.stream_id, k.correlation_id, s.value, k.grid_x, k.block_x "
                     "FROM kernels k JOIN strings s ON s.id = k.name_id"),
        (std::vector<Row> { { v("100"), v("200"), v("7"), v("42"), v("_Z6kernelv"), v("128"), v("256") } }));
    EXPECT_EQ(q.rows("SELECT copy_kind, src_kind, dst_kind, bytes, src_device_id, dst_device_id FROM memcpys"),
        (std::vector<Row> { { v("1"), v("1"), v("3"), v("4096"), null, null } }));
    EXPECT_EQ(
        q.rows("SELECT sync_type, stream_id, event_id FROM syncs"), (std::vector<Row> { { v("3"), v("7"), null } }));
    EXPECT_EQ(q.text("SELECT s.value FROM api_calls a JOIN strings s ON s.id = a.name_id"), v("<unknown>"));
    EXPECT_EQ(q.rows("SELECT name, memory_bandwidth_gbs, uuid FROM devices"),
        (std::vector<Row> { { v("Test GPU"), v("2000.0"), null } }));
    EXPECT_EQ(q.scalar("SELECT count(*) FROM memsets"), 1);
}

// GPU memory (schema 6): CUPTI's allocations and releases, and the bootstrap's readings of the caching allocator.
TEST_F(TraceDbTest, MemoryRowsAreWritten) {
    auto db = create();
    db->begin();
    MemoryRecord m;
    m.timeNs = 1000;
    m.deviceId = 1;
    m.contextId = 1;
    m.correlationId = 77;
    m.operation = MemoryRecord::kAllocation;
    m.memoryKind = 3;
    m.bytes = uint64_t(1) << 33;
    m.address = 0x7f0000000000;
    db->memory(m); // cudaMalloc: memory from the driver
    m.timeNs = 2000;
    m.operation = MemoryRecord::kRelease;
    db->memory(m);
    m.timeNs = 3000;
    m.operation = MemoryRecord::kAllocation;
    m.isAsync = true;
    m.streamId = 13;
    m.bytes = 4096;
    m.address = 0;
    db->memory(m); // cudaMallocAsync: memory allocated out of a pool
    EXPECT_EQ(db->gpuRecordsWritten(), 3u);
    db->addAllocatorReading(5000, { 4242, 1, 1500, 2'000'000'000, 8'000'000'000, 6'000'000'000, 8'000'000'000 });
    db->addAllocatorReading(6000, { 4242, 1, 5000, -1, 8'000'000'000, -1, 9'000'000'000 }); // allocated not read
    db->addAllocatorReading(7000, { 4242, 1, 9000, 1, 2, -1, -1 }); // no peaks; a start after the reading
    db->commit();
    db.reset();
    SqliteQuery q(m_path);
    EXPECT_EQ(q.rows("SELECT ts_ns, device_id, source, delta_bytes, delta_of, allocated_bytes, reserved_bytes, "
                     "memory_kind, address, tid, correlation_id, stream_id FROM memory_events ORDER BY ts_ns"),
        (std::vector<Row> { { v("1000"), v("1"), v("1"), v("8589934592"), v("2"), null, null, v("3"),
                                v("139637976727552"), null, v("77"), null },
            { v("2000"), v("1"), v("1"), v("-8589934592"), v("2"), null, null, v("3"), v("139637976727552"), null,
                v("77"), null },
            { v("3000"), v("1"), v("1"), v("4096"), v("1"), null, null, v("3"), null, null, v("77"), v("13") },
            { v("5000"), v("1"), v("2"), v("0"), v("1"), v("2000000000"), v("8000000000"), v("3"), null, v("4242"),
                null, null },
            { v("6000"), v("1"), v("2"), v("0"), v("1"), null, v("8000000000"), v("3"), null, v("4242"), null, null },
            { v("7000"), v("1"), v("2"), v("0"), v("1"), v("1"), v("2"), v("3"), null, v("4242"), null, null } }));
    EXPECT_EQ(q.rows("SELECT start_ns, end_ns, device_id, tid, allocated_bytes, reserved_bytes FROM memory_peaks "
                     "ORDER BY end_ns"),
        (std::vector<Row> { { v("1500"), v("5000"), v("1"), v("4242"), v("6000000000"), v("8000000000") },
            { v("5000"), v("6000"), v("1"), v("4242"), null, v("9000000000") } }));
    EXPECT_EQ(q.text("SELECT name FROM memory_sources WHERE code = 2"), v("caching_allocator"));
}

TEST_F(TraceDbTest, ReopenContinuesTheSameFile) {
    {
        auto db = create();
        db->begin();
        db->setMeta("format", "tuneup-trace");
        db->setMeta("pid", "123");
        db->intern("kept");
        db->commit();
    }
    std::string error;
    auto db = TraceDb::reopen(m_path, error);
    ASSERT_TRUE(db) << error;
    EXPECT_EQ(db->metaValue("pid"), "123");
    db->begin();
    const int64_t kept = db->intern("kept");
    const int64_t added = db->intern("added");
    EXPECT_NE(kept, added);
    db->commit();
    db.reset();
    SqliteQuery q(m_path);
    EXPECT_EQ(q.scalar("SELECT count(*) FROM strings"), 2);
    EXPECT_EQ(q.scalar("SELECT id FROM strings WHERE value = 'kept'"), kept);
}

TEST_F(TraceDbTest, ReopenOfAMissingFileFails) {
    std::string error;
    EXPECT_FALSE(TraceDb::reopen(m_dir + "/absent.db", error));
    EXPECT_FALSE(error.empty());
    EXPECT_FALSE(std::filesystem::exists(m_dir + "/absent.db"));
}

TEST_F(TraceDbTest, OnlyAFinishedTuneupTraceIsReopened) {
    std::string error;
    // A file with the schema but no metadata yet (another process is creating it).
    create().reset();
    EXPECT_FALSE(TraceDb::reopen(m_path, error));
    EXPECT_NE(error.find("not a tuneup trace"), std::string::npos) << error;
    // Some other SQLite database.
    const std::string other = m_dir + "/other.db";
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE meta(key TEXT, value TEXT); INSERT INTO meta VALUES ('format', 'x')", nullptr,
        nullptr, nullptr);
    sqlite3_close(db);
    EXPECT_FALSE(TraceDb::reopen(other, error));
    // Not a database at all.
    const std::string text = m_dir + "/notes.db";
    FILE* f = fopen(text.c_str(), "w");
    ASSERT_TRUE(f);
    fputs("notes, not a database\n", f);
    fclose(f);
    EXPECT_FALSE(TraceDb::reopen(text, error));
    EXPECT_EQ(readAll(text), "notes, not a database\n");
}

TEST_F(TraceDbTest, CreateNeverTakesAnExistingFile) {
    FILE* f = fopen(m_path.c_str(), "w");
    ASSERT_TRUE(f);
    fclose(f);
    std::string error;
    bool existed = false;
    EXPECT_FALSE(TraceDb::create(m_path, error, &existed));
    EXPECT_TRUE(existed);
    EXPECT_EQ(std::filesystem::file_size(m_path), 0u);
    EXPECT_FALSE(TraceDb::create(m_dir + "/missing/x.db", error, &existed));
    EXPECT_FALSE(existed);
}
