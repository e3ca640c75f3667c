// The agent never changes what the program does, and says truthfully what it lost: real processes
// (tests/clients/guard_client) that close the agent's descriptors, exec, fill their disk, set garbage
// settings, or end in every way while CUPTI (a stand-in that checks the call order) is loaded.

#include "injection.h"
#include "sqlite_query.h"

#include <csignal>
#include <filesystem>
#include <gtest/gtest.h>
#include <memory>
#include <sys/wait.h>

using namespace tuneup::test;
using namespace std::chrono_literals;

namespace {

constexpr auto kRunTimeout = 120s;

std::string guardClient() {
    return TUNEUP_TEST_GUARD_CLIENT;
}

// Every "emitted N" line the program printed, summed (an exec'd image prints its own).
long long emitted(const std::string& out) {
    long long total = 0, n = 0;
    for (size_t at = out.find("emitted "); at != std::string::npos; at = out.find("emitted ", at + 1))
        if (sscanf(out.c_str() + at, "emitted %lld", &n) == 1) total += n;
    return total;
}

size_t occurrences(const std::string& text, const std::string& needle) {
    size_t count = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
        ++count;
    return count;
}

InjectOptions withEnv(std::map<std::string, std::optional<std::string>> env) {
    InjectOptions options;
    options.env = std::move(env);
    return options;
}

class ReliabilityTest : public ::testing::Test {
protected:
    std::unique_ptr<InjectedProcess> run(const std::vector<std::string>& args, const InjectOptions& options = {}) {
        std::vector<std::string> argv { guardClient() };
        argv.insert(argv.end(), args.begin(), args.end());
        auto process = std::make_unique<InjectedProcess>(m_dir, argv, options);
        EXPECT_TRUE(process->wait(kRunTimeout)) << "still running after " << kRunTimeout.count() << " s";
        return process;
    }

    std::unique_ptr<SqliteQuery> open(const std::string& name = "run.db") {
        auto query = std::make_unique<SqliteQuery>(m_dir.out() + "/" + name);
        EXPECT_TRUE(query->ok()) << name << ": " << query->error();
        return query;
    }

    static int64_t ranges(SqliteQuery& q, const std::string& name) {
        return q.scalar("SELECT count(*) FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id WHERE s.value = '" + name
            + "' AND r.end_ns IS NOT NULL");
    }

    // The write failure is said once, and nothing else about it (no commit or rollback errors after).
    static void expectOneMessage(const std::string& err) {
        EXPECT_EQ(occurrences(err, "recording stopped: the file keeps the events committed before"), 1u) << err;
        for (const char* stray : { "COMMIT", "ROLLBACK", "cannot commit", "cannot rollback", "cannot prepare",
                 "no transaction", "SQL logic error" })
            EXPECT_EQ(occurrences(err, stray), 0u) << stray << " in:\n" << err;
    }

    // The file is whole, finished, and its counts add up.
    static void expectFinishedAndAccounted(SqliteQuery& q) {
        EXPECT_EQ(q.text("PRAGMA quick_check"), "ok");
        EXPECT_TRUE(q.meta("end_ns"));
        EXPECT_EQ(q.stat("events.written") + q.stat("events.dropped") + q.stat("events.unwritten_at_exit"),
            q.stat("events.produced"));
    }

    TempDir m_dir;
};

} // namespace

// ---- descriptors ----

TEST_F(ReliabilityTest, AProgramThatClosesEveryDescriptorExitsAndKeepsItsRecording) {
    // Before the fix the writer waited forever on its stop pipe, which the program had closed.
    auto process = run({ "close-fds" });
    EXPECT_EQ(process->exitCode(), 0) << process->err();
    EXPECT_EQ(emitted(process->out()), 2000);
    auto q = open();
    expectFinishedAndAccounted(*q);
    // Closed between two commits: the agent opened its file again and lost nothing.
    EXPECT_EQ(ranges(*q, "before-close"), 1000);
    EXPECT_EQ(ranges(*q, "after-close"), 1000);
    EXPECT_EQ(q->stat("events.dropped"), 0);
}

TEST_F(ReliabilityTest, DescriptorNumbersTheProgramReusesAreNeverWritten) {
    // The program's own files take the numbers of the agent's closed descriptors (SQLite's database,
    // WAL and shared memory): every commit after that would have written pages into them.
    auto process = run({ "close-fds", "--reopen", "40" });
    EXPECT_EQ(process->exitCode(), 0) << "the program found one of its files changed\n" << process->err();
    for (int i = 0; i < 40; ++i)
        EXPECT_EQ(readFile(m_dir.path() + "/mine." + std::to_string(i)),
            "the program's own data, which no one else may touch\n")
            << "mine." << i;
    auto q = open();
    expectFinishedAndAccounted(*q);
    EXPECT_EQ(ranges(*q, "before-close"), 1000);
    EXPECT_EQ(ranges(*q, "after-close"), 1000);
}

