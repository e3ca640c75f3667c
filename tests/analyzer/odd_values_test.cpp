// Odd values in readable files (issue 18, items 8 and 9): a meta value that is not the number its key
// needs is said (key, value, file) and left out, never a reason the file cannot be read, except the
// schema version, which decides how everything is read; an event whose times are not times (NULL,
// text, beyond any clock) is left out and counted, one that ends before it starts is clamped and
// counted, and no sum of times wraps around. The reports show every such count.

#include "advise/advisor.h"
#include "import/nsys_sqlite.h"
#include "import/tuneup_file.h"
#include "import/tuneup_import.h"
#include "model/trace_builder.h"
#include "nsys_fixture.h"
#include "report/report.h"
#include "saturating.h"
#include "temp_dir.h"
#include "trace_fixture.h"

#include <gtest/gtest.h>
#include <limits>
#include <sstream>
#include <string>

using namespace tuneup::analysis;

namespace {

// The schema's NOT NULL kept NULL times out; a damaged or altered file need not have it.
constexpr const char* kWithoutNotNull
    = "ALTER TABLE kernels RENAME TO k0; CREATE TABLE kernels AS SELECT * FROM k0; DROP TABLE k0; "
      "ALTER TABLE api_calls RENAME TO a0; CREATE TABLE api_calls AS SELECT * FROM a0; DROP TABLE a0; "
      "ALTER TABLE nvtx_ranges RENAME TO n0; CREATE TABLE nvtx_ranges AS SELECT * FROM n0; DROP TABLE n0; ";

class OddValues : public ::testing::Test {
protected:
    // A good recording, then `sql` run on it.
    std::string recording(const std::string& name, const std::string& sql) const {
        const std::string file = m_dir.path() + "/" + name;
        tuneup::test::writeTrace(file);
        sqlite3* db = nullptr;
        EXPECT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
        tuneup::test::exec(db, sql);
        sqlite3_close(db);
        return file;
    }
    std::string setMeta(const std::string& name, const std::string& key, const std::string& value) const {
        return recording(name, "INSERT OR REPLACE INTO meta VALUES ('" + key + "', '" + value + "')");
    }

    static const ImportStat* stat(const TraceModel& model, const std::string& name) {
        for (const ImportStat& s : model.stats.entries())
            if (s.name == name) return &s;
        return nullptr;
    }

