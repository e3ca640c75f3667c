// The agent injected into real processes (tests/clients/nvtx_client, /bin/sh, python3) with no GPU
// needed: what lands in the files, exactly, and that the host is never harmed. Each test runs in
// its own temporary directory; see injection.h for the environment the programs get.

#include "injection.h"
#include "sqlite_query.h"
#include "trace_schema.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <gtest/gtest.h>
#include <memory>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

using namespace tuneup::test;
using namespace std::chrono_literals;

namespace {

// Generous: CI machines are small and loaded. No test relies on anything being fast.
constexpr auto kRunTimeout = 120s;

struct Emitted {
    long long ranges = -1, marks = -1;
};

Emitted parseEmitted(const std::string& out) {
    Emitted e;
    const size_t at = out.rfind("emitted ");
    if (at != std::string::npos) sscanf(out.c_str() + at, "emitted %lld %lld", &e.ranges, &e.marks);
    return e;
}

InjectOptions notInjected() {
    InjectOptions options;
    options.inject = false;
    return options;
}

InjectOptions withEnv(std::map<std::string, std::optional<std::string>> env) {
    InjectOptions options;
    options.env = std::move(env);
    return options;
}

class InjectionTest : public ::testing::Test {
protected:
    // Runs the test client with `args` to completion; expects exit code 0.
    std::unique_ptr<InjectedProcess> runClient(
        const std::vector<std::string>& args, const InjectOptions& options = {}, const std::string& label = "run") {
        std::vector<std::string> argv { nvtxClientPath() };
        argv.insert(argv.end(), args.begin(), args.end());
        auto process = std::make_unique<InjectedProcess>(m_dir, argv, options, label);
        EXPECT_TRUE(process->wait(kRunTimeout)) << "still running after " << kRunTimeout.count() << " s";
        EXPECT_EQ(process->exitCode(), 0) << "status " << process->rawStatus() << "\nstderr:\n" << process->err();
        return process;
    }

    std::unique_ptr<SqliteQuery> open(const std::string& name = "run.db") {
        const std::string path = m_dir.out() + "/" + name;
        EXPECT_TRUE(std::filesystem::exists(path))
            << path << "; out/ holds: " << ::testing::PrintToString(m_dir.outEntries());
        auto query = std::make_unique<SqliteQuery>(path);
        EXPECT_TRUE(query->ok()) << path << ": " << query->error();
        return query;
    }

    // produced = written + dropped + unwritten_at_exit, exactly.
    static void expectAccountingExact(SqliteQuery& q) {
        const int64_t produced = q.stat("events.produced");
        EXPECT_EQ(q.stat("events.written") + q.stat("events.dropped") + q.stat("events.unwritten_at_exit"), produced);
    }

    TempDir m_dir;
};

} // namespace

TEST_F(InjectionTest, NvtxFromOneThread) {
    auto run = runClient({ "ranges", "--threads", "1", "--ranges", "2000", "--depth", "3" });
    EXPECT_EQ(parseEmitted(run->out()).ranges, 6000);
    EXPECT_EQ(m_dir.traceFiles(), std::vector<std::string> { "run.db" });
    auto q = open();
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges"), 6000);
    EXPECT_EQ(q->rows("SELECT depth, count(*) FROM nvtx_ranges GROUP BY depth ORDER BY depth"),
        (std::vector<Row> { { "0", "2000" }, { "1", "2000" }, { "2", "2000" } }));
    // Names say their nesting: depth 0 is level3/<i>, depth 2 is level1/<i>.
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id "
                        "WHERE s.value NOT LIKE 'level' || (3 - r.depth) || '/%'"),
        0);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges WHERE end_ns IS NULL OR end_ns < start_ns"), 0);
    EXPECT_EQ(q->rows("SELECT s.value FROM threads t JOIN strings s ON s.id = t.name_id"),
        (std::vector<Row> { { "worker-0" } }));
    EXPECT_EQ(q->stat("events.produced"), 2 * 6000 + 1); // + the thread's name
    EXPECT_EQ(q->stat("events.written"), 2 * 6000 + 1);
    EXPECT_EQ(q->stat("events.dropped"), 0);
    EXPECT_EQ(q->stat("nvtx.unmatched_end"), 0);
    expectAccountingExact(*q);
}

