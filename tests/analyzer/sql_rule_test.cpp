// User rules in SQL (advise/sql_rule.h) and the tuneup-schema writer they run on for non-tuneup
// traces (export/tuneup_writer.h): on a real Kineto trace from ../shared/traces, on a small tuneup
// file written here with the agent's schema, and on rule files that must be rejected.

#include "advise/advisor.h"
#include "advise/sql_rule.h"
#include "all_rules.h"
#include "export/tuneup_writer.h"
#include "import/importer.h"
#include "model/trace_builder.h"
#include "report/report.h"
#include "shared_traces.h"
#include "temp_dir.h"
#include "trace_fixture.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sstream>

using namespace tuneup;
using namespace tuneup::analysis;
namespace fs = std::filesystem;

namespace {

const fs::path kResnet = fs::path(TUNEUP_SHARED_TRACES) / "param/et_replay/tests/inputs/resnet_kineto.json.gz";

#define REQUIRE_RESNET() TUNEUP_REQUIRE_SHARED_TRACES(fs::path(TUNEUP_SHARED_TRACES))

constexpr std::string_view kPageableRule = "-- Copies from pageable host memory, one finding per copy.\n"
                                           "-- id: pageable-copy-sql\n"
                                           "-- title: Pageable copies\n"
                                           "-- severity: warning\n"
                                           "-- fix-python: loader = DataLoader(dataset, pin_memory=True)\n"
                                           "-- fix-python: x = x.to(device, non_blocking=True)\n"
                                           "SELECT 'pageable copy of ' || bytes || ' bytes' AS title, '' AS detail,\n"
                                           "       start_ns, end_ns\n"
                                           "FROM memcpys WHERE src_kind = 1;\n";

class SqlRuleTest : public ::testing::Test {
protected:
    // Writes `text` as m_dir/<sub>/<name> and returns the directory.
    std::string write(const std::string& name, std::string_view text, const std::string& sub = "rules") {
        fs::create_directories(m_dir / sub);
        std::ofstream(m_dir / sub / name, std::ios::binary) << text;
        return (m_dir / sub).string();
    }
    // The message loadSqlRules gives for a directory holding only this rule file.
    std::string rejection(std::string_view text, const std::vector<std::unique_ptr<Rule>>& existing = {}) {
        const std::string dir = write("bad.sql", text, "bad" + std::to_string(++m_bad));
        try {
            loadSqlRules(dir, existing);
        } catch (const SqlRuleError& e) {
            return e.what();
        }
        ADD_FAILURE() << "accepted:\n" << text;
        return {};
    }
    std::string badPath() const { return (m_dir / ("bad" + std::to_string(m_bad)) / "bad.sql").string(); }

    tuneup::test::TempDir m_tmp { "sql_rule_test" };
    fs::path m_dir = m_tmp.path();
    int m_bad = 0;
};

AdviceReport run(const std::vector<TraceModel>& models, const std::vector<std::unique_ptr<Rule>>& rules) {
    return advise(models, rules, {});
}

int64_t rows(sqlite3* db, const std::string& table) {
    sqlite3_stmt* s = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, ("SELECT count(*) FROM " + table).c_str(), -1, &s, nullptr), SQLITE_OK);
    int64_t n = -1;
    if (sqlite3_step(s) == SQLITE_ROW) n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    return n;
}

int64_t kernelTime(const TraceModel& m) {
    int64_t total = 0;
    for (size_t i = 0; i < m.kernels.size(); ++i)
        total += m.kernels.endNs[i] - m.kernels.startNs[i];
    return total;
}