// ---- exec ----

TEST_F(ReliabilityTest, RangesRecordedJustBeforeAnExecAreKept) {
    // Before the fix the exec right after the ranges left the file without them, and the stats of the
    // image after the exec claimed to be the whole story.
    auto process = run({ "exec", "--ranges", "500" });
    EXPECT_EQ(process->exitCode(), 0) << process->err();
    EXPECT_EQ(emitted(process->out()), 1000);
    auto q = open();
    expectFinishedAndAccounted(*q);
    EXPECT_EQ(ranges(*q, "before-exec"), 500);
    EXPECT_EQ(ranges(*q, "after-exec"), 500);
    EXPECT_EQ(q->meta("exec_count"), "1");
    // Both images' events, counted once each.
    EXPECT_EQ(q->stat("events.produced"), 2000);
    EXPECT_EQ(q->stat("events.written"), 2000);
    EXPECT_EQ(q->stat("events.dropped"), 0);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM processes WHERE end_ns IS NOT NULL"), 1);
}

TEST_F(ReliabilityTest, AFailedExecLeavesTheRecordingGoing) {
    auto process = run({ "exec", "--ranges", "300", "--fail" });
    EXPECT_EQ(process->exitCode(), 0) << process->err();
    auto q = open();
    expectFinishedAndAccounted(*q);
    EXPECT_EQ(ranges(*q, "before-exec"), 300);
    EXPECT_EQ(ranges(*q, "after-failed-exec"), 300);
    EXPECT_EQ(ranges(*q, "after-exec"), 300);
    EXPECT_EQ(q->meta("exec_count"), "1") << "only the exec that happened";
    EXPECT_EQ(q->stat("events.produced"), 1800);
    EXPECT_EQ(q->stat("events.dropped"), 0);
}

// ---- a file that cannot grow ----

// RLIMIT_FSIZE makes the kernel fail the agent's writes past a size exactly as a full disk does for
// SQLite's unix VFS (a short write: SQLITE_FULL, then failed writes), in any directory and without
// privileges, so this runs everywhere. The space the agent holds back on the disk cannot help under a
// per-file limit: the agent stops while its final record still fits under it. FullDiskInATmpfs below
// covers a real ENOSPC. SIGXFSZ stays at its default (terminate): the agent's writes must not kill the
// program.
TEST_F(ReliabilityTest, AFileThatCannotGrowStopsTheRecordingCleanly) {
    auto process = run({ "fill", "--fsize", std::to_string(6 << 20), "--ranges", "300000" });
    EXPECT_EQ(process->exitCode(), 0) << "status " << process->rawStatus() << "\n" << process->err();
    EXPECT_EQ(emitted(process->out()), 300000);
    const std::string err = process->err();
    expectOneMessage(err);
    EXPECT_EQ(occurrences(err, "RLIMIT_FSIZE = 6291456 bytes"), 1u) << "the cause, not a full disk:\n" << err;
    auto q = open();
    expectFinishedAndAccounted(*q);
    EXPECT_NE(q->meta("capture.stopped").value_or("").find("RLIMIT_FSIZE"), std::string::npos);
    const int64_t rows = q->scalar("SELECT count(*) FROM nvtx_ranges");
    EXPECT_GT(rows, 1000) << "what was committed before is kept";
    EXPECT_LE(std::llabs(q->stat("events.written") - 2 * rows), 1) << "a push without its pop at most";
    EXPECT_EQ(q->stat("events.produced"), 600000);
    EXPECT_EQ(q->stat("events.dropped_write_failed") + q->stat("events.written"), 600000)
        << "nothing dropped for any other reason";
}

