// The built `tuneup` binary, run as a user runs it. Bad input must be refused with a clear message and
// a non-zero exit before anything runs: each refused command would create a marker file if it ran.
// Tests marked "needs the agent" load build/.../libtuneup-agent.so into the command.

#include "temp_dir.h"
#include "trace_fixture.h"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <optional>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

struct Result {
    int code = -1;
    std::string out, err;
};

class TuneupCliTest : public ::testing::Test {
protected:
    std::string path(const std::string& name) const { return (fs::path(m_dir) / name).string(); }
    std::string marker() const { return path("ran"); }
    // A command that leaves the marker behind if it runs.
    std::vector<std::string> markingCommand() const { return { "sh", "-c", "touch '" + marker() + "'" }; }

    using Env = std::map<std::string, std::optional<std::string>>;

    // Starts tuneup with ARGS; stdout and stderr go to files read back by finish().
    pid_t start(const std::vector<std::string>& args, const Env& env = {}) {
        const std::string outPath = path(".stdout"), errPath = path(".stderr");
        const pid_t pid = fork();
        if (pid == 0) {
            const int out = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(out, 1);
            dup2(err, 2);
            unsetenv("TUNEUP_AGENT");
            unsetenv("TUNEUP_DISABLE");
            for (const auto& [name, value] : env)
                value ? setenv(name.c_str(), value->c_str(), 1) : unsetenv(name.c_str());
            std::vector<char*> argv { const_cast<char*>(TUNEUP_BINARY) };
            for (const std::string& arg : args)
                argv.push_back(const_cast<char*>(arg.c_str()));
            argv.push_back(nullptr);
            execv(TUNEUP_BINARY, argv.data());
            _exit(99);
        }
        return pid;
    }

    Result finish(pid_t pid) {
        Result result;
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
        result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
        result.out = readAll(path(".stdout"));
        result.err = readAll(path(".stderr"));
        return result;
    }

    Result run(const std::vector<std::string>& args, const Env& env = {}) { return finish(start(args, env)); }

    Result record(std::vector<std::string> options, const std::vector<std::string>& command, const Env& env = {}) {
        options.insert(options.begin(), "record");
        options.push_back("--");
        options.insert(options.end(), command.begin(), command.end());
        return run(options, env);
    }

    static std::string readAll(const std::string& file) {
        std::string bytes;
        if (FILE* f = fopen(file.c_str(), "rb")) {
            char buffer[65536];
            size_t n;
            while ((n = fread(buffer, 1, sizeof buffer, f)) > 0)
                bytes.append(buffer, n);
            fclose(f);
        }
        return bytes;
    }

    static bool waitFor(const std::string& file) {
        for (int i = 0; i < 500 && !fs::exists(file); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        return fs::exists(file);
    }

    tuneup::test::TempDir m_tmp { "tuneup_cli_test" };
    std::string m_dir = m_tmp.path();
};

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

TEST_F(TuneupCliTest, HelpShowsExamplesAndExitCodes) {
    Result r = run({ "--help" });
    EXPECT_EQ(r.code, 0);
    EXPECT_CONTAINS(r.out, "tuneup record -o run.db -- python train.py");
    EXPECT_CONTAINS(r.out, "Exit codes");
    r = run({ "record", "--help" });
    EXPECT_EQ(r.code, 0);
    EXPECT_CONTAINS(r.out, "torchrun");
    EXPECT_CONTAINS(r.out, "--trace");
    r = run({ "info", "--help" });
    EXPECT_EQ(r.code, 0);
    EXPECT_CONTAINS(r.out, "tuneup info run.db");
}

TEST_F(TuneupCliTest, Version) {
    const Result r = run({ "--version" });
    EXPECT_EQ(r.code, 0);
    EXPECT_CONTAINS(r.out, "tuneup 0.");
}

TEST_F(TuneupCliTest, NoSubcommandIsAUsageError) {
    const Result r = run({});
    EXPECT_EQ(r.code, 2);
    EXPECT_FALSE(r.err.empty());
}

TEST_F(TuneupCliTest, RecordWithoutCommand) {
    Result r = run({ "record", "-o", path("x.db") });
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "tuneup: record: no command to record");
    r = run({ "record", "-o", path("x.db"), "--" });
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "no command to record");
    EXPECT_FALSE(fs::exists(path("x.db")));
}