TEST_F(InjectionTest, NvtxFromSixteenThreads) {
    // 32 000 events fit the default budget many times over: nothing can be dropped however slow the writer.
    auto run = runClient({ "ranges", "--threads", "16", "--ranges", "500", "--depth", "2" });
    EXPECT_EQ(parseEmitted(run->out()).ranges, 16000);
    auto q = open();
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges"), 16000);
    // Every thread: 500 outer and 500 inner ranges, under its own name.
    const auto perThread = q->rows("SELECT s.value, sum(r.depth = 0), sum(r.depth = 1), count(*) "
                                   "FROM nvtx_ranges r JOIN threads t ON t.tid = r.tid "
                                   "JOIN strings s ON s.id = t.name_id GROUP BY r.tid ORDER BY s.value");
    ASSERT_EQ(perThread.size(), 16u);
    std::set<std::string> names;
    for (const Row& row : perThread) {
        names.insert(*row[0]);
        EXPECT_EQ(row, (Row { row[0], "500", "500", "1000" }));
    }
    for (int t = 0; t < 16; ++t)
        EXPECT_TRUE(names.count("worker-" + std::to_string(t))) << t;
    EXPECT_EQ(q->scalar("SELECT count(*) FROM threads"), 16) << "only the threads that produced";
    // Each inner range lies inside its parent, on the same thread.
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges c JOIN nvtx_ranges p ON p.id = c.parent_id "
                        "WHERE c.depth = 1 AND p.depth = 0 AND p.tid = c.tid "
                        "AND p.start_ns <= c.start_ns AND c.end_ns <= p.end_ns"),
        8000);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges WHERE depth = 0 AND parent_id IS NOT NULL"), 0);
    EXPECT_EQ(q->stat("events.produced"), 2 * 16000 + 16);
    EXPECT_EQ(q->stat("events.dropped"), 0);
    expectAccountingExact(*q);
}

TEST_F(InjectionTest, NestedRangesFiveDeep) {
    auto run = runClient({ "ranges", "--threads", "2", "--ranges", "200", "--depth", "5" });
    EXPECT_EQ(parseEmitted(run->out()).ranges, 2000);
    auto q = open();
    EXPECT_EQ(q->rows("SELECT depth, count(*) FROM nvtx_ranges GROUP BY depth ORDER BY depth"),
        (std::vector<Row> { { "0", "400" }, { "1", "400" }, { "2", "400" }, { "3", "400" }, { "4", "400" } }));
    // Each range's parent is one level up, on the same thread, encloses it and has the same index.
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges c JOIN nvtx_ranges p ON p.id = c.parent_id "
                        "JOIN strings cs ON cs.id = c.name_id JOIN strings ps ON ps.id = p.name_id "
                        "WHERE p.depth = c.depth - 1 AND p.tid = c.tid AND p.start_ns <= c.start_ns "
                        "AND c.end_ns <= p.end_ns AND substr(cs.value, 8) = substr(ps.value, 8)"),
        1600);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id "
                        "WHERE s.value NOT LIKE 'level' || (5 - r.depth) || '/%'"),
        0);
}