    tuneup::test::TempDir m_dir { "odd_values_test" };
};

TEST_F(OddValues, MetaNumbersThatAreNotNumbersAreSaidAndLeftOut) {
    const struct {
        const char* key;
        const char* value;
    } cases[] = { { "pid", "abc" }, { "pid", "99999999999999999999" }, { "rank", "abc" }, { "rank", "-3" },
        { "rank", "4294967296" }, { "world_size", "abc" }, { "world_size", "0" }, { "pid", " 12" }, { "pid", "1e3" } };
    int n = 0;
    for (const auto& c : cases) {
        const std::string file = setMeta("meta" + std::to_string(n++) + ".db", c.key, c.value);
        const TraceModel model = importTuneupFile(file); // read, whatever the value
        EXPECT_EQ(model.kernels.size(), 3u);
        const ImportStat* problem = stat(model, std::string("meta.") + c.key + ".unreadable");
        ASSERT_NE(problem, nullptr) << c.key << "=" << c.value;
        EXPECT_EQ(problem->severity, StatSeverity::Error);
        EXPECT_NE(problem->description.find(std::string("`") + c.key + "` is '" + c.value + "'"), std::string::npos)
            << problem->description;
        if (std::string(c.key) == "rank") {
            EXPECT_FALSE(model.info.rank);
        }
        if (std::string(c.key) == "world_size") {
            EXPECT_FALSE(model.info.worldSize);
        }
    }
}

TEST_F(OddValues, GoodMetaNumbersAreRead) {
    const TraceModel model = importTuneupFile(
        recording("good.db", "INSERT OR REPLACE INTO meta VALUES ('rank', '3'), ('world_size', '8'), ('pid', '-7')"));
    EXPECT_EQ(model.info.rank, 3);
    EXPECT_EQ(model.info.worldSize, 8);
    for (const ImportStat& s : model.stats.entries())
        EXPECT_EQ(s.name.find("meta."), std::string::npos) << s.name;
}

// A version read as another (4294967299 is 3 in 32 bits) would read every table wrongly: refused, named.
TEST_F(OddValues, SchemaVersionThatIsNotOneIsRefusedWithKeyValueAndFile) {
    for (const char* value : { "4294967299", "abc", "0", "-1", "3.0" }) {
        const std::string file = setMeta(std::string("v") + value + ".db", "schema_version", value);
        try {
            TuneupFile::open(file);
            ADD_FAILURE() << value << " was accepted";
        } catch (const TuneupFileError& e) {
            const std::string message = e.what();
            EXPECT_EQ(e.kind(), TuneupFileError::Kind::Corrupt) << message;
            EXPECT_NE(message.find(file), std::string::npos) << message;
            EXPECT_NE(message.find(std::string("`schema_version` is '") + value + "'"), std::string::npos) << message;
        }
    }
}

TEST_F(OddValues, TuneupEventsWithoutTimesAreLeftOutAndCounted) {
    const std::string file = recording("times.db",
        std::string(kWithoutNotNull)
            + "INSERT INTO kernels (start_ns, end_ns, device_id, name_id) VALUES (NULL, 5, 0, 1), ('abc', 5, 0, 1), "
              "(7, 'x', 0, 1); INSERT INTO api_calls (start_ns, end_ns, tid, api, cbid, name_id) VALUES (NULL, 1, "
              "4242, 1, 211, "
              "2); INSERT INTO nvtx_ranges (start_ns, end_ns, tid, domain_id, name_id, kind) VALUES ('x', NULL, 4242, "
              "0, 3, 1)");
    const TraceModel model = importTuneupFile(file);
    EXPECT_EQ(model.kernels.size(), 3u); // the fixture's, not one at t = 0
    for (size_t i = 0; i < model.kernels.size(); ++i)
        EXPECT_GT(model.kernels.startNs[i], 0);
    const ImportStat* dropped = stat(model, "times.not_integers");
    ASSERT_NE(dropped, nullptr);
    EXPECT_EQ(dropped->value, 5);
    EXPECT_EQ(dropped->severity, StatSeverity::DataLoss);
    // info counts the same rows, from the file alone.
    const TuneupFileSummary summary = TuneupFile::open(file)->summary();
    int64_t bad = 0;
    for (const TableCount& count : summary.eventCounts)
        bad += count.badTimes;
    EXPECT_EQ(bad, 5);
}

TEST_F(OddValues, ExtremeTimesAreLeftOutAndEndsBeforeStartsClamped) {
    const std::string file = recording("extreme.db",
        "DELETE FROM nvtx_ranges; INSERT INTO nvtx_ranges (start_ns, end_ns, tid, domain_id, name_id, kind) VALUES "
        "(-9223372036854775808, 9223372036854775807, 4242, 0, 3, 1), (1100000000, 1100001000, 4242, 0, 3, 1), "
        "(1100002000, 1100003000, 4242, 0, 3, 1); INSERT INTO kernels (start_ns, end_ns, device_id, name_id) VALUES "
        "(-9223372036854775808, 9223372036854775807, 0, 1), (1100002500, 1100002400, 0, 1)");
    const TraceModel model = importTuneupFile(file);
    ASSERT_NE(stat(model, "times.out_of_range"), nullptr);
    EXPECT_EQ(stat(model, "times.out_of_range")->value, 2);
    ASSERT_NE(stat(model, "times.end_before_start"), nullptr);
    EXPECT_EQ(stat(model, "times.end_before_start")->value, 1);
    for (size_t i = 0; i < model.kernels.size(); ++i) {
        EXPECT_TRUE(isPlausibleTime(model.kernels.startNs[i]));
        EXPECT_GE(model.kernels.endNs[i], model.kernels.startNs[i]);
    }
    // The steps and their breakdown hold no negative time ("median step -1 ns").
    const RankAdvice advice = adviseRank(model, 0, 1, {}, {});
    EXPECT_EQ(advice.summary.steps.detection.steps.size(), 2u);
    EXPECT_GT(advice.summary.steps.median.stepNs, 0);
    EXPECT_GE(advice.summary.steps.median.idleNs, 0);
    EXPECT_GE(advice.summary.kernelNs, 0);
}

TEST_F(OddValues, NsysRowsWithNullOrTextTimesAreNotKernelsAtZero) {
    const std::string file = m_dir.path() + "/times.sqlite";
    const int64_t p = tuneup::test::nsysGlobalId(10, 0);
    const std::string row = ", 0, 1, 7, 1, " + std::to_string(p) + ", 1, 1, NULL, 8, 1, 1, 1, 32, 1, 1, 0, 0)";
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
    // Without NOT NULL, as a damaged or altered export may be.
    tuneup::test::execSql(db,
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT); INSERT INTO StringIds VALUES (1, 'k'); "
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, "
        "globalPid, demangledName, shortName, mangledName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, "
        "blockZ, staticSharedMemory, dynamicSharedMemory); INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (NULL, 100"
            + row + ", ('abc', 100" + row + ", (50, NULL" + row + ", (200, 300" + row + ", (400, 350" + row);
    sqlite3_close(db);
    const TraceModel model = importNsysSqlite(file);
    ASSERT_EQ(model.kernels.size(), 2u);
    EXPECT_EQ(model.kernels.startNs[0], 200);
    EXPECT_EQ(model.kernels.endNs[1], 400); // clamped to its start, and counted
    ASSERT_NE(stat(model, "times.not_integers"), nullptr);
    EXPECT_EQ(stat(model, "times.not_integers")->value, 3);
    ASSERT_NE(stat(model, "times.end_before_start"), nullptr);
    EXPECT_EQ(stat(model, "times.end_before_start")->value, 1);
}