// A small trace built here: 3 ProfilerStep ranges, 5 kernels, 2 copies (one pageable), a memset,
// a sync, 4 API calls.
TraceModel smallTrace() {
    TraceBuilder b(SourceFormat::KinetoJson, "small.json");
    b.info().rank = 3;
    const ThreadIndex main = b.thread(10, 11);
    b.setThreadName(10, 11, "python");
    for (int s = 0; s < 3; ++s) {
        Annotation a;
        a.startNs = 1000 + s * 1000;
        a.endNs = a.startNs + 1000;
        a.thread = main;
        a.name = b.intern("ProfilerStep#" + std::to_string(s));
        b.addAnnotation(a);
    }
    for (int i = 0; i < 5; ++i) {
        Kernel k;
        k.startNs = 1100 + i * 500;
        k.endNs = k.startNs + 200;
        k.device = 0;
        k.stream = 7;
        k.correlation = uint64_t(i) + 1;
        k.name = b.intern(i % 2 ? "gemm<float>" : "fill & copy");
        b.addKernel(k);
        ApiCall api;
        api.startNs = k.startNs - 50;
        api.endNs = k.startNs - 40;
        api.thread = main;
        api.name = b.intern("cudaLaunchKernel");
        api.correlation = k.correlation;
        if (i < 4) b.addApiCall(api);
    }
    Memcpy c;
    c.startNs = 1050, c.endNs = 1090, c.device = 0, c.bytes = 4096, c.copyKind = CopyKind::HtoD;
    c.srcKind = MemoryKind::Pageable, c.dstKind = MemoryKind::Device;
    b.addMemcpy(c);
    c.startNs = 2050, c.endNs = 2090, c.srcKind = MemoryKind::Pinned;
    b.addMemcpy(c);
    Memset m;
    m.startNs = 3050, m.endNs = 3060, m.device = 0, m.bytes = 64;
    b.addMemset(m);
    Sync y;
    y.startNs = 3500, y.endNs = 3600, y.type = SyncType::StreamSynchronize, y.stream = 7;
    b.addSync(y);
    CpuOp op;
    op.startNs = 1000, op.endNs = 1500, op.thread = main, op.name = b.intern("aten::mm");
    b.addCpuOp(op);
    return b.finish();
}

} // namespace

// ---- rules that fire, and rules that do not ---------------------------------------------------------

TEST_F(SqlRuleTest, FiresOnKinetoTrace) {
    REQUIRE_RESNET();
    std::vector<TraceModel> models;
    models.push_back(importTrace(kResnet.string()));
    const auto rules = loadSqlRules(write("pageable.sql", kPageableRule));
    ASSERT_EQ(rules.size(), 1u);
    EXPECT_EQ(rules[0]->info().id, "pageable-copy-sql");
    const AdviceReport report = run(models, rules);
    ASSERT_EQ(report.outcomes.size(), 1u);
    const RuleOutcome& o = report.outcomes[0];
    ASSERT_EQ(o.status, RuleStatus::Raised) << o.reason;
    // MANIFEST.md: 61 "Memcpy HtoD (Pageable -> Device)" events.
    ASSERT_EQ(o.findings.size(), 61u);
    const Finding& f = o.findings[0];
    EXPECT_EQ(f.ruleId, "pageable-copy-sql");
    EXPECT_EQ(f.severity, Severity::Warning);
    EXPECT_TRUE(f.title.starts_with("pageable copy of ")) << f.title;
    ASSERT_EQ(f.evidence.spans.size(), 1u);
    EXPECT_GT(f.evidence.spans[0].durationNs(), 0);
    EXPECT_FALSE(f.gain); // no gain_ns column
    EXPECT_EQ(f.fixPython, "loader = DataLoader(dataset, pin_memory=True)\nx = x.to(device, non_blocking=True)");
    EXPECT_EQ(f.docPath, (m_dir / "rules" / "pageable.sql").string());

    // Same findings, same reports: the SQL rule's findings sit beside the built-in ones.
    auto all = rules::builtinRules();
    for (auto& r : loadSqlRules(write("pageable.sql", kPageableRule), all))
        all.push_back(std::move(r));
    const AdviceReport both = run(models, all);
    size_t fromSql = 0;
    for (const Finding* x : both.ranked())
        fromSql += x->ruleId == "pageable-copy-sql";
    EXPECT_EQ(fromSql, 61u);
    std::ostringstream md;
    writeMarkdownReport(md, both, {});
    EXPECT_NE(md.str().find("`pageable-copy-sql`"), std::string::npos);
    EXPECT_NE(md.str().find("pageable.sql"), std::string::npos); // the doc link is the rule file
}

