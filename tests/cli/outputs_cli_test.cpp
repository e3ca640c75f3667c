// The commands' outputs and inputs as a user meets them when things go wrong (issue 18, items 9-11): a
// full disk (/dev/full, a file-size limit) fails the command with exit 2 and leaves no half file and the
// old output whole; text that is not UTF-8 comes out as valid UTF-8 (JSON, a tuneup file); a trace
// piped in (-, /dev/stdin, a FIFO) is read, and a FIFO that nothing writes to says what it waits for;
// what was lost reading a trace is in advise's report.

#include "temp_dir.h"
#include "trace_fixture.h"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using tuneup::test::readFile;

namespace {

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

struct Result {
    int code = -1; // exit status; 1000 + signal
    std::string out, err;
};

struct Io {
    std::string stdinPath = "/dev/null";
    std::string stdoutPath; // empty: a file of the test's, read back
    long fileSizeLimit = -1; // RLIMIT_FSIZE in bytes (SIGXFSZ ignored: writes fail with EFBIG)
    int killAfterMs = 0; // SIGTERM after this long (a command that waits)
};

// A kernel name that is not UTF-8 (Latin-1 é, a lone continuation byte) and an "Input Dims" string that
// would end the JSON around it if written raw.
const std::string kOddTrace = std::string(R"({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 5, "dur": 50,
   "args": {"Input Dims": "x\"]}], \"injected\": [{\"ph\": \"X\"}"}},
  {"ph": "X", "cat": "kernel", "name": "caf)")
    + "\xE9 \x80" + R"(", "pid": 0, "tid": 7, "ts": 10, "dur": 50,
   "args": {"device": 0, "stream": 7, "correlation": 1}}]})";

class OutputsCliTest : public ::testing::Test {
protected:
    std::string path(const std::string& name) const { return m_dir.path() + "/" + name; }

    Result run(const std::vector<std::string>& args, const Io& io = {}) {
        const std::string outPath = io.stdoutPath.empty() ? path(".stdout") : io.stdoutPath;
        const std::string errPath = path(".stderr");
        const pid_t pid = fork();
        if (pid == 0) {
            const int in = ::open(io.stdinPath.c_str(), O_RDONLY);
            const int out = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (in < 0 || out < 0 || err < 0) _exit(98);
            dup2(in, 0);
            dup2(out, 1);
            dup2(err, 2);
            if (io.fileSizeLimit >= 0) {
                signal(SIGXFSZ, SIG_IGN);
                const rlimit limit { rlim_t(io.fileSizeLimit), rlim_t(io.fileSizeLimit) };
                setrlimit(RLIMIT_FSIZE, &limit);
            }
            std::vector<char*> argv { const_cast<char*>(TUNEUP_BINARY) };
            for (const std::string& a : args)
                argv.push_back(const_cast<char*>(a.c_str()));
            argv.push_back(nullptr);
            execv(TUNEUP_BINARY, argv.data());
            _exit(99);
        }
        if (io.killAfterMs > 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(io.killAfterMs));
            kill(pid, SIGTERM);
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
        Result r;
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
        if (io.stdoutPath.empty()) r.out = readFile(outPath);
        r.err = readFile(errPath);
        return r;
    }

    std::string write(const std::string& name, const std::string& bytes) const {
        std::string file = path(name);
        FILE* f = fopen(file.c_str(), "wb");
        fwrite(bytes.data(), 1, bytes.size(), f);
        fclose(f);
        return file;
    }

    std::string recording() const {
        std::string file = path("run.db");
        if (!fs::exists(file)) tuneup::test::writeTrace(file);
        return file;
    }

    tuneup::test::TempDir m_dir { "outputs_cli_test" };
};

bool isUtf8(const std::string& text) {
    for (size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > text.size()) return false;
        for (size_t k = 1; k < n; ++k)
            if ((static_cast<unsigned char>(text[i + k]) >> 6) != 2) return false;
        i += n;
    }
    return true;
}

// ---- a full disk ---------------------------------------------------------------------------------

TEST_F(OutputsCliTest, StdoutOnAFullDiskFailsEveryCommand) {
    const std::string db = recording();
    Io full;
    full.stdoutPath = "/dev/full";
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>> { { "info", db },
             { "advise", db }, { "advise", db, "--format", "json" }, { "rules" }, { "export", db, "-o", "-" } }) {
        const Result r = run(args, full);
        EXPECT_EQ(r.code, 2) << args[0] << ": " << r.err;
        EXPECT_CONTAINS(r.err, "cannot write to stdout: No space left on device");
    }
}

TEST_F(OutputsCliTest, OutputFileOnAFullDiskLeavesNoHalfFileAndTheOldOneWhole) {
    const std::string db = recording();
    const std::string report = write("report.html", "the report of yesterday");
    Io limited;
    limited.fileSizeLimit = 1024; // the HTML report is larger
    const Result r = run({ "advise", db, "--format", "html", "-o", report }, limited);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_CONTAINS(r.err, "cannot write " + report);
    EXPECT_CONTAINS(r.err, "nothing was written");
    EXPECT_EQ(readFile(report), "the report of yesterday");
    EXPECT_FALSE(fs::exists(report + ".partial"));

    const std::string json = path("trace.json");
    const Result e = run({ "export", db, "-o", json }, limited);
    EXPECT_EQ(e.code, 2) << e.err;
    EXPECT_FALSE(fs::exists(json));
    EXPECT_FALSE(fs::exists(json + ".partial"));
}