TEST_F(InjectionTest, DomainsRegisteredStringsCategoriesMarksAndPayloads) {
    auto run = runClient({ "domains" });
    const Emitted emitted = parseEmitted(run->out());
    EXPECT_EQ(emitted.ranges, 13);
    EXPECT_EQ(emitted.marks, 2);
    EXPECT_EQ(run->err().find("two handles"), std::string::npos) << "one handle per domain name";
    auto q = open();
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges"), emitted.ranges);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_marks"), emitted.marks);

    // Domains: the default one and the two named ones (train created twice: one row).
    EXPECT_EQ(q->rows("SELECT s.value FROM nvtx_domains d LEFT JOIN strings s ON s.id = d.name_id ORDER BY d.id"),
        (std::vector<Row> { { std::nullopt }, { "train" }, { "data" } }));
    const std::string train
        = "(SELECT d.id FROM nvtx_domains d JOIN strings s ON s.id = d.name_id WHERE s.value = 'train')";
    const std::string data
        = "(SELECT d.id FROM nvtx_domains d JOIN strings s ON s.id = d.name_id WHERE s.value = 'data')";

    // Categories, named per domain.
    EXPECT_EQ(q->rows("SELECT c.domain_id = " + train
                  + ", c.category, s.value FROM nvtx_categories c "
                    "JOIN strings s ON s.id = c.name_id ORDER BY c.category"),
        (std::vector<Row> { { "0", "3", "default-category" }, { "1", "7", "optimizer" } }));

    // 5 steps (registered string, green, int64 payload i) each around a zero_grad of category 7.
    EXPECT_EQ(q->rows("SELECT r.depth, s.value, r.color, r.payload_type, r.payload, r.category FROM nvtx_ranges r "
                      "JOIN strings s ON s.id = r.name_id WHERE r.domain_id = "
                  + train
                  + " AND r.depth = 0 "
                    "ORDER BY r.start_ns"),
        (std::vector<Row> { { "0", "step", "4278255360", "2", "0", "0" }, { "0", "step", "4278255360", "2", "1", "0" },
            { "0", "step", "4278255360", "2", "2", "0" }, { "0", "step", "4278255360", "2", "3", "0" },
            { "0", "step", "4278255360", "2", "4", "0" } }));
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges c JOIN nvtx_ranges p ON p.id = c.parent_id "
                        "JOIN strings cs ON cs.id = c.name_id JOIN strings ps ON ps.id = p.name_id "
                        "WHERE cs.value = 'zero_grad' AND ps.value = 'step' AND c.depth = 1 AND c.category = 7 "
                        "AND c.color IS NULL AND c.payload_type IS NULL AND c.domain_id = "
                  + train),
        5);

    // A start/end range begun on the main thread and ended on another, with a double payload.
    EXPECT_EQ(q->rows("SELECT r.kind, r.tid != r.end_tid, r.payload_type, r.payload, r.depth FROM nvtx_ranges r "
                      "JOIN strings s ON s.id = r.name_id WHERE s.value = 'batch' AND r.domain_id = "
                  + data),
        (std::vector<Row> { { "2", "1", "3", "2.5", std::nullopt } }));
    EXPECT_EQ(q->rows("SELECT r.kind, r.tid = r.end_tid, r.domain_id FROM nvtx_ranges r JOIN strings s "
                      "ON s.id = r.name_id WHERE s.value = 'plain-start-end'"),
        (std::vector<Row> { { "2", "1", "0" } }));

    // Marks: a plain one in the default domain, one in data with a uint32 payload.
    EXPECT_EQ(q->rows("SELECT s.value, m.domain_id = " + data
                  + ", m.payload_type, m.payload FROM nvtx_marks m "
                    "JOIN strings s ON s.id = m.name_id ORDER BY m.ts_ns"),
        (std::vector<Row> { { "checkpoint", "0", std::nullopt, std::nullopt }, { "epoch", "1", "4", "3" } }));

    // The range never closed is kept, without an end.
    EXPECT_EQ(q->rows("SELECT r.end_ns, r.depth FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id "
                      "WHERE s.value = 'never-closed'"),
        (std::vector<Row> { { std::nullopt, "0" } }));
    EXPECT_EQ(q->stat("nvtx.unmatched_end"), 0);
    EXPECT_EQ(q->stat("events.dropped"), 0);
    expectAccountingExact(*q);
}

