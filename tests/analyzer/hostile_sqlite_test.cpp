// Hostile SQLite files (issue 18, item 7): a view, a virtual table or generated columns in place of the
// tables a reader reads would run what the file defines, a recursive view for ever and a view of huge
// blobs until memory runs out. The readers read plain tables only, and the one opener bounds SQLite's
// work and the size of any value, for tuneup recordings and Nsight Systems exports alike.

#include "import/import_error.h"
#include "import/importer.h"
#include "import/nsys_sqlite.h"
#include "import/sqlite_open.h"
#include "import/tuneup_file.h"
#include "import/tuneup_import.h"
#include "nsys_fixture.h"
#include "temp_dir.h"
#include "trace_fixture.h"

#include <chrono>
#include <gtest/gtest.h>
#include <string>

using namespace tuneup::analysis;
using Clock = std::chrono::steady_clock;

namespace {

// A recursive query that never ends on its own.
constexpr const char* kEndless = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT i FROM r";

class HostileSqlite : public ::testing::Test {
protected:
    std::string path(const std::string& name) const { return m_dir.path() + "/" + name; }

    // A good recording, then `sql` run on it (as someone who edits it with sqlite3 would).
    std::string recording(const std::string& name, const std::string& sql) const {
        const std::string file = path(name);
        tuneup::test::writeTrace(file);
        sqlite3* db = nullptr;
        EXPECT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
        tuneup::test::exec(db, sql);
        sqlite3_close(db);
        return file;
    }

    // The message of the TuneupFileError that reading `file` (open, summary, import) ends with.
    static std::string readError(const std::string& file) {
        try {
            TuneupFile::open(file)->summary();
            importTuneupFile(file);
        } catch (const TuneupFileError& e) {
            return e.what();
        }
        ADD_FAILURE() << file << " was read";
        return "";
    }

    tuneup::test::TempDir m_dir { "hostile_sqlite_test" };
};

TEST_F(HostileSqlite, RecursiveViewInPlaceOfATableIsRefusedAtOnce) {
    const std::string file = recording("view.db",
        "DROP TABLE kernels; CREATE VIEW kernels AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) "
        "SELECT i AS id, i AS start_ns, i AS end_ns, 0 AS device_id, 0 AS stream_id, 0 AS correlation_id, 1 AS "
        "name_id, 1 AS grid_x, 1 AS grid_y, 1 AS grid_z, 1 AS block_x, 1 AS block_y, 1 AS block_z, 0 AS "
        "registers_per_thread, 0 AS static_shared_bytes, 0 AS dynamic_shared_bytes FROM r");
    const auto started = Clock::now();
    const std::string message = readError(file);
    EXPECT_LT(Clock::now() - started, std::chrono::seconds(5)) << "the view ran";
    EXPECT_NE(message.find(file), std::string::npos) << message;
    EXPECT_NE(message.find("`kernels` is a view, not a table"), std::string::npos) << message;
}

// The over-2 GB case: three rows of 900 MB each, which a reader that ran the view would hold at once.
TEST_F(HostileSqlite, MetaViewOfHugeBlobsIsNeverRun) {
    const std::string file = recording("meta.db",
        "DROP TABLE meta; CREATE VIEW meta AS WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r "
        "WHERE i < 3) SELECT 'key' || i AS key, zeroblob(900000000) AS value FROM r");
    const std::string message = readError(file);
    EXPECT_NE(message.find("`meta` is a view"), std::string::npos) << message;
}

TEST_F(HostileSqlite, GeneratedColumnsAndVirtualTablesAreNotTables) {
    const std::string generated = recording("generated.db",
        "DROP TABLE strings; CREATE TABLE strings (id INTEGER PRIMARY KEY, seed TEXT, value TEXT AS "
        "(printf('%.*c', 900000000, 'x')))");
    EXPECT_NE(readError(generated).find("`strings` is a table with generated columns"), std::string::npos)
        << readError(generated);
    const std::string virtualTable
        = recording("virtual.db", "DROP TABLE strings; CREATE VIRTUAL TABLE strings USING fts4(value)");
    EXPECT_NE(readError(virtualTable).find("`strings` is a virtual table"), std::string::npos)
        << readError(virtualTable);
}

// A view of the user's own beside the tables tuneup reads is theirs: the recording reads as before.
TEST_F(HostileSqlite, AViewOfOneselfBesideTheTablesIsLeftAlone) {
    const std::string file = recording("mine.db", std::string("CREATE VIEW endless AS ") + kEndless);
    const TraceModel model = importTuneupFile(file);
    EXPECT_EQ(model.kernels.size(), 3u);
}

TEST_F(HostileSqlite, NsysReaderSkipsViewsInPlaceOfItsTables) {
    const std::string file = path("view.sqlite");
    const int64_t g = tuneup::test::nsysGlobalId(10, 11);
    tuneup::test::writeNsysExport(file,
        "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'); "
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (100, 200, 0, "
            + std::to_string(g)
            + ", 1, 1, 0, NULL); "
              "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; CREATE VIEW CUPTI_ACTIVITY_KIND_KERNEL AS "
              "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT i AS start, i AS end FROM r");
    const auto started = Clock::now();
    const TraceModel model = importNsysSqlite(file);
    EXPECT_LT(Clock::now() - started, std::chrono::seconds(5)) << "the view ran";
    EXPECT_EQ(model.kernels.size(), 0u);
    EXPECT_EQ(model.apiCalls.size(), 1u);
}

// The bound behind the checks: whatever a query on a file opened by the one opener does, it ends.
TEST_F(HostileSqlite, EndlessQueryStopsWithinItsBudgetAndSaysWhy) {
    const std::string file = path("small.db");
    tuneup::test::writeTrace(file);
    sqlite3* db = nullptr;
    ASSERT_EQ(openSqliteForReading(file, true, &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, kEndless, -1, &s, nullptr), SQLITE_OK);
    const auto started = Clock::now();
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) { }
    sqlite3_finalize(s);
    EXPECT_LT(Clock::now() - started, std::chrono::seconds(30));
    EXPECT_EQ(rc, SQLITE_INTERRUPT);
    const std::string why = sqliteLimitProblem(db, rc);
    EXPECT_NE(why.find("steps of SQLite's work"), std::string::npos) << why;
    const SqliteWork work = sqliteWork(db);
    EXPECT_GE(work.steps, work.budget);
    EXPECT_GE(work.budget, kSqliteBaseSteps);
    sqlite3_close(db);
}

TEST_F(HostileSqlite, NoValueLargerThanTheLimitIsMade) {
    const std::string file = path("small.db");
    tuneup::test::writeTrace(file);
    sqlite3* db = nullptr;
    ASSERT_EQ(openSqliteForReading(file, true, &db), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    const std::string sql = "SELECT zeroblob(" + std::to_string(kMaxSqliteValueBytes + 1) + ")";
    ASSERT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr), SQLITE_OK);
    const int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    EXPECT_EQ(rc & 0xff, SQLITE_TOOBIG);
    EXPECT_NE(sqliteLimitProblem(db, rc).find("holds a value larger than"), std::string::npos);
    sqlite3_close(db);
}