// The same through `tuneup record`, as a user sees it: its last line says the recording stopped early
// and why, never that the process did not exit cleanly.
TEST_F(ReliabilityTest, TuneupRecordSaysWhyTheRecordingStoppedEarly) {
    const std::string command = "'" + std::string(TUNEUP_TEST_CLI) + "' record -o '" + m_dir.out() + "/run.db' -- '"
        + guardClient() + "' fill --fsize " + std::to_string(6 << 20) + " --ranges 300000 > '" + m_dir.path()
        + "/record.out' 2> '" + m_dir.path() + "/record.err'";
    const int status = system(command.c_str());
    const std::string err = readFile(m_dir.path() + "/record.err");
    ASSERT_TRUE(WIFEXITED(status)) << err;
    EXPECT_EQ(WEXITSTATUS(status), 0) << err;
    EXPECT_EQ(occurrences(err, "tuneup: recorded "), 1u) << err;
    EXPECT_EQ(occurrences(err, "recording stopped early: cannot write after"), 1u) << err;
    EXPECT_EQ(occurrences(err, "RLIMIT_FSIZE = 6291456 bytes"), 2u) << "the agent's message and tuneup's:\n" << err;
    EXPECT_EQ(occurrences(err, "did not exit cleanly"), 0u) << err;
    EXPECT_EQ(occurrences(err, "incomplete"), 0u) << err;
}