TEST_F(InjectionTest, ForkedChildrenWriteTheirOwnFiles) {
    // Even children end with exit(), odd ones with _exit() like Python's DataLoader workers.
    auto run = runClient({ "fork", "--children", "4", "--ranges", "100" });
    EXPECT_EQ(parseEmitted(run->out()).ranges, 2);
    const std::string mainPid = std::to_string(run->pid());

    auto files = m_dir.traceFiles();
    ASSERT_EQ(files.size(), 5u) << ::testing::PrintToString(files);
    // Every file closed, _exit included: no -wal or -shm beside them to copy along.
    EXPECT_EQ(m_dir.outEntries().size(), 5u) << ::testing::PrintToString(m_dir.outEntries());
    ASSERT_NE(std::find(files.begin(), files.end(), "run.db"), files.end());

    auto parent = open("run.db");
    EXPECT_EQ(parent->meta("pid"), mainPid);
    EXPECT_EQ(parent->meta("role"), "main");
    EXPECT_EQ(parent->rows("SELECT s.value FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id ORDER BY r.start_ns"),
        (std::vector<Row> { { "parent-before-fork" }, { "parent-after-fork" } }));
    EXPECT_EQ(parent->stat("events.produced"), 4) << "the children's events are not the parent's";
    EXPECT_EQ(parent->scalar("SELECT count(*) FROM processes"), 1);
    expectAccountingExact(*parent);

    std::set<std::string> childPids;
    for (const std::string& name : files) {
        if (name == "run.db") continue;
        SCOPED_TRACE(name);
        ASSERT_TRUE(name.starts_with("run.pid") && name.ends_with(".db"));
        const std::string pid = name.substr(7, name.size() - 7 - 3);
        EXPECT_NE(pid, mainPid);
        childPids.insert(pid);
        auto child = open(name);
        EXPECT_EQ(child->meta("pid"), pid);
        EXPECT_EQ(child->meta("parent_pid"), mainPid);
        EXPECT_EQ(child->meta("role"), "forked-child");
        EXPECT_EQ(child->meta("capture.nvtx"), "on");
        EXPECT_TRUE(child->meta("capture.cuda").value_or("").starts_with("off: forked child"))
            << *child->meta("capture.cuda");
        EXPECT_TRUE(child->meta("end_ns")) << "closed properly, _exit included";
        EXPECT_EQ(child->rows("SELECT s.value, count(*), sum(end_ns IS NULL) FROM nvtx_ranges r "
                              "JOIN strings s ON s.id = r.name_id GROUP BY s.value"),
            (std::vector<Row> { { "child-range", "100", "0" } }));
        EXPECT_EQ(child->stat("events.produced"), 200);
        EXPECT_EQ(child->stat("events.written"), 200);
        expectAccountingExact(*child);
        EXPECT_EQ(child->rows("SELECT pid, role FROM processes"), (std::vector<Row> { { pid, "forked-child" } }));
    }
    EXPECT_EQ(childPids.size(), 4u);
}

TEST_F(InjectionTest, ForkWhileTheParentsWriterIsBusy) {
    // A parent thread emits all along, so the parent's writer is inside SQLite at most forks: a
    // child must never inherit a lock it then waits on forever.
    auto run = runClient({ "fork", "--children", "16", "--ranges", "50", "--busy" });
    ASSERT_TRUE(run->exited()) << "hung";
    const long long parentRanges = parseEmitted(run->out()).ranges;
    EXPECT_GT(parentRanges, 2);
    auto files = m_dir.traceFiles();
    ASSERT_EQ(files.size(), 17u) << ::testing::PrintToString(files);
    for (const std::string& name : files) {
        SCOPED_TRACE(name);
        auto q = open(name);
        expectAccountingExact(*q);
        EXPECT_TRUE(q->meta("end_ns"));
        if (name == "run.db") {
            EXPECT_EQ(q->stat("events.produced"), 2 * parentRanges);
            EXPECT_EQ(q->stat("events.written"), 2 * q->scalar("SELECT count(*) FROM nvtx_ranges"));
            EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id "
                                "WHERE s.value = 'child-range'"),
                0);
        } else {
            EXPECT_EQ(q->meta("role"), "forked-child");
            EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id "
                                "WHERE s.value = 'child-range' AND r.end_ns IS NOT NULL"),
                50);
            EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges"), 50) << "the parent's events stay the parent's";
        }
    }
}

namespace {

// Starts the client's endless loop and waits until it has made 1000 ranges.
std::unique_ptr<InjectedProcess> startForever(const TempDir& dir, const std::vector<std::string>& extra = {}) {
    const std::string ready = dir.path() + "/ready";
    std::vector<std::string> argv { nvtxClientPath(), "forever", "--ready", ready };
    argv.insert(argv.end(), extra.begin(), extra.end());
    auto process = std::make_unique<InjectedProcess>(dir, argv);
    const auto deadline = std::chrono::steady_clock::now() + kRunTimeout;
    while (!std::filesystem::exists(ready) && std::chrono::steady_clock::now() < deadline && !process->wait(0ms))
        std::this_thread::sleep_for(20ms);
    EXPECT_TRUE(std::filesystem::exists(ready)) << "the client never got going; stderr:\n" << process->err();
    return process;
}

} // namespace