// Reading a recording whole (summary, every table, the integrity check) costs a small part of the budget.
TEST_F(HostileSqlite, ReadingARecordingWholeUsesLittleOfTheBudget) {
    tuneup::test::TraceSpec spec;
    spec.kernels = 3000;
    spec.apiCalls = 3000;
    spec.libraryCalls = true;
    spec.threadStates = true;
    const std::string file = path("big.db");
    tuneup::test::writeTrace(file, spec);
    const auto opened = TuneupFile::open(file);
    opened->summary();
    EXPECT_TRUE(opened->quickCheck().empty());
    for (const std::string& table : kEventTables) {
        sqlite3_stmt* s = nullptr;
        ASSERT_EQ(sqlite3_prepare_v2(opened->db(), ("SELECT * FROM " + table).c_str(), -1, &s, nullptr), SQLITE_OK);
        while (sqlite3_step(s) == SQLITE_ROW) { }
        sqlite3_finalize(s);
    }
    const SqliteWork work = sqliteWork(opened->db());
    EXPECT_GT(work.steps, 0);
    EXPECT_LT(work.steps, work.budget / 20) << work.steps << " of " << work.budget;
}

TEST_F(HostileSqlite, ListsWhatEachTableIs) {
    const std::string file = recording("kinds.db",
        "CREATE VIEW v AS SELECT 1; CREATE TABLE g (x INTEGER, y INTEGER AS (x * 2)); "
        "CREATE VIRTUAL TABLE f USING fts4(t)");
    sqlite3* db = nullptr;
    ASSERT_EQ(openSqliteForReading(file, true, &db), SQLITE_OK);
    SqliteTables tables;
    ASSERT_EQ(listSqliteTables(db, tables), SQLITE_OK);
    sqlite3_close(db);
    EXPECT_TRUE(tables.plain.count("kernels"));
    EXPECT_FALSE(tables.plain.count("sqlite_schema"));
    EXPECT_EQ(tables.other["v"], "a view");
    EXPECT_EQ(tables.other["g"], "a table with generated columns");
    EXPECT_EQ(tables.other["f"], "a virtual table");
    EXPECT_EQ(tables.other["f_content"], "a shadow table");
}

} // namespace
