// Bursts through the real NVTX injection path (issue 13, "Lose no burst within the budget"): at
// default settings a burst that fits the budget is recorded whole, in the parent and in a forked
// child; with a budget far too small for it, every dropped event is counted on its thread and source
// (event_counts), and what each thread produced is exactly what it wrote plus what it dropped.

#include "injection.h"
#include "sqlite_query.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <memory>
#include <string>

using namespace tuneup::test;
using namespace std::chrono_literals;

namespace {

constexpr auto kRunTimeout = 180s;

long long emittedRanges(const std::string& out) {
    long long ranges = -1, marks = -1;
    const size_t at = out.rfind("emitted ");
    if (at != std::string::npos) sscanf(out.c_str() + at, "emitted %lld %lld", &ranges, &marks);
    return ranges;
}

class BurstTest : public ::testing::Test {
protected:
    std::unique_ptr<InjectedProcess> run(
        const std::vector<std::string>& args, std::map<std::string, std::optional<std::string>> env = {}) {
        std::vector<std::string> argv { nvtxClientPath() };
        argv.insert(argv.end(), args.begin(), args.end());
        InjectOptions options;
        options.env = std::move(env);
        auto process = std::make_unique<InjectedProcess>(m_dir, argv, options);
        EXPECT_TRUE(process->wait(kRunTimeout)) << "still running after " << kRunTimeout.count() << " s";
        EXPECT_EQ(process->exitCode(), 0) << "status " << process->rawStatus() << "\nstderr:\n" << process->err();
        return process;
    }

    std::unique_ptr<SqliteQuery> open(const std::string& name) {
        const std::string path = m_dir.out() + "/" + name;
        EXPECT_TRUE(std::filesystem::exists(path)) << path;
        return std::make_unique<SqliteQuery>(path);
    }

    // The stats agree with event_counts, and produced = written + dropped with nothing in flight.
    static void expectCountsAddUp(SqliteQuery& q) {
        const std::string hostSources = "source IN ('nvtx', 'python', 'torch', 'gemm', 'conv')";
        EXPECT_EQ(q.scalar("SELECT coalesce(sum(written), 0) FROM event_counts WHERE " + hostSources),
            q.stat("events.written"));
        EXPECT_EQ(q.scalar("SELECT coalesce(sum(dropped), 0) FROM event_counts WHERE " + hostSources),
            q.stat("events.dropped"));
        EXPECT_EQ(q.stat("events.unwritten_at_exit"), 0);
        EXPECT_EQ(q.stat("events.written") + q.stat("events.dropped"), q.stat("events.produced"));
    }

    TempDir m_dir;
};

} // namespace

TEST_F(BurstTest, FourThreadsAndAForkedChildAreRecordedWholeAtDefaultSettings) {
    // 100 000 ranges, as fast as the threads go: 4 x 20 000 in the parent, 20 000 in a child forked
    // while the parent's threads hold their buffers. Nothing is configured: the default budget.
    auto process = run({ "burst", "--threads", "4", "--ranges", "20000", "--child-ranges", "20000" });
    ASSERT_EQ(emittedRanges(process->out()), 80000);
    const auto files = m_dir.traceFiles();
    ASSERT_EQ(files.size(), 2u) << ::testing::PrintToString(files);

    auto parent = open("run.db");
    EXPECT_EQ(parent->scalar("SELECT count(*) FROM nvtx_ranges WHERE end_ns IS NOT NULL"), 80000);
    EXPECT_EQ(parent->rows("SELECT count(*), count(DISTINCT s.value) FROM nvtx_ranges r "
                           "JOIN strings s ON s.id = r.name_id GROUP BY r.tid"),
        (std::vector<Row>(4, Row { "20000", "20000" })))
        << "every thread's 20 000 ranges, each under its own name";
    EXPECT_EQ(parent->stat("events.produced"), 160000);
    EXPECT_EQ(parent->stat("events.dropped"), 0);
    EXPECT_EQ(parent->rows("SELECT source, count(*), sum(written), sum(dropped) FROM event_counts GROUP BY source "
                           "HAVING source != 'host_sampler'"),
        (std::vector<Row> { { "nvtx", "4", "160000", "0" } }));
    expectCountsAddUp(*parent);

    const std::string childFile = files[0] == "run.db" ? files[1] : files[0];
    auto child = open(childFile);
    EXPECT_EQ(child->meta("role"), "forked-child");
    EXPECT_EQ(child->scalar("SELECT count(*) FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id "
                            "WHERE s.value LIKE 'child/0/%' AND r.end_ns IS NOT NULL"),
        20000);
    EXPECT_EQ(child->scalar("SELECT count(*) FROM nvtx_ranges"), 20000) << "none of the parent's";
    EXPECT_EQ(child->stat("events.produced"), 40000);
    EXPECT_EQ(child->stat("events.dropped"), 0);
    EXPECT_EQ(child->rows("SELECT source, tid = " + *child->meta("pid")
                  + ", written, dropped FROM event_counts "
                    "WHERE source != 'host_sampler'"),
        (std::vector<Row> { { "nvtx", "1", "40000", "0" } }));
    expectCountsAddUp(*child);
}

TEST_F(BurstTest, ATinyBudgetCountsEveryDropOnItsThread) {
    // 1.6 M events from 4 threads into a 1 MiB budget: the writer cannot keep up, most are dropped.
    auto process = run({ "ranges", "--threads", "4", "--ranges", "200000" },
        { { "TUNEUP_MAX_BUFFER_MB", "1" }, { "TUNEUP_BUFFER_KB", "16" } });
    ASSERT_EQ(emittedRanges(process->out()), 800000);
    auto q = open("run.db");
    EXPECT_GT(q->stat("events.dropped"), 0);
    EXPECT_EQ(q->text("SELECT severity FROM stats WHERE name = 'events.dropped'"), "data_loss");
    expectCountsAddUp(*q);
    // Per thread: its name and 200 000 pushes and pops, each written or dropped, exactly.
    EXPECT_EQ(q->rows("SELECT written + dropped, dropped > 0 FROM event_counts WHERE source = 'nvtx'"),
        (std::vector<Row>(4, Row { "400001", "1" })));
    // A pop is kept whenever its push was: the rows are whole ranges, and each thread wrote two
    // events a range, and its name if that was not dropped.
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges WHERE end_ns IS NULL"), 0);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM event_counts c WHERE c.source = 'nvtx' AND c.written != "
                        "2 * (SELECT count(*) FROM nvtx_ranges r WHERE r.tid = c.tid) "
                        "+ (SELECT count(*) FROM threads t JOIN strings s ON s.id = t.name_id "
                        "   WHERE t.tid = c.tid AND s.value LIKE 'worker-%')"),
        0);
}