// The builder's rule for every importer: rows and their links, collectives and counter values follow.
TEST_F(OddValues, BuilderLeavesOutImplausibleRowsAndWhatPointsAtThem) {
    TraceBuilder b(SourceFormat::KinetoJson, "x.json");
    Kernel bad;
    bad.startNs = std::numeric_limits<int64_t>::max() - 5;
    bad.endNs = std::numeric_limits<int64_t>::max();
    Kernel good;
    good.startNs = 10;
    good.endNs = 20;
    const RowIndex badRow = b.addKernel(bad);
    const RowIndex goodRow = b.addKernel(good);
    Collective c;
    c.origin = CollectiveOrigin::Kernel;
    c.eventRow = badRow;
    c.startNs = 1;
    c.endNs = 2;
    b.addCollective(c);
    c.eventRow = goodRow;
    b.addCollective(c);
    CounterRange range;
    range.startNs = -kMaxTimeNs;
    range.endNs = 0;
    const std::pair<StringId, double> value[] = { { b.intern("m"), 1.0 } };
    b.addCounterRange(range, value);
    const TraceModel m = b.finish();
    EXPECT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.counterRanges.size(), 0u);
    EXPECT_EQ(m.counterValues.size(), 0u);
    EXPECT_EQ(m.stats.value("times.out_of_range"), 2);
    ASSERT_EQ(m.collectives.size(), 2u);
    EXPECT_EQ(m.collectives.eventRow[0], kNoRow);
    EXPECT_EQ(m.collectives.eventRow[1], 0);
}