TEST_F(SqlRuleTest, QueriesTuneupFileItself) {
    const std::string trace = (m_dir / "run.db").string();
    test::writeTrace(trace); // 2 pageable HtoD copies, 5 NVTX marks (which the TraceModel does not hold)
    std::vector<TraceModel> models;
    models.push_back(importTrace(trace));
    ASSERT_EQ(models[0].info.format, SourceFormat::TuneupDb);
    const std::string dir = write("pageable.sql", kPageableRule);
    write("marks.sql",
        "-- id: marks\n-- title: NVTX marks\n-- severity: info\n"
        "SELECT 'mark at ' || ts_ns AS title, 'from the file' AS detail, ts_ns AS start_ns FROM nvtx_marks");
    const auto rules = loadSqlRules(dir);
    ASSERT_EQ(rules.size(), 2u);
    EXPECT_EQ(rules[0]->info().id, "marks"); // files in name order
    const AdviceReport report = run(models, rules);
    ASSERT_EQ(report.outcomes.size(), 2u);
    EXPECT_EQ(report.outcomes[0].findings.size(), 5u) << report.outcomes[0].reason;
    EXPECT_EQ(report.outcomes[0].findings[0].severity, Severity::Info);
    EXPECT_EQ(report.outcomes[0].findings[0].title, "mark at 1020000000");
    ASSERT_EQ(report.outcomes[1].findings.size(), 2u) << report.outcomes[1].reason;
    EXPECT_EQ(report.outcomes[1].findings[0].title, "pageable copy of 4096 bytes");
}

TEST_F(SqlRuleTest, CleanWhenNoRows) {
    std::vector<TraceModel> models;
    models.push_back(smallTrace());
    const auto rules = loadSqlRules(write("none.sql",
        "-- id: huge-copies\n-- title: Huge copies\n-- severity: error\n"
        "SELECT 'copy' AS title, '' AS detail FROM memcpys WHERE bytes > 1e12"));
    const AdviceReport report = run(models, rules);
    ASSERT_EQ(report.outcomes.size(), 1u);
    EXPECT_EQ(report.outcomes[0].status, RuleStatus::Clean);
    EXPECT_NE(report.outcomes[0].reason.find("returned no rows"), std::string::npos);
    EXPECT_TRUE(report.ranked().empty());
}

TEST_F(SqlRuleTest, KindDecidesWhetherTheMaterialityFloorApplies) {
    std::vector<TraceModel> models;
    models.push_back(smallTrace());
    const std::string query
        = "SELECT 'kernel' AS title, '' AS detail, end_ns - start_ns AS gain_ns FROM kernels LIMIT 1";
    // One folder, two files: loaded in name order.
    write(
        "a-setting.sql", "-- id: a-setting\n-- title: A setting\n-- severity: warning\n-- kind: correctness\n" + query);
    const auto rules
        = loadSqlRules(write("b-time.sql", "-- id: some-time\n-- title: Some time\n-- severity: warning\n" + query));
    AdviceReport report = run(models, rules);
    ASSERT_EQ(report.outcomes.size(), 2u);
    EXPECT_EQ(report.outcomes[0].findings.at(0).kind, FindingKind::Correctness);
    EXPECT_EQ(report.outcomes[1].findings.at(0).kind, FindingKind::Performance);
    // Nanoseconds of a kernel, however large a share of this small trace's step (--min-gain 100): under the
    // floor for a performance finding, not for a correctness one.
    MaterialityFloor timeOnly;
    timeOnly.minStepShare = 1.0;
    EXPECT_EQ(applyMaterialityFloor(report.outcomes, timeOnly), 1u);
    EXPECT_EQ(report.outcomes[0].status, RuleStatus::Raised);
    EXPECT_EQ(report.outcomes[1].status, RuleStatus::Clean);
    EXPECT_NE(rejection("-- id: bad-kind\n-- title: Bad\n-- severity: info\n-- kind: cosmetic\n" + query)
                  .find("kind 'cosmetic' is not one of performance, correctness, information"),
        std::string::npos);
}