class SignalTest : public InjectionTest, public ::testing::WithParamInterface<int> { };

TEST_P(SignalTest, FlushesThenDiesByTheSignal) {
    const int sig = GetParam();
    auto process = startForever(m_dir);
    std::this_thread::sleep_for(300ms);
    process->kill(sig);
    ASSERT_TRUE(process->wait(kRunTimeout));
    EXPECT_EQ(process->termSignal(), sig) << "status " << process->rawStatus() << "\nstderr:\n" << process->err();
    // Closed before the process died: the file holds everything, with no -wal beside it.
    EXPECT_EQ(m_dir.outEntries(), (std::vector<std::string> { "run.db" }));

    auto q = open();
    EXPECT_EQ(q->text("PRAGMA quick_check"), "ok");
    EXPECT_TRUE(q->meta("end_ns"));
    EXPECT_EQ(q->scalar("SELECT count(*) FROM processes WHERE end_ns IS NOT NULL"), 1);
    EXPECT_GE(q->scalar("SELECT count(*) FROM nvtx_ranges WHERE end_ns IS NOT NULL"), 1000);
    EXPECT_GE(q->stat("events.produced"), 2000);
    EXPECT_TRUE(q->hasStat("nvtx.unmatched_end"));
    expectAccountingExact(*q);
}

INSTANTIATE_TEST_SUITE_P(
    Injection, SignalTest, ::testing::Values(SIGTERM, SIGINT), [](const ::testing::TestParamInfo<int>& p) {
        return p.param == SIGTERM ? std::string("SIGTERM") : std::string("SIGINT");
    });

TEST_F(InjectionTest, SigkillLeavesAFileWithEveryEventOlderThanASecond) {
    const std::string progressPath = m_dir.path() + "/progress";
    auto process = startForever(m_dir, { "--progress", progressPath });
    // Let it run for a while: the events older than a second at the kill must all be there.
    std::this_thread::sleep_for(2500ms);
    const uint64_t killNs = monotonicNs();
    process->kill(SIGKILL);
    ASSERT_TRUE(process->wait(kRunTimeout));
    EXPECT_EQ(process->termSignal(), SIGKILL);

    // The client wrote "<k> <t>" just before range k began: ranges 0..k-1 began (and ended) before t.
    std::istringstream progress(readFile(progressPath));
    long long k = -1, lastK = -1;
    unsigned long long t = 0, lastT = 0;
    while (progress >> k >> t)
        if (t + 1'000'000'000ull < killNs) {
            lastK = k;
            lastT = t;
        }
    ASSERT_GE(lastK, 1000) << "the client made too few ranges more than a second before the kill";

    auto q = open();
    EXPECT_EQ(q->text("PRAGMA quick_check"), "ok");
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges WHERE start_ns < " + std::to_string(lastT)), lastK)
        << "every range that began more than a second before the kill";
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges WHERE start_ns < " + std::to_string(lastT)
                  + " AND end_ns IS NOT NULL AND end_ns < " + std::to_string(lastT)),
        lastK);
    EXPECT_FALSE(q->meta("end_ns")) << "a killed process never finalises";
    EXPECT_EQ(q->meta("role"), "main");
}

TEST_F(InjectionTest, HarmlessInAShell) {
    InjectedProcess plain(m_dir, { "/bin/sh", "-c", "echo hi" }, notInjected(), "plain");
    InjectedProcess injected(m_dir, { "/bin/sh", "-c", "echo hi" }, {}, "injected");
    ASSERT_TRUE(plain.wait(kRunTimeout));
    ASSERT_TRUE(injected.wait(kRunTimeout));
    EXPECT_EQ(plain.out(), "hi\n");
    EXPECT_EQ(injected.out(), plain.out());
    EXPECT_EQ(injected.exitCode(), 0);
    EXPECT_EQ(injected.err(), "");
    // The shell was the main process: its file says so, with nothing recorded.
    auto q = open();
    EXPECT_EQ(q->meta("pid"), std::to_string(injected.pid()));
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges"), 0);
    EXPECT_EQ(q->stat("events.produced"), 0);
}