// Kineto's base time is added to every time: near the ends of int64 it saturates (no undefined
// behaviour), and the row is left out as any other beyond the clock.
TEST_F(OddValues, ShiftingTimesSaturates) {
    TraceBuilder b(SourceFormat::KinetoJson, "x.json");
    Kernel k;
    k.startNs = k.endNs = std::numeric_limits<int64_t>::max() - 1;
    b.addKernel(k);
    b.shiftTimes(10);
    const TraceModel m = b.finish();
    EXPECT_EQ(m.kernels.size(), 0u);
    EXPECT_EQ(m.stats.value("times.out_of_range"), 1);
}

TEST_F(OddValues, SumsSaturate) {
    using tuneup::saturatingAdd;
    using tuneup::saturatingSub;
    constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
    EXPECT_EQ(saturatingAdd(kMax, 1), kMax);
    EXPECT_EQ(saturatingAdd(kMin, -1), kMin);
    EXPECT_EQ(saturatingSub(kMin, 1), kMin);
    EXPECT_EQ(saturatingSub(kMax, -1), kMax);
    EXPECT_EQ(saturatingAdd(2, 3), 5);
    ImportStats stats;
    stats.add("x", StatSeverity::DataLoss, kMax, "");
    stats.add("x", StatSeverity::DataLoss, kMax, "");
    EXPECT_EQ(stats.value("x"), kMax);
}

// Every report says what was lost: the recording's drops and the reading's repairs, by name and count.
TEST_F(OddValues, EveryReportShowsTheDataLoss) {
    const std::string file = recording("loss.db",
        std::string(kWithoutNotNull)
            + "INSERT INTO kernels (start_ns, end_ns, device_id, name_id) VALUES (NULL, 5, 0, 1), (1100009000, "
              "1100008000, 0, "
              "1)");
    const TraceModel model = importTuneupFile(file);
    std::vector<TraceModel> models;
    models.push_back(importTuneupFile(file));
    const AdviceReport report = advise(models, {}, {});
    ASSERT_EQ(report.ranks.size(), 1u);
    for (const ReportFormat& format : reportFormats()) {
        std::ostringstream out;
        format.write(out, report, ReportContext {});
        const std::string text = out.str();
        for (const char* name :
            { "recording.events.dropped", "recording.cupti.dropped", "times.not_integers", "times.end_before_start" })
            EXPECT_NE(text.find(name), std::string::npos) << format.name << " lacks " << name;
    }
    std::ostringstream json;
    writeJsonReport(json, report, ReportContext {});
    EXPECT_NE(json.str().find("\"data_loss\""), std::string::npos);
}

} // namespace

TEST_F(OddValues, ReportsSayWhenGpuCaptureWasLostOrTheRecordingStopped) {
    // Another CUPTI client (torch.profiler) took GPU records over mid-run; the disk filled later.
    const std::string file = recording("lost.db",
        "INSERT INTO meta VALUES ('capture.cuda.lost', 'kernel records after 5 ns: another CUPTI client "
        "(cuptiActivityDisable) disabled kernel'), ('capture.stopped', 'database or disk is full')");
    std::vector<TraceModel> models;
    models.push_back(importTuneupFile(file));
    const AdviceReport report = advise(models, {}, {});
    for (const ReportFormat& format : reportFormats()) {
        std::ostringstream out;
        format.write(out, report, ReportContext {});
        for (const char* said : { "recording.capture.cuda.lost", "another CUPTI client (cuptiActivityDisable)",
                 "recording.capture.stopped", "database or disk is full" })
            EXPECT_NE(out.str().find(said), std::string::npos) << format.name << " lacks " << said;
    }
    // A recording that lost nothing says nothing of it.
    std::vector<TraceModel> clean;
    clean.push_back(importTuneupFile(recording("clean.db", "SELECT 1")));
    std::ostringstream text;
    writeTextReport(text, advise(clean, {}, {}), ReportContext {});
    EXPECT_EQ(text.str().find("recording.capture"), std::string::npos) << text.str();
}