TEST_F(SqlRuleTest, GainSpansAndExtraColumnsOnBuiltDatabase) {
    std::vector<TraceModel> models;
    models.push_back(smallTrace());
    const auto rules = loadSqlRules(write("kernels.sql",
        "-- id: kernels-by-name\n-- title: Kernels by name\n-- severity: warning\n"
        "-- summary: Total kernel time per name.\n"
        "SELECT s.value AS title, count(*) || ' launches' AS detail, min(k.start_ns) AS start_ns,\n"
        "       max(k.end_ns) AS end_ns, sum(k.end_ns - k.start_ns) / 3 AS gain_ns, count(*) AS launches,\n"
        "       count(a.id) AS with_api_call\n"
        "FROM kernels k JOIN strings s ON s.id = k.name_id LEFT JOIN api_calls a USING (correlation_id)\n"
        "GROUP BY s.value ORDER BY s.value"));
    EXPECT_EQ(rules[0]->info().summary, "Total kernel time per name.");
    const AdviceReport report = run(models, rules);
    const RuleOutcome& o = report.outcomes.at(0);
    ASSERT_EQ(o.findings.size(), 2u) << o.reason;
    const Finding& fill = o.findings[0];
    EXPECT_EQ(fill.title, "fill & copy");
    EXPECT_EQ(fill.detail, "3 launches");
    ASSERT_EQ(fill.evidence.spans.size(), 1u);
    EXPECT_EQ(fill.evidence.spans[0].startNs, 1100);
    EXPECT_EQ(fill.evidence.spans[0].endNs, 3300);
    ASSERT_TRUE(fill.gain);
    EXPECT_EQ(fill.gain->perStepNs, 200); // 3 x 200 ns / 3
    EXPECT_DOUBLE_EQ(fill.gain->stepShare, 0.2); // of a 1000 ns step
    const std::vector<std::pair<std::string, std::string>> facts = { { "launches", "3" }, { "with_api_call", "2" } };
    EXPECT_EQ(fill.evidence.facts, facts); // kernel 5 has no API call
    EXPECT_EQ(o.findings[1].title, "gemm<float>");
    // Ranked by gain with the other findings; reports show the extra columns.
    std::ostringstream html;
    writeHtmlReport(html, report, {});
    EXPECT_NE(html.str().find("<h3>1. fill &amp; copy</h3>"), std::string::npos);
    EXPECT_NE(html.str().find("<tr><th>with_api_call</th><td>2</td></tr>"), std::string::npos);
}

TEST_F(SqlRuleTest, RankedFindingsCarryTheirRank) {
    std::vector<TraceModel> models;
    models.push_back(smallTrace());
    models.push_back(smallTrace());
    models[1].info.rank = 4;
    const AdviceReport report = run(models, loadSqlRules(write("pageable.sql", kPageableRule)));
    ASSERT_EQ(report.outcomes.size(), 2u);
    ASSERT_EQ(report.outcomes[0].findings.size(), 1u);
    EXPECT_EQ(report.outcomes[0].findings[0].rank, 3);
    ASSERT_EQ(report.outcomes[1].findings.size(), 1u);
    EXPECT_EQ(report.outcomes[1].findings[0].rank, 4);
}

TEST_F(SqlRuleTest, QueryFailingOnATraceIsNotEvaluated) {
    // Compiles against the schema, fails while running: a clear "not evaluated", not a crash.
    std::vector<TraceModel> models;
    models.push_back(smallTrace());
    const AdviceReport report = run(models,
        loadSqlRules(write("boom.sql",
            "-- id: boom\n-- title: Boom\n-- severity: info\n"
            "SELECT 'x' AS title, '' AS detail FROM kernels WHERE abs(-9223372036854775808) > 0")));
    ASSERT_EQ(report.outcomes.size(), 1u);
    EXPECT_EQ(report.outcomes[0].status, RuleStatus::NotEvaluated);
    EXPECT_NE(report.outcomes[0].reason.find("integer overflow"), std::string::npos) << report.outcomes[0].reason;
    EXPECT_NE(report.outcomes[0].reason.find("boom.sql"), std::string::npos);
}