TEST_F(TuneupCliTest, UnknownTraceItem) {
    const Result r = record({ "-o", path("x.db"), "--trace", "nvtx,kernels" }, markingCommand());
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "unknown --trace item 'kernels'");
    EXPECT_CONTAINS(r.err, "known: nvtx, torch, cuda, kernel");
    EXPECT_FALSE(fs::exists(marker()));
}

TEST_F(TuneupCliTest, EmptyTraceItem) {
    const Result r = record({ "-o", path("x.db"), "--trace", "nvtx," }, markingCommand());
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "empty item");
    EXPECT_FALSE(fs::exists(marker()));
}

TEST_F(TuneupCliTest, ExistingOutputNeedsForce) {
    tuneup::test::writeTrace(path("x.db"));
    std::ofstream(path("x.rank1.db")) << "";
    std::ofstream(path("x.pid77.db")) << "";
    std::ofstream(path("xyz.db")) << ""; // not part of the recording
    const Result r = record({ "-o", path("x.db") }, markingCommand());
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(
        r.err, "the output exists: " + path("x.db") + ", " + path("x.rank1.db") + ", " + path("x.pid77.db"));
    EXPECT_CONTAINS(r.err, "--force");
    EXPECT_EQ(r.err.find("xyz.db"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(marker()));
}

TEST_F(TuneupCliTest, LeftoverWalCountsAsExistingOutput) {
    std::ofstream(path("x.db-wal")) << "junk";
    const Result r = record({ "-o", path("x.db") }, markingCommand());
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, path("x.db-wal"));
    EXPECT_FALSE(fs::exists(marker()));
}

TEST_F(TuneupCliTest, ForceNeverDeletesForeignData) {
    std::ofstream(path("notes.db")) << "my precious notes";
    const Result r = record({ "-o", path("notes.db"), "--force" }, markingCommand());
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "is not a tuneup trace");
    EXPECT_TRUE(fs::exists(path("notes.db")));
    EXPECT_FALSE(fs::exists(marker()));
}

TEST_F(TuneupCliTest, MissingOutputDirectory) {
    const Result r = record({ "-o", path("missing/x.db") }, markingCommand());
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "the output directory " + path("missing") + " does not exist");
    EXPECT_FALSE(fs::exists(marker()));
}

TEST_F(TuneupCliTest, UnwritableOutputDirectory) {
    // /proc takes no new files, not even from root; a mode-0555 directory stops everyone else.
    Result r = record({ "-o", "/proc/tuneup-test.db" }, markingCommand());
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "cannot write in the output directory /proc");
    EXPECT_FALSE(fs::exists(marker()));
    if (geteuid() != 0) {
        fs::create_directory(path("ro"));
        ASSERT_EQ(chmod(path("ro").c_str(), 0555), 0);
        r = record({ "-o", path("ro/x.db") }, markingCommand());
        EXPECT_EQ(r.code, 2);
        EXPECT_CONTAINS(r.err, "cannot write in the output directory " + path("ro"));
        EXPECT_FALSE(fs::exists(marker()));
    }
}

TEST_F(TuneupCliTest, OutputThatIsADirectory) {
    fs::create_directory(path("out.db"));
    const Result r = record({ "-o", path("out.db") }, markingCommand());
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "is a directory");
    EXPECT_FALSE(fs::exists(marker()));
}

TEST_F(TuneupCliTest, MissingAgent) {
    const Result r
        = record({ "-o", path("x.db") }, markingCommand(), { { "TUNEUP_AGENT", "/nowhere/libtuneup-agent.so" } });
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "TUNEUP_AGENT=/nowhere/libtuneup-agent.so");
    EXPECT_FALSE(fs::exists(marker()));
}

TEST_F(TuneupCliTest, ChecksComeBeforeForceDeletes) {
    tuneup::test::writeTrace(path("x.db"));
    const Result r = record({ "-o", path("x.db"), "--force" }, markingCommand(), { { "TUNEUP_AGENT", "/nowhere.so" } });
    EXPECT_EQ(r.code, 2);
    EXPECT_TRUE(fs::exists(path("x.db"))); // nothing deleted when the run cannot start
}