// A real full disk: an 8 MB tmpfs mounted in a mount namespace of our own (unshare; as root, or as a
// user where user namespaces are allowed), recorded with `tuneup record` as a user would.
TEST_F(ReliabilityTest, FullDiskInATmpfs) {
    if (system("unshare -rm true >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "unshare -rm is not allowed here (no user namespaces); "
                        "AFileThatCannotGrowStopsTheRecordingCleanly covers the write failure";
    const std::string mountPoint = m_dir.path() + "/small";
    std::filesystem::create_directory(mountPoint);
    const std::string script = "mount -t tmpfs -o size=8m tmpfs '" + mountPoint + "' || exit 90; '"
        + std::string(TUNEUP_TEST_CLI) + "' record -o '" + mountPoint + "/run.db' -- '" + guardClient()
        + "' fill --fsize 1073741824 --ranges 400000 > '" + m_dir.path() + "/record.out' 2> '" + m_dir.path()
        + "/record.err'; code=$?; cp '" + mountPoint + "'/run.db* '" + m_dir.out() + "/'; exit $code";
    const std::string command = "unshare -rm sh -c \"" + script + "\"";
    const int status = system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << command;
    ASSERT_NE(WEXITSTATUS(status), 90) << "could not mount the tmpfs";
    const std::string err = readFile(m_dir.path() + "/record.err");
    EXPECT_EQ(WEXITSTATUS(status), 0) << err;
    expectOneMessage(err);
    EXPECT_EQ(occurrences(err, "No space left on device"), 2u) << "the agent's message and the final report:\n" << err;
    EXPECT_EQ(occurrences(err, "did not exit cleanly"), 0u) << err;
    EXPECT_EQ(occurrences(err, "recording stopped early: cannot write"), 1u) << err;
    auto q = open();
    expectFinishedAndAccounted(*q);
    const int64_t rows = q->scalar("SELECT count(*) FROM nvtx_ranges");
    EXPECT_GT(rows, 1000);
    EXPECT_LE(std::llabs(q->stat("events.written") - 2 * rows), 1);
    EXPECT_EQ(q->stat("events.produced"), 800000);
    EXPECT_GT(q->stat("events.dropped_write_failed"), 0);
    EXPECT_EQ(q->stat("events.dropped_write_failed") + q->stat("events.written"), 800000)
        << "nothing dropped for any other reason";
}

// ---- settings ----

TEST_F(ReliabilityTest, GarbageSettingsWarnOnceAndUseTheDefaults) {
    // A shell (the main process) runs two recording programs: only the main process says it.
    const std::string script = guardClient() + " exec --ranges 10 && " + guardClient() + " exec --ranges 10";
    InjectedProcess shell(m_dir, { "/bin/sh", "-c", script },
        withEnv({ { "TUNEUP_SAMPLE_MS", "abc" }, { "TUNEUP_FLUSH_MS", "-1" }, { "TUNEUP_TRACE", "bogus" },
            { "TUNEUP_BUFFER_KB", "+64" } }));
    ASSERT_TRUE(shell.wait(kRunTimeout));
    EXPECT_EQ(shell.exitCode(), 0) << shell.err();
    const std::string err = shell.err();
    EXPECT_EQ(occurrences(err, "TUNEUP_SAMPLE_MS=abc is not a number in [0, 10000]; using 10"), 1u) << err;
    EXPECT_EQ(occurrences(err, "TUNEUP_FLUSH_MS=-1 is not a number in [10, 60000]; using 200"), 1u) << err;
    EXPECT_EQ(occurrences(err, "TUNEUP_TRACE=bogus: unknown trace item 'bogus'"), 1u) << err;
    EXPECT_EQ(occurrences(err, "TUNEUP_BUFFER_KB=+64 is not a number"), 1u) << err;
    EXPECT_EQ(occurrences(err, "tuneup-agent"), 4u) << err;
    // The defaults are in force: the main thread sampled, NVTX recorded by the others.
    auto q = open();
    EXPECT_GT(q->scalar("SELECT count(*) FROM thread_states"), 0);

    InjectedProcess logged(m_dir, { "/bin/true" }, withEnv({ { "TUNEUP_LOG", "garbage" } }), "log");
    ASSERT_TRUE(logged.wait(kRunTimeout));
    EXPECT_EQ(occurrences(logged.err(), "TUNEUP_LOG=garbage is not one of quiet, warn, info, debug; using warn"), 1u)
        << logged.err();
}

TEST_F(ReliabilityTest, NonNumericRankAndSizesAreLeftOutWithAWarning) {
    auto process = run({ "exec", "--ranges", "10" },
        withEnv({ { "WORLD_SIZE", "abc" }, { "LOCAL_RANK", "1e3" }, { "LOCAL_WORLD_SIZE", "99999999999999999999" },
            { "RANK", "x" } }));
    EXPECT_EQ(process->exitCode(), 0) << process->err();
    const std::string err = process->err();
    EXPECT_EQ(occurrences(err, "WORLD_SIZE=abc is not a number; world_size is not recorded"), 1u) << err;
    EXPECT_EQ(occurrences(err, "LOCAL_RANK=1e3 is not a number"), 1u) << err;
    EXPECT_EQ(occurrences(err, "RANK=x is not a number"), 1u) << err;
    auto q = open(); // no rank: the main file
    expectFinishedAndAccounted(*q);
    for (const char* key : { "world_size", "local_rank", "local_world_size", "rank" })
        EXPECT_FALSE(q->meta(key)) << key;
    EXPECT_EQ(ranges(*q, "before-exec"), 10);
}

// ---- CUPTI's teardown ----

// Whichever way the process ends, the agent's last CUPTI calls come before libcupti's own static
// destructors (the stand-in aborts on a call after them). Before the fix the stop was registered with
// atexit before libcupti was loaded, so exit ran it after libcupti's destructors.
class CuptiShutdownTest : public ReliabilityTest, public ::testing::WithParamInterface<std::string> { };

TEST_P(CuptiShutdownTest, TheAgentStopsCuptiBeforeCuptiTearsDown) {
    if (std::string(TUNEUP_TEST_FAKE_CUPTI).empty()) GTEST_SKIP() << "built without CUPTI headers";
    const std::string how = GetParam();
    const std::string log = m_dir.path() + "/cupti.log";
    auto process = run({ "cupti", "--exit", how },
        withEnv({ { "TUNEUP_TRACE", "nvtx,cuda" }, { "TUNEUP_CUPTI_PATH", TUNEUP_TEST_FAKE_CUPTI },
            { "TUNEUP_FAKE_CUPTI_LOG", log } }));
    const std::string calls = readFile(log);
    EXPECT_EQ(calls.find("AFTER-TEARDOWN"), std::string::npos) << calls;
    if (how == "sigterm")
        EXPECT_EQ(process->termSignal(), SIGTERM) << process->err();
    else
        EXPECT_EQ(process->exitCode(), 0) << "status " << process->rawStatus() << "\n" << process->err() << calls;
    const std::string main = std::to_string(process->pid()) + " ";
    EXPECT_NE(calls.find(main + "cuptiActivityEnable"), std::string::npos) << "CUPTI was not started:\n" << calls;
    if (how == "return" || how == "exit" || how == "fork") {
        // The orderly stop: kinds disabled, buffers flushed, unsubscribed; then CUPTI's teardown.
        const size_t flush = calls.find(main + "cuptiActivityFlushAll");
        const size_t unsubscribe = calls.find(main + "cuptiUnsubscribe");
        const size_t teardown = calls.find(main + "teardown");
        ASSERT_NE(unsubscribe, std::string::npos) << calls;
        ASSERT_NE(teardown, std::string::npos) << calls;
        EXPECT_LT(flush, unsubscribe) << calls;
        EXPECT_LT(unsubscribe, teardown) << calls;
    }
    auto q = open();
    expectFinishedAndAccounted(*q);
    EXPECT_EQ(q->meta("capture.cuda"), "on");
    EXPECT_EQ(ranges(*q, "with-cupti"), 100);
}

INSTANTIATE_TEST_SUITE_P(Reliability, CuptiShutdownTest,
    ::testing::Values("return", "exit", "sigterm", "_exit", "fork"),
    [](const ::testing::TestParamInfo<std::string>& p) { return p.param == "_exit" ? "underscore_exit" : p.param; });