TEST_F(SqlRuleTest, ManyRowsAreCapped) {
    std::vector<TraceModel> models;
    models.push_back(smallTrace());
    const AdviceReport report = run(models,
        loadSqlRules(write("many.sql",
            "-- id: many\n-- title: Many\n-- severity: info\n"
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 250)\n"
            "SELECT 'row ' || i AS title, '' AS detail FROM n")));
    const RuleOutcome& o = report.outcomes.at(0);
    ASSERT_EQ(o.findings.size(), SqlRule::kMaxFindings);
    ASSERT_FALSE(o.findings[0].evidence.facts.empty());
    EXPECT_EQ(o.findings[0].evidence.facts.back().second, "250 (the first 200 are reported)");
}

// ---- rule files that are rejected --------------------------------------------------------------------

TEST_F(SqlRuleTest, RejectsMissingHeaderFields) {
    std::string e = rejection("-- title: t\n-- severity: warning\nSELECT 'a' AS title, '' AS detail");
    EXPECT_EQ(e.rfind(badPath() + ":1: ", 0), 0u) << e;
    EXPECT_NE(e.find("`-- id: my-rule`"), std::string::npos) << e;
    e = rejection("-- id: a\nSELECT 'a' AS title, '' AS detail");
    EXPECT_NE(e.find("`-- title: what it finds` `-- severity: warning`"), std::string::npos) << e;
    e = rejection("-- id: a\n-- title: t\n-- severity: fatal\nSELECT 'a' AS title, '' AS detail");
    EXPECT_EQ(e, badPath() + ":3: severity 'fatal' is not one of info, warning, error");
    e = rejection("-- id: Big Copies\n-- title: t\n-- severity: info\nSELECT 'a' AS title, '' AS detail");
    EXPECT_EQ(e.rfind(badPath() + ":1: rule id 'Big Copies' is not valid", 0), 0u) << e;
    e = rejection("-- id: a\n-- id: b\n-- title: t\n-- severity: info\nSELECT 'a' AS title, '' AS detail");
    EXPECT_EQ(e, badPath() + ":2: `id` is given twice (first on line 1)");
}

TEST_F(SqlRuleTest, RejectsTwoStatements) {
    const std::string e = rejection("-- id: a\n-- title: t\n-- severity: info\n"
                                    "SELECT 'a' AS title, '' AS detail;\n"
                                    "  -- a comment between\n"
                                    "SELECT 'b' AS title, '' AS detail;\n");
    EXPECT_EQ(e, badPath() + ":6: a second statement starts here; a rule file holds exactly one SELECT");
    // A trailing semicolon and comment are fine.
    EXPECT_NO_THROW(loadSqlRules(write("ok.sql",
        "-- id: a\n-- title: t\n-- severity: info\n"
        "SELECT 'a' AS title, '' AS detail; -- done\n;\n")));
}

TEST_F(SqlRuleTest, RejectsWhatIsNotAReadOnlySelect) {
    std::string e = rejection("-- id: a\n-- title: t\n-- severity: info\n\nUPDATE memcpys SET bytes = 0");
    EXPECT_EQ(
        e, badPath() + ":5: the statement starts with `update`; a rule is one read-only SELECT (or WITH ... SELECT)");
    e = rejection("-- id: a\n-- title: t\n-- severity: info\n"
                  "WITH k AS (SELECT id FROM kernels) DELETE FROM kernels WHERE id IN (SELECT id FROM k)");
    EXPECT_EQ(e, badPath() + ":4: the statement would change the database; a rule is one read-only SELECT");
    e = rejection("-- id: a\n-- title: t\n-- severity: info\nATTACH '/tmp/x.db' AS x");
    EXPECT_NE(e.find(":4: the statement starts with `attach`"), std::string::npos) << e;
    e = rejection("-- id: a\n-- title: t\n-- severity: info\n-- only comments\n");
    EXPECT_EQ(e, badPath() + ": holds no SQL statement; write one SELECT after the header");
}