TEST_F(TuneupCliTest, CommandNotFound) {
    const Result r = record({ "-o", path("x.db") }, { "tuneup-no-such-program-xyz" });
    EXPECT_EQ(r.code, 127);
    EXPECT_CONTAINS(r.err, "cannot run 'tuneup-no-such-program-xyz': command not found");
}

// ---- with the agent (these fail until the agent loads into /bin/sh and writes its file) ----

TEST_F(TuneupCliTest, ExitCodesPassThrough) {
    EXPECT_EQ(record({ "-o", path("t.db") }, { "/bin/true" }).code, 0);
    const Result r = record({ "-o", path("s.db") }, { "sh", "-c", "exit 3" });
    EXPECT_EQ(r.code, 3);
    EXPECT_CONTAINS(r.err, "exited with code 3");
}

TEST_F(TuneupCliTest, DeathBySignalIs128PlusN) {
    const Result r = record({ "-o", path("k.db") }, { "sh", "-c", "kill -KILL $$" });
    EXPECT_EQ(r.code, 128 + SIGKILL);
    EXPECT_CONTAINS(r.err, "signal 9 (SIGKILL)");
}

TEST_F(TuneupCliTest, StdoutBelongsToTheCommand) {
    const Result r = record({ "-o", path("e.db") }, { "echo", "hello" });
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(r.out, "hello\n");
}

TEST_F(TuneupCliTest, CommandGetsTheAgentEnvironment) {
    const std::string script = "test \"$TUNEUP_MAIN_PID\" = \"$$\" || exit 10; "
                               "test \"$TUNEUP_OUTPUT\" = \""
        + path("env.db")
        + "\" || exit 11; "
          "test \"$TUNEUP_TRACE\" = nvtx,kernel || exit 12; "
          "case \"$LD_PRELOAD\" in */libtuneup-agent.so:/preloaded.so) ;; *) exit 13;; esac; "
          "test \"$CUDA_INJECTION64_PATH\" = \"$NVTX_INJECTION64_PATH\" || exit 14; "
          "test -f \"$CUDA_INJECTION64_PATH\" || exit 15";
    // /preloaded.so does not exist: the loader warns and goes on, which is all this test needs.
    const Result r = record({ "-o", path("env.db"), "--trace", "nvtx, kernel" }, { "sh", "-c", script },
        { { "LD_PRELOAD", "/preloaded.so" } });
    EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(TuneupCliTest, GemmAndConvolutionInterposersAreRecordedByDefault) {
    const Result byDefault
        = record({ "-o", path("d.db") }, { "sh", "-c", "test \"$TUNEUP_TRACE\" = nvtx,torch,cuda,gemm,conv" });
    EXPECT_EQ(byDefault.code, 0) << byDefault.err;
    const Result chosen
        = record({ "-o", path("c.db"), "--trace", "gemm,conv" }, { "sh", "-c", "test \"$TUNEUP_TRACE\" = gemm,conv" });
    EXPECT_EQ(chosen.code, 0) << chosen.err;
}

TEST_F(TuneupCliTest, LauncherGetsNoMainPid) {
    // A fake torchrun: it only reports whether it got TUNEUP_MAIN_PID=-<its pid> ("no process is the main
    // one, and I am the launcher").
    fs::create_directory(path("bin"));
    std::ofstream(path("bin/torchrun")) << "#!/bin/sh\ntest \"$TUNEUP_MAIN_PID\" = \"-$$\" || exit 20\n";
    fs::permissions(path("bin/torchrun"), fs::perms::owner_all);
    const Result r = record({ "-o", path("l.db") }, { path("bin/torchrun") }, { { "TUNEUP_MAIN_PID", "1" } });
    EXPECT_EQ(r.code, 0) << r.err;
}

TEST_F(TuneupCliTest, PythonModuleLauncherGetsNoMainPid) {
    // A fake python: exit 0 with TUNEUP_MAIN_PID=-<its pid> (a launcher), 21 with its own pid.
    fs::create_directory(path("bin"));
    std::ofstream(path("bin/python3")) << "#!/bin/sh\ntest \"$TUNEUP_MAIN_PID\" = \"-$$\" || exit 21\n";
    fs::permissions(path("bin/python3"), fs::perms::owner_all);
    EXPECT_EQ(
        record({ "-o", path("p.db") }, { path("bin/python3"), "-u", "-m", "torch.distributed.run", "t.py" }).code, 0);
    // A script that merely takes -m as its own argument is the main process.
    EXPECT_EQ(record({ "-o", path("q.db") }, { path("bin/python3"), "t.py", "-m", "torch.distributed.run" }).code, 21);
}

TEST_F(TuneupCliTest, ForceReplacesTheOldRecording) {
    tuneup::test::writeTrace(path("x.db"));
    std::ofstream(path("x.pid5.db")) << "";
    std::ofstream(path("x.db-shm")) << "";
    const Result r = record({ "-o", path("x.db"), "--force" }, { "/bin/true" });
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_FALSE(fs::exists(path("x.pid5.db")));
}

TEST_F(TuneupCliTest, ReportsTheFileWritten) {
    const Result r = record({ "-o", path("run.db") }, { "/bin/true" });
    EXPECT_EQ(r.code, 0);
    EXPECT_CONTAINS(r.err, "tuneup: recorded ");
    EXPECT_CONTAINS(r.err, " -> " + path("run.db") + " (");
    EXPECT_TRUE(fs::exists(path("run.db")));
}

TEST_F(TuneupCliTest, InterruptIsPassedOnAndTheCommandDecides) {
    // SIGINT to tuneup alone (a scheduler, Popen.send_signal) reaches the command, whose own handling
    // decides: here it exits 4, and that code comes back (record_signals_test.cpp has the rest).
    const std::string started = path("started");
    const pid_t pid = start({ "record", "-o", path("i.db"), "--", "sh", "-c",
        "trap 'kill $!; exit 4' INT; touch '" + started + "'; sleep 30 & wait" });
    ASSERT_TRUE(waitFor(started));
    kill(pid, SIGINT);
    EXPECT_EQ(finish(pid).code, 4);
}

TEST_F(TuneupCliTest, TerminateIsForwarded) {
    const std::string started = path("started");
    const pid_t pid = start({ "record", "-o", path("t.db"), "--", "sh", "-c", "touch '" + started + "'; sleep 30" });
    ASSERT_TRUE(waitFor(started));
    const auto before = std::chrono::steady_clock::now();
    kill(pid, SIGTERM);
    const Result r = finish(pid);
    EXPECT_EQ(r.code, 128 + SIGTERM) << r.err;
    EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(20));
}