TEST_F(InjectionTest, MainThreadStatesAreSampled) {
    // The shell waits for `sleep` (blocked in wait4), counts (running), waits again.
    const std::string script = "sleep 0.3; i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done; sleep 0.3";
    InjectedProcess run(m_dir, { "/bin/sh", "-c", script });
    ASSERT_TRUE(run.wait(kRunTimeout));
    auto q = open();
    std::string sequence;
    for (const auto& row : q->rows("SELECT state, coalesce(syscall, 'unknown') FROM thread_states ORDER BY ts_ns"))
        sequence += *row[0] + ":" + *row[1] + " ";
    EXPECT_EQ(q->scalar("SELECT count(DISTINCT tid) FROM thread_states"), 1);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM thread_states WHERE tid = " + std::to_string(run.pid())),
        q->scalar("SELECT count(*) FROM thread_states"));
    // wait4 is system call 61 on x86-64; changes only, so the loop is one row.
    EXPECT_NE(sequence.find("S:61 R:-1 S:61"), std::string::npos) << sequence;
}

TEST_F(InjectionTest, ThreadSamplingCanBeSwitchedOff) {
    InjectedProcess run(m_dir, { "/bin/sh", "-c", "sleep 0.2" }, withEnv({ { "TUNEUP_SAMPLE_MS", "0" } }));
    ASSERT_TRUE(run.wait(kRunTimeout));
    auto q = open();
    EXPECT_EQ(q->scalar("SELECT count(*) FROM thread_states"), 0);
}

TEST_F(InjectionTest, HarmlessInAShellThatRunsPrograms) {
    // Child processes the shell starts record nothing and leave no file.
    const std::string script = "ls / >/dev/null && /bin/echo one && sh -c 'echo two' && exit 3";
    InjectedProcess injected(m_dir, { "/bin/sh", "-c", script });
    ASSERT_TRUE(injected.wait(kRunTimeout));
    EXPECT_EQ(injected.out(), "one\ntwo\n");
    EXPECT_EQ(injected.exitCode(), 3);
    EXPECT_EQ(injected.err(), "");
    EXPECT_EQ(m_dir.traceFiles(), std::vector<std::string> { "run.db" });
}

#ifdef TUNEUP_TEST_PYTHON
TEST_F(InjectionTest, HarmlessInPython) {
    // The host's own SQLite (Python's sqlite3 module) is untouched by the agent's private one.
    const std::string code = "import sqlite3, sys\n"
                             "db = sqlite3.connect(':memory:')\n"
                             "print(1, db.execute('select sqlite_version()').fetchone()[0])\n"
                             "sys.exit(0)\n";
    TempDir other; // one main process per directory
    InjectedProcess plain(m_dir, { TUNEUP_TEST_PYTHON, "-c", code }, notInjected(), "plain");
    InjectedProcess injected(m_dir, { TUNEUP_TEST_PYTHON, "-c", code }, {}, "injected");
    InjectedProcess simple(other, { TUNEUP_TEST_PYTHON, "-c", "print(1)" }, {}, "simple");
    ASSERT_TRUE(plain.wait(kRunTimeout));
    ASSERT_TRUE(injected.wait(kRunTimeout));
    ASSERT_TRUE(simple.wait(kRunTimeout));
    EXPECT_EQ(plain.exitCode(), 0) << plain.err();
    EXPECT_TRUE(plain.out().starts_with("1 3.")) << plain.out();
    EXPECT_EQ(injected.out(), plain.out());
    EXPECT_EQ(injected.exitCode(), 0);
    EXPECT_EQ(injected.err(), "");
    EXPECT_EQ(simple.out(), "1\n");
    EXPECT_EQ(simple.exitCode(), 0);
    EXPECT_EQ(simple.err(), "");
    EXPECT_EQ(m_dir.traceFiles(), std::vector<std::string> { "run.db" });
    EXPECT_EQ(other.traceFiles(), std::vector<std::string> { "run.db" });
}