TEST_F(SqlRuleTest, RejectsBadSqlWithItsLine) {
    std::string e = rejection("-- id: a\n-- title: t\n-- severity: info\n"
                              "SELECT 'a' AS title, '' AS detail\n"
                              "FROM memcpys\n"
                              "WHERE no_such_column > 3");
    EXPECT_EQ(e.rfind(badPath() + ":6: no such column: no_such_column", 0), 0u) << e;
    e = rejection("-- id: a\n-- title: t\n-- severity: info\nSELECT 'a' AS title, '' AS detail\nFROM no_such_table");
    EXPECT_EQ(e.rfind(badPath() + ":5: no such table: no_such_table", 0), 0u) << e;
    e = rejection("-- id: a\n-- title: t\n-- severity: info\nSELECT 'a' AS title,, '' AS detail");
    EXPECT_EQ(e.rfind(badPath() + ":4: near \",\": syntax error", 0), 0u) << e;
    e = rejection("-- id: a\n-- title: t\n-- severity: info\nSELECT 'a' AS name, '' AS detail FROM kernels");
    EXPECT_EQ(e,
        badPath()
            + ":4: the SELECT returns no `title` column (it returns: name, detail); name one with `... AS title`");
}

TEST_F(SqlRuleTest, RejectsIdClashes) {
    std::string e
        = rejection("-- id: pageable-memcpy\n-- title: t\n-- severity: info\nSELECT 'a' AS title, '' AS detail",
            rules::builtinRules());
    EXPECT_EQ(e.rfind(badPath() + ":1: rule id 'pageable-memcpy' is already used by a built-in rule", 0), 0u) << e;

    write("a.sql", "-- id: same\n-- title: t\n-- severity: info\nSELECT 'a' AS title, '' AS detail", "clash");
    const std::string dir
        = write("b.sql", "\n-- id: same\n-- title: t\n-- severity: info\nSELECT 'b' AS title, '' AS detail", "clash");
    try {
        loadSqlRules(dir);
        ADD_FAILURE() << "two rules with one id were accepted";
    } catch (const SqlRuleError& x) {
        EXPECT_EQ(std::string(x.what()),
            dir + "/b.sql:2: rule id 'same' is already used by " + dir + "/a.sql:1; choose another id");
    }
    // Loaded before, from another directory: also a clash.
    const auto first = loadSqlRules(
        write("a.sql", "-- id: mine\n-- title: t\n-- severity: info\nSELECT 'a' AS title, '' AS detail", "one"));
    e = rejection("-- id: mine\n-- title: t\n-- severity: info\nSELECT 'a' AS title, '' AS detail", first);
    EXPECT_NE(e.find("is already used by " + (m_dir / "one" / "a.sql").string() + ":1"), std::string::npos) << e;
}

TEST_F(SqlRuleTest, RejectsMissingOrEmptyDirectories) {
    const std::string missing = (m_dir / "nope").string();
    try {
        loadSqlRules(missing);
        ADD_FAILURE();
    } catch (const SqlRuleError& e) {
        EXPECT_EQ(std::string(e.what()).rfind(missing + ": no such directory", 0), 0u) << e.what();
    }
    fs::create_directories(m_dir / "empty");
    try {
        loadSqlRules((m_dir / "empty").string());
        ADD_FAILURE();
    } catch (const SqlRuleError& e) {
        EXPECT_EQ(std::string(e.what()), (m_dir / "empty").string() + ": holds no .sql rule files");
    }
    // One file may be given instead of a directory.
    write("one.sql", kPageableRule, "single");
    EXPECT_EQ(loadSqlRules((m_dir / "single" / "one.sql").string()).size(), 1u);
}

// ---- the writer ----------------------------------------------------------------------------------------