TEST_F(TuneupCliTest, OneRecordingPerOutputAtATime) {
    // A lock left by a killed tuneup (nobody holds it) is no obstacle.
    std::ofstream(path(".r.db.lock")) << "12345\n";
    const std::string started = path("started");
    const pid_t first = start({ "record", "-o", path("r.db"), "--", "sh", "-c", "touch '" + started + "'; sleep 30" });
    ASSERT_TRUE(waitFor(started));
    // A second recording to the same output, even with --force, deletes nothing and runs nothing.
    const Result second = record({ "-o", path("r.db"), "--force" }, markingCommand());
    EXPECT_EQ(second.code, 2);
    EXPECT_CONTAINS(second.err,
        "another tuneup record (pid " + std::to_string(first) + ") is recording to " + path("r.db") + " now");
    EXPECT_FALSE(fs::exists(marker()));
    kill(first, SIGTERM);
    EXPECT_EQ(finish(first).code, 128 + SIGTERM);
    EXPECT_FALSE(fs::exists(path(".r.db.lock")));
    EXPECT_EQ(record({ "-o", path("r.db"), "--force" }, markingCommand()).code, 0);
    EXPECT_TRUE(fs::exists(marker()));
}

// ---- info ----

TEST_F(TuneupCliTest, InfoOnAValidFile) {
    tuneup::test::TraceSpec spec;
    spec.threadStates = true;
    tuneup::test::writeTrace(path("run.db"), spec);
    const Result r = run({ "info", path("run.db") });
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_CONTAINS(r.out, "tuneup-trace, schema " + std::to_string(tuneup::schema::kSchemaVersion));
    EXPECT_CONTAINS(r.out, "python train.py");
    EXPECT_CONTAINS(r.out, "pid 4242");
    EXPECT_CONTAINS(r.out, "host testhost");
    EXPECT_CONTAINS(r.out, "capture.cuda: off: no CUDA driver");
    EXPECT_CONTAINS(r.out, "kernels");
    EXPECT_CONTAINS(r.out, "! events.dropped");
    EXPECT_CONTAINS(r.out, "9 events were lost");
    EXPECT_CONTAINS(r.out, "NVIDIA H100 80GB HBM3");
    EXPECT_CONTAINS(r.out, "2 s");
    EXPECT_CONTAINS(r.out, "integrity    ok");
    EXPECT_CONTAINS(r.out, "main thread  3 state changes sampled");
    EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(TuneupCliTest, InfoShowsWhatEachSourceWroteAndDroppedByThread) {
    tuneup::test::writeTrace(path("run.db"));
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path("run.db").c_str(), &db), SQLITE_OK);
    tuneup::test::exec(db,
        "INSERT INTO event_counts VALUES ('nvtx', 101, 500, 0), ('nvtx', 102, 400, 70), ('nvtx', 103, 300, 5), "
        "('cupti', NULL, 40, 0)");
    sqlite3_close(db);
    const Result r = run({ "info", path("run.db") });
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_CONTAINS(r.out, "by source (event_counts)");
    EXPECT_CONTAINS(
        r.out, "! nvtx                    1,200 written           75 dropped (thread 102: 70, thread 103: 5)");
    EXPECT_CONTAINS(r.out, "  cupti                      40 written            0 dropped\n");
}