TEST_F(OutputsCliTest, DevicesAsOutputAreWrittenInPlace) {
    const std::string db = recording();
    const Result ok = run({ "advise", db, "--format", "json", "-o", "/dev/null" });
    EXPECT_EQ(ok.code, 0) << ok.err;
    const Result full = run({ "advise", db, "-o", "/dev/full" });
    EXPECT_EQ(full.code, 2) << full.err;
    EXPECT_CONTAINS(full.err, "cannot write /dev/full: No space left on device");
}

// ---- text that is not UTF-8, and a string that would be JSON -----------------------------------------

TEST_F(OutputsCliTest, ExportWritesValidUtf8AndNoInjectedJson) {
    const std::string trace = write("odd.json", kOddTrace);
    const std::string out = path("odd.perfetto.json");
    const Result r = run({ "export", trace, "-o", out });
    ASSERT_EQ(r.code, 0) << r.err;
    const std::string json = readFile(out);
    EXPECT_TRUE(isUtf8(json));
    EXPECT_CONTAINS(json, "caf\xEF\xBF\xBD \xEF\xBF\xBD"); // each invalid sequence is U+FFFD
    EXPECT_EQ(json.find("\"injected\""), std::string::npos) << "a string from the trace was written as JSON";
    // What export wrote reads back as a trace, with the kernel's name as written.
    const Result back = run({ "advise", out, "--format", "json" });
    EXPECT_EQ(back.code, 0) << back.err;
    EXPECT_TRUE(isUtf8(back.out));
}

TEST_F(OutputsCliTest, ImportStoresValidUtf8Text) {
    const std::string trace = write("odd.json", kOddTrace);
    const std::string db = path("odd.db");
    const Result r = run({ "import", trace, "-o", db });
    ASSERT_EQ(r.code, 0) << r.err;
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(handle, "SELECT value FROM strings", -1, &s, nullptr), SQLITE_OK);
    int names = 0;
    while (sqlite3_step(s) == SQLITE_ROW) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
        EXPECT_TRUE(isUtf8(text ? text : "")) << text;
        ++names;
    }
    sqlite3_finalize(s);
    sqlite3_close(handle);
    EXPECT_GT(names, 0);
}

// ---- inputs through pipes --------------------------------------------------------------------------

TEST_F(OutputsCliTest, TraceOnStandardInputAsDashOrDevStdin) {
    const std::string trace = write("t.json", kOddTrace);
    Io piped;
    piped.stdinPath = trace; // a file on stdin: read as a stream all the same
    for (const char* name : { "-", "/dev/stdin" }) {
        const Result r = run({ "advise", name }, piped);
        EXPECT_EQ(r.code, 0) << name << ": " << r.err;
        EXPECT_CONTAINS(r.out, "kineto-json, 3 events");
    }
}

TEST_F(OutputsCliTest, FifoSaysWhatItWaitsForThenReads) {
    const std::string fifo = path("in.json");
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    Io waiting;
    waiting.killAfterMs = 3500; // nothing writes: the command waits, and says so on stderr
    const Result r = run({ "advise", fifo }, waiting);
    EXPECT_EQ(r.code, 1000 + SIGTERM);
    EXPECT_CONTAINS(r.err, "waiting for data from FIFO " + fifo + ": is anything writing to it?");

    std::thread writer([&] {
        const int fd = ::open(fifo.c_str(), O_WRONLY);
        if (fd < 0) return;
        EXPECT_EQ(::write(fd, kOddTrace.data(), kOddTrace.size()), ssize_t(kOddTrace.size()));
        ::close(fd);
    });
    const Result read = run({ "advise", fifo });
    writer.join();
    EXPECT_EQ(read.code, 0) << read.err;
    EXPECT_CONTAINS(read.out, "kineto-json, 3 events");
}

TEST_F(OutputsCliTest, RecordingOnStandardInputSaysToSaveItFirst) {
    Io piped;
    piped.stdinPath = recording();
    const Result r = run({ "advise", "-" }, piped);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_CONTAINS(r.err, "save it to a file first");
}

// ---- what was lost is said -----------------------------------------------------------------------

TEST_F(OutputsCliTest, AdviseAndInfoSayWhatWasLost) {
    const std::string db = recording(); // its stats: 7 events and 2 CUPTI records dropped while recording
    sqlite3* handle = nullptr;
    ASSERT_EQ(sqlite3_open(db.c_str(), &handle), SQLITE_OK);
    tuneup::test::exec(handle,
        "INSERT INTO kernels (start_ns, end_ns, device_id, name_id) VALUES (-9223372036854775808, 5, 0, 1); "
        "INSERT OR REPLACE INTO meta VALUES ('pid', '99999999999999999999')");
    sqlite3_close(handle);
    const Result advise = run({ "advise", db });
    EXPECT_EQ(advise.code, 0) << advise.err;
    EXPECT_CONTAINS(advise.out, "Data loss");
    EXPECT_CONTAINS(advise.out, "recording.events.dropped");
    EXPECT_CONTAINS(advise.out, "times.out_of_range");
    EXPECT_CONTAINS(advise.out, "meta.pid.unreadable");
    const Result info = run({ "info", db });
    EXPECT_EQ(info.code, 0) << info.err;
    EXPECT_CONTAINS(info.out, "1 with times that are not times, left out");
    EXPECT_CONTAINS(info.out, "its meta `pid` is '99999999999999999999', not a process id: ignored");
}

} // namespace