TEST_F(SqlRuleTest, WriterFillsTheSchema) {
    const TraceModel model = smallTrace();
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
    writeTuneupSchema(model, db);
    EXPECT_EQ(rows(db, "kernels"), 5);
    EXPECT_EQ(rows(db, "memcpys"), 2);
    EXPECT_EQ(rows(db, "memsets"), 1);
    EXPECT_EQ(rows(db, "syncs"), 1);
    EXPECT_EQ(rows(db, "api_calls"), 4);
    EXPECT_EQ(rows(db, "nvtx_ranges"), 3);
    EXPECT_EQ(rows(db, "threads"), 1);
    EXPECT_EQ(rows(db, "kernels k JOIN api_calls a USING (correlation_id)"), 4);
    EXPECT_EQ(rows(db, "threads t JOIN strings s ON s.id = t.name_id WHERE s.value = 'python' AND t.tid = 11"), 1);
    EXPECT_EQ(rows(db, "meta WHERE key = 'rank' AND value = '3'"), 1);
    EXPECT_EQ(rows(db, "meta WHERE key = 'format' AND value = 'tuneup-trace'"), 1);
    EXPECT_EQ(rows(db, "stats WHERE name = 'export.not_written.cpu_ops' AND value = 1"), 1); // the aten::mm
    EXPECT_EQ(rows(db, "memcpys m JOIN memory_kinds k ON k.code = m.src_kind WHERE k.name = 'pageable'"), 1);
    sqlite3_close(db);
}

TEST_F(SqlRuleTest, WriterRoundTripsThroughAFile) {
    const TraceModel model = smallTrace();
    const std::string path = (m_dir / "small.db").string();
    writeTuneupFile(model, path);
    EXPECT_FALSE(fs::exists(path + ".partial"));
    const TraceModel back = importTrace(path);
    EXPECT_EQ(back.info.format, SourceFormat::TuneupDb);
    EXPECT_EQ(back.info.rank.value_or(-1), 3);
    EXPECT_EQ(back.kernels.size(), 5u);
    EXPECT_EQ(back.memcpys.size(), 2u);
    EXPECT_EQ(back.memsets.size(), 1u);
    EXPECT_EQ(back.syncs.size(), 1u);
    EXPECT_EQ(back.apiCalls.size(), 4u);
    EXPECT_EQ(back.annotations.size(), 3u);
    EXPECT_EQ(kernelTime(back), kernelTime(model));
    for (size_t i = 0; i < model.kernels.size(); ++i)
        EXPECT_EQ(back.str(back.kernels.name[i]), model.str(model.kernels.name[i]));
    EXPECT_EQ(back.memcpys.srcKind[0], MemoryKind::Pageable);
    EXPECT_EQ(back.kernels.apiCall[0], 0); // linked by correlation again
    // An existing file is never overwritten.
    try {
        writeTuneupFile(model, path);
        ADD_FAILURE();
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()), path + ": already exists; remove it or choose another name");
    }
}

TEST_F(SqlRuleTest, WriterRoundTripsAKinetoTrace) {
    REQUIRE_RESNET();
    const TraceModel model = importTrace(kResnet.string());
    ASSERT_GT(model.kernels.size(), 0u);
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(":memory:", &db), SQLITE_OK);
    writeTuneupSchema(model, db);
    EXPECT_EQ(rows(db, "kernels"), int64_t(model.kernels.size()));
    EXPECT_EQ(rows(db, "memcpys"), int64_t(model.memcpys.size()));
    EXPECT_EQ(rows(db, "memsets"), int64_t(model.memsets.size()));
    EXPECT_EQ(rows(db, "api_calls"), int64_t(model.apiCalls.size()));
    EXPECT_EQ(rows(db, "nvtx_ranges"), int64_t(model.annotations.size()));
    EXPECT_EQ(rows(db, "memcpys WHERE src_kind = 1"), 61); // MANIFEST.md
    sqlite3_close(db);

    const std::string path = (m_dir / "resnet.db").string();
    writeTuneupFile(model, path);
    const TraceModel back = importTrace(path);
    EXPECT_EQ(back.kernels.size(), model.kernels.size());
    EXPECT_EQ(back.memcpys.size(), model.memcpys.size());
    EXPECT_EQ(back.memsets.size(), model.memsets.size());
    EXPECT_EQ(back.apiCalls.size(), model.apiCalls.size());
    EXPECT_EQ(back.annotations.size(), model.annotations.size());
    EXPECT_EQ(kernelTime(back), kernelTime(model));
}