TEST_F(TuneupCliTest, InfoOnBadFilesExitsOne) {
    tuneup::test::writeTrace(path("good.db"));
    std::ofstream(path("bad.db")) << "not a database at all, just text";
    const Result r = run({ "info", path("good.db"), path("bad.db"), path("gone.db") });
    EXPECT_EQ(r.code, 1);
    EXPECT_CONTAINS(r.out, path("good.db"));
    EXPECT_CONTAINS(r.err, path("bad.db") + ": is not a tuneup trace");
    EXPECT_CONTAINS(r.err, path("gone.db") + ": no such file");
}

TEST_F(TuneupCliTest, InfoOnAnIncompleteFile) {
    tuneup::test::TraceSpec spec;
    spec.endNs = false;
    tuneup::test::writeTrace(path("cut.db"), spec);
    const Result r = run({ "info", path("cut.db") });
    EXPECT_EQ(r.code, 0);
    EXPECT_CONTAINS(r.out, "incomplete: the process did not exit cleanly");
}

// ---- advise and rules ----

// A user rule that fires once per kernel of the fixture trace (3 kernels).
constexpr const char* kKernelRule
    = "-- id: every-kernel\n"
      "-- title: Every kernel\n"
      "-- severity: warning\n"
      "-- summary: One finding per kernel.\n"
      "SELECT 'kernel at ' || start_ns AS title, 'a kernel' AS detail, start_ns, end_ns,\n"
      "       end_ns - start_ns AS gain_ns\n"
      "FROM kernels ORDER BY start_ns;\n";

TEST_F(TuneupCliTest, AdviseWritesEveryFormat) {
    tuneup::test::writeTrace(path("run.db"));
    const Result text = run({ "advise", path("run.db") });
    EXPECT_EQ(text.code, 0) << text.err;
    EXPECT_FALSE(text.out.empty());
    const Result json = run({ "advise", path("run.db"), "--format", "json" });
    EXPECT_EQ(json.code, 0) << json.err;
    EXPECT_CONTAINS(json.out, "\"findings\"");
    EXPECT_CONTAINS(json.out, "\"schema_version\"");
    for (const std::string format : { "markdown", "html" }) {
        const std::string out = path("report." + format);
        const Result r = run({ "advise", path("run.db"), "--format", format, "-o", out });
        EXPECT_EQ(r.code, 0) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
        EXPECT_CONTAINS(r.err, "report written to " + out);
        EXPECT_GT(fs::file_size(out), 100u) << format;
    }
    EXPECT_CONTAINS(readAll(path("report.html")), "<html");
}