TEST_F(InjectionTest, MainProcessesStartingTogetherKeepToTheirOwnFiles) {
    // Six processes that each believe they own run.db (each is its own TUNEUP_MAIN_PID) create it
    // at the same moment: one gets it, the others write their pid-named files, quietly, and none
    // writes into another's file.
    std::vector<std::unique_ptr<InjectedProcess>> runs;
    for (int i = 0; i < 6; ++i)
        runs.push_back(std::make_unique<InjectedProcess>(
            m_dir, std::vector<std::string> { "/bin/sh", "-c", "true" }, InjectOptions {}, "run" + std::to_string(i)));
    std::set<std::string> pids;
    for (auto& run : runs) {
        ASSERT_TRUE(run->wait(kRunTimeout));
        EXPECT_EQ(run->exitCode(), 0);
        std::istringstream lines(run->err());
        for (std::string line; std::getline(lines, line);)
            EXPECT_NE(line.find("belongs to another recording"), std::string::npos) << line;
        pids.insert(std::to_string(run->pid()));
    }
    const auto files = m_dir.traceFiles();
    EXPECT_EQ(files.size(), 6u) << ::testing::PrintToString(files);
    std::set<std::string> filePids;
    for (const std::string& name : files) {
        auto q = open(name);
        EXPECT_EQ(q->text("PRAGMA quick_check"), "ok") << name;
        const std::string pid = q->meta("pid").value_or("");
        filePids.insert(pid);
        EXPECT_TRUE(name == "run.db" || name == "run.pid" + pid + ".db") << name << " holds pid " << pid;
        EXPECT_EQ(q->scalar("SELECT count(*) FROM processes"), 1) << name;
    }
    EXPECT_EQ(filePids, pids);
}
#endif

TEST_F(InjectionTest, NoGpuMetadata) {
    auto run = runClient({ "ranges", "--threads", "1", "--ranges", "10" });
    auto q = open();
    EXPECT_EQ(q->meta("format"), "tuneup-trace");
    EXPECT_EQ(q->meta("schema_version"), std::to_string(tuneup::schema::kSchemaVersion));
    EXPECT_EQ(q->scalar("PRAGMA user_version"), tuneup::schema::kSchemaVersion);
    EXPECT_EQ(q->meta("pid"), std::to_string(run->pid()));
    EXPECT_EQ(q->meta("parent_pid"), std::to_string(getpid()));
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    EXPECT_EQ(q->meta("host"), std::string(host));
    EXPECT_EQ(q->meta("command_line"), nvtxClientPath() + " ranges --threads 1 --ranges 10");
    EXPECT_EQ(q->meta("role"), "main");
    EXPECT_EQ(q->meta("capture.nvtx"), "on");
    const std::string cuda = q->meta("capture.cuda").value_or("");
    EXPECT_TRUE(cuda.starts_with("off: ")) << cuda;
    EXPECT_GT(cuda.size(), 20u) << "says why: " << cuda;
    EXPECT_FALSE(q->meta("rank"));
    EXPECT_EQ(q->meta("clock"), "CLOCK_MONOTONIC");
    EXPECT_TRUE(q->meta("clock.realtime_ns"));
    const int64_t start = std::stoll(q->meta("start_ns").value_or("0"));
    const int64_t end = std::stoll(q->meta("end_ns").value_or("0"));
    EXPECT_GT(start, 0);
    EXPECT_GT(end, start);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges WHERE start_ns < " + std::to_string(start) + " OR end_ns > "
                  + std::to_string(end)),
        0);
    EXPECT_EQ(q->rows("SELECT pid, parent_pid, role, start_ns, end_ns FROM processes"),
        (std::vector<Row> { { std::to_string(run->pid()), std::to_string(getpid()), "main", std::to_string(start),
            std::to_string(end) } }));
    for (const char* stat : { "events.produced", "events.written", "events.dropped", "events.unwritten_at_exit",
             "events.truncated_text", "nvtx.unmatched_end" })
        EXPECT_TRUE(q->hasStat(stat)) << stat;
    EXPECT_EQ(q->scalar("SELECT count(*) FROM kernels") + q->scalar("SELECT count(*) FROM api_calls"), 0);
}

TEST_F(InjectionTest, OverflowIsAccountedExactly) {
    // A 1 MiB budget and a burst of 200000 ranges: most are dropped, and every one is counted.
    auto run = runClient({ "ranges", "--threads", "1", "--ranges", "200000", "--unnamed" },
        withEnv({ { "TUNEUP_MAX_BUFFER_MB", "1" }, { "TUNEUP_BUFFER_KB", "16" } }));
    const long long ranges = parseEmitted(run->out()).ranges;
    ASSERT_EQ(ranges, 200000);
    auto q = open();
    const int64_t produced = q->stat("events.produced");
    const int64_t written = q->stat("events.written");
    const int64_t dropped = q->stat("events.dropped");
    EXPECT_EQ(produced, 2 * ranges);
    EXPECT_EQ(written + dropped + q->stat("events.unwritten_at_exit"), produced);
    EXPECT_EQ(q->stat("events.unwritten_at_exit"), 0) << "a normal exit writes everything";
    EXPECT_GT(dropped, 0);
    EXPECT_EQ(q->text("SELECT severity FROM stats WHERE name = 'events.dropped'"), "data_loss");
    // A pop is kept whenever its push was: no range is left open and nesting stays right.
    EXPECT_EQ(written, 2 * q->scalar("SELECT count(*) FROM nvtx_ranges"));
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges WHERE end_ns IS NULL OR depth != 0"), 0);
    EXPECT_EQ(q->stat("nvtx.unmatched_end"), 0);
}

TEST_F(InjectionTest, DisabledWritesNothing) {
    auto run = runClient({ "ranges", "--threads", "2", "--ranges", "100" }, withEnv({ { "TUNEUP_DISABLE", "1" } }));
    EXPECT_EQ(parseEmitted(run->out()).ranges, 200);
    EXPECT_EQ(run->err(), "");
    EXPECT_TRUE(m_dir.outEntries().empty()) << ::testing::PrintToString(m_dir.outEntries());
}

TEST_F(InjectionTest, RankNamesTheFile) {
    auto run = runClient(
        { "ranges", "--threads", "1", "--ranges", "10" }, withEnv({ { "RANK", "3" }, { "WORLD_SIZE", "8" } }));
    EXPECT_EQ(m_dir.traceFiles(), std::vector<std::string> { "run.rank3.db" });
    auto q = open("run.rank3.db");
    EXPECT_EQ(q->meta("rank"), "3");
    EXPECT_EQ(q->meta("world_size"), "8");
    EXPECT_EQ(q->meta("role"), "rank");
    EXPECT_EQ(q->meta("pid"), std::to_string(run->pid()));
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges"), 10);
}

TEST_F(InjectionTest, AnotherRecordingsFileIsNotOverwritten) {
    auto first = runClient({ "ranges", "--threads", "1", "--ranges", "10" }, {}, "first");
    const std::string before = readFile(m_dir.base());
    ASSERT_FALSE(before.empty());
    auto second = runClient({ "ranges", "--threads", "1", "--ranges", "20" }, {}, "second");
    EXPECT_NE(second->err().find("belongs to another recording"), std::string::npos) << second->err();
    const std::string fallback = "run.pid" + std::to_string(second->pid()) + ".db";
    auto files = m_dir.traceFiles();
    EXPECT_EQ(files, (std::vector<std::string> { "run.db", fallback }));
    EXPECT_EQ(readFile(m_dir.base()), before) << "the first recording's file changed";
    auto q = open("run.db");
    EXPECT_EQ(q->meta("pid"), std::to_string(first->pid()));
    EXPECT_EQ(q->scalar("SELECT count(*) FROM nvtx_ranges"), 10);
    auto r = open(fallback);
    EXPECT_EQ(r->meta("pid"), std::to_string(second->pid()));
    EXPECT_EQ(r->meta("role"), "main");
    EXPECT_EQ(r->scalar("SELECT count(*) FROM nvtx_ranges"), 20);
}

TEST_F(InjectionTest, AForeignFileIsNotOverwritten) {
    const std::string foreign = "not a trace, somebody's notes\n";
    FILE* f = fopen(m_dir.base().c_str(), "w");
    ASSERT_TRUE(f);
    fputs(foreign.c_str(), f);
    fclose(f);
    auto run = runClient({ "ranges", "--threads", "1", "--ranges", "10" });
    EXPECT_EQ(readFile(m_dir.base()), foreign);
    const std::string fallback = "run.pid" + std::to_string(run->pid()) + ".db";
    EXPECT_EQ(m_dir.traceFiles(), (std::vector<std::string> { "run.db", fallback }));
    EXPECT_EQ(open(fallback)->scalar("SELECT count(*) FROM nvtx_ranges"), 10);
}