TEST_F(TuneupCliTest, AdviseBadUsage) {
    tuneup::test::writeTrace(path("run.db"));
    const Result format = run({ "advise", path("run.db"), "--format", "pdf" });
    EXPECT_EQ(format.code, 2);
    EXPECT_CONTAINS(format.err, "unknown --format 'pdf'");
    const Result failOn = run({ "advise", path("run.db"), "--fail-on", "fatal" });
    EXPECT_EQ(failOn.code, 2);
    EXPECT_CONTAINS(failOn.err, "unknown --fail-on 'fatal'");
    const Result missing = run({ "advise", path("gone.db") });
    EXPECT_EQ(missing.code, 1);
    EXPECT_CONTAINS(missing.err, path("gone.db"));
    std::ofstream(path("junk.json")) << "{ this is not json";
    const Result junk = run({ "advise", path("junk.json") });
    EXPECT_EQ(junk.code, 1);
    EXPECT_CONTAINS(junk.err, path("junk.json"));
    const Result unwritable = run({ "advise", path("run.db"), "-o", path("no/such/dir/out.txt") });
    EXPECT_EQ(unwritable.code, 2);
    EXPECT_CONTAINS(unwritable.err, "cannot write");
}

TEST_F(TuneupCliTest, AdviseRunsUserRulesAndFailsOnThem) {
    tuneup::test::writeTrace(path("run.db"));
    fs::create_directory(path("rules"));
    std::ofstream(path("rules/every-kernel.sql")) << kKernelRule;
    // --all: the kernels' microseconds are under the materiality floor, which user rules go through too.
    const Result r = run({ "advise", path("run.db"), "--rules", path("rules"), "--format", "json", "--all" });
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_CONTAINS(r.out, "every-kernel");
    EXPECT_CONTAINS(r.out, "kernel at 1100001000");
    EXPECT_EQ(run({ "advise", path("run.db"), "--rules", path("rules"), "--fail-on", "warning" }).code, 0);
    // Warnings are raised: --fail-on warning exits 3, --fail-on error does not.
    EXPECT_EQ(run({ "advise", path("run.db"), "--rules", path("rules"), "--fail-on", "warning", "--all" }).code, 3);
    EXPECT_EQ(run({ "advise", path("run.db"), "--rules", path("rules"), "--fail-on", "error" }).code, 0);
}

TEST_F(TuneupCliTest, BadUserRuleIsRefusedBeforeReading) {
    fs::create_directory(path("rules"));
    std::ofstream(path("rules/bad.sql")) << "-- id: bad\n-- title: Bad\n-- severity: warning\nDELETE FROM kernels;\n";
    const Result r = run({ "advise", path("never-read.db"), "--rules", path("rules") });
    EXPECT_EQ(r.code, 1);
    EXPECT_CONTAINS(r.err, path("rules/bad.sql"));
    EXPECT_EQ(r.err.find("never-read.db"), std::string::npos) << r.err;
    EXPECT_EQ(run({ "rules", "--rules", path("rules") }).code, 1);
}

TEST_F(TuneupCliTest, RulesListsBuiltinAndUserRules) {
    const Result builtin = run({ "rules" });
    EXPECT_EQ(builtin.code, 0) << builtin.err;
    for (const char* id :
        { "cudnn-autotuner-off", "zero-grad-fill", "gemm-dims-not-aligned", "pageable-memcpy", "rank-straggler" })
        EXPECT_CONTAINS(builtin.out, id);
    EXPECT_LT(builtin.out.find("cudnn-autotuner-off"), builtin.out.find("rank-straggler"));
    // What each needs: inputs a trace holds or not, and, where any of several will do, what in words.
    EXPECT_CONTAINS(builtin.out,
        "\n    needs: GPU kernel activity; optimizer ranges (Optimizer.zero_grad / "
        "Optimizer.step)\n    doc: rules/unfused-optimizer.md\n");
    for (const char* id : { "sync-batchnorm-missing", "sync-batchnorm-unneeded" }) {
        const size_t at = builtin.out.find(std::string(id) + "\n");
        ASSERT_NE(at, std::string::npos) << id;
        const std::string entry = builtin.out.substr(at, builtin.out.find("doc: ", at) - at);
        EXPECT_CONTAINS(entry, "per-GPU batch (framework operators with input shapes, or tuneup's Python bootstrap");
    }
    std::ofstream(path("every-kernel.sql")) << kKernelRule;
    const Result user = run({ "rules", "--rules", path("every-kernel.sql") });
    EXPECT_EQ(user.code, 0) << user.err;
    EXPECT_CONTAINS(user.out, "every-kernel\n    One finding per kernel.");
    EXPECT_CONTAINS(user.out, "user rule: " + path("every-kernel.sql"));
}

// An installed tuneup has no source tree: `rules` names each doc as the reports do (rules/<id>.md), never
// a path of the machine it was built on, and `rules --doc ID` prints the doc built into the program.
TEST_F(TuneupCliTest, RulesNameTheirDocsPortablyAndPrintThem) {
    const Result list = run({ "rules" });
    EXPECT_EQ(list.code, 0) << list.err;
    EXPECT_CONTAINS(list.out, "zero-grad-fill\n");
    EXPECT_CONTAINS(list.out, "\n    doc: rules/zero-grad-fill.md\n");
    EXPECT_EQ(list.out.find(TUNEUP_SOURCE_DIR), std::string::npos) << list.out;

    const Result doc = run({ "rules", "--doc", "zero-grad-fill" });
    EXPECT_EQ(doc.code, 0) << doc.err;
    const std::string source = tuneup::test::readFile(TUNEUP_SOURCE_DIR "/rules/zero-grad-fill.md");
    ASSERT_FALSE(source.empty());
    EXPECT_EQ(doc.out, source);

    const Result unknown = run({ "rules", "--doc", "no-such-rule" });
    EXPECT_EQ(unknown.code, 1);
    EXPECT_CONTAINS(unknown.err, "no rule no-such-rule");
    std::ofstream(path("every-kernel.sql")) << kKernelRule;
    const Result user = run({ "rules", "--rules", path("every-kernel.sql"), "--doc", "every-kernel" });
    EXPECT_EQ(user.code, 1);
    EXPECT_CONTAINS(user.err, "its documentation is " + path("every-kernel.sql"));
}

TEST_F(TuneupCliTest, ShippedExampleRulesLoadAndRun) {
    const std::string examples = TUNEUP_SOURCE_DIR "/samples/user-rules";
    const Result list = run({ "rules", "--rules", examples });
    EXPECT_EQ(list.code, 0) << list.err;
    EXPECT_CONTAINS(list.out, "large-pageable-copies");
    EXPECT_CONTAINS(list.out, "long-kernels");
    tuneup::test::writeTrace(path("run.db"));
    const Result advice = run({ "advise", path("run.db"), "--rules", examples, "--format", "json" });
    EXPECT_EQ(advice.code, 0) << advice.err;
    EXPECT_CONTAINS(advice.out, "large-pageable-copies");
}

} // namespace

// ---- export ----

TEST_F(TuneupCliTest, ExportWritesAChromeTraceBesideNoOtherFile) {
    tuneup::test::writeTrace(path("run.db"));
    Result r = run({ "export", path("run.db"), "-o", path("run.json") });
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_CONTAINS(r.err, "written to " + path("run.json"));
    const std::string json = readAll(path("run.json"));
    EXPECT_CONTAINS(json, "\"traceEvents\":[");
    EXPECT_CONTAINS(json, "\"cat\":\"kernel\"");
    EXPECT_FALSE(fs::exists(path("run.json.partial")));
    // An existing output needs --force; nothing is touched without it.
    r = run({ "export", path("run.db"), "-o", path("run.json") });
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "exists; use --force");
    r = run({ "export", path("run.db"), "-o", path("run.json"), "--force", "--no-findings" });
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_CONTAINS(r.err, "0 findings");
}

TEST_F(TuneupCliTest, ExportBadUsageAndBadInput) {
    tuneup::test::writeTrace(path("run.db"));
    Result r = run({ "export", path("run.db"), "--format", "svg", "-o", path("x.json") });
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "unknown --format 'svg'");
    std::ofstream(path("bad.json")) << "{\"traceEvents\": [ {\"ph\": \"X\", ";
    r = run({ "export", path("bad.json"), "-o", path("y.json") });
    EXPECT_EQ(r.code, 1);
    EXPECT_CONTAINS(r.err, path("bad.json"));
    EXPECT_FALSE(fs::exists(path("y.json")));
    r = run({ "export" });
    EXPECT_EQ(r.code, 2);
}
