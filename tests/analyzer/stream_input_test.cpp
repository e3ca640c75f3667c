// Inputs read once (issue 18, item 11): a pipe, a FIFO, standard input. Format detection reads the
// head and the importer reads on, so the head is kept and the pipe read once; a FIFO nothing writes to
// says what it waits for; an SQLite database cannot come through a pipe, and says so. Job summaries are
// read the same way (gzip too), and a damaged one fails with its place, never with a crash.

#include "import/format_detect.h"
#include "import/import_error.h"
#include "import/importer.h"
#include "import/stream_input.h"
#include "job/summary_file.h"
#include "temp_dir.h"
#include "trace_fixture.h"

#include <atomic>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <mutex>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>
#include <zlib.h>

using namespace tuneup::analysis;

namespace {

constexpr const char* kTrace = R"({"traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
  {"ph": "X", "cat": "kernel", "name": "sgemm", "pid": 0, "tid": 7, "ts": 10, "dur": 50,
   "args": {"device": 0, "stream": 7, "correlation": 1}}]})";

std::string gzip(const std::string& text) {
    std::string out(compressBound(uLong(text.size())) + 64, '\0');
    z_stream z {};
    deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = uInt(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

// Writes `bytes` into a FIFO on another thread (opening it blocks until the reader comes).
class FifoWriter {
public:
    FifoWriter(const std::string& path, std::string bytes, std::chrono::milliseconds delay = {})
        : m_thread([path, bytes = std::move(bytes), delay] {
            std::this_thread::sleep_for(delay);
            const int fd = ::open(path.c_str(), O_WRONLY);
            if (fd < 0) return;
            for (size_t done = 0; done < bytes.size();) {
                const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
                if (n <= 0) break;
                done += size_t(n);
            }
            ::close(fd);
        }) { }
    ~FifoWriter() { m_thread.join(); }

private:
    std::thread m_thread;
};

class StreamInput : public ::testing::Test {
protected:
    std::string fifo(const std::string& name) const {
        std::string path = m_dir.path() + "/" + name;
        EXPECT_EQ(mkfifo(path.c_str(), 0600), 0);
        return path;
    }
    tuneup::test::TempDir m_dir { "stream_input_test" };
};

TEST_F(StreamInput, PipedGzipTraceIsDetectedThenImportedFromOneRead) {
    // A trace larger than the head, so that the importer must read on from the pipe.
    std::string text = R"({"traceEvents": [)";
    for (int i = 0; i < 2000; ++i)
        text += R"({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": )" + std::to_string(i * 100)
            + R"(, "dur": 50, "args": {"device": 0, "stream": 7}},)";
    text += R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 9})";
    text += "]}";
    const std::string path = fifo("trace.json.gz");
    FifoWriter writer(path, gzip(text));
    EXPECT_EQ(detectFileFormat(path), TraceFileFormat::KinetoJson);
    EXPECT_EQ(detectFileFormat(path), TraceFileFormat::KinetoJson); // the head again, from memory
    const TraceModel model = importTrace(path);
    EXPECT_EQ(model.kernels.size(), 2000u);
    try {
        importTrace(path);
        ADD_FAILURE() << "a pipe was read twice";
    } catch (const ImportError& e) {
        EXPECT_NE(std::string(e.what()).find("can be read only once"), std::string::npos) << e.what();
    }
}

TEST_F(StreamInput, StandardInputIsDash) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const int savedStdin = dup(STDIN_FILENO);
    ASSERT_EQ(dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
    ::close(fds[0]);
    std::thread writer([fd = fds[1]] {
        const std::string text = kTrace;
        EXPECT_EQ(::write(fd, text.data(), text.size()), ssize_t(text.size()));
        ::close(fd);
    });
    EXPECT_TRUE(isReadOnceInput("-"));
    const TraceModel model = importTrace("-");
    writer.join();
    dup2(savedStdin, STDIN_FILENO);
    ::close(savedStdin);
    EXPECT_EQ(model.kernels.size(), 1u);
}

TEST_F(StreamInput, FifoWithoutWriterSaysWhatItWaitsFor) {
    std::mutex mutex;
    std::string notice;
    setStreamWaitNotice(std::chrono::milliseconds(100), [&](const std::string& text) {
        std::lock_guard lock(mutex);
        notice = text;
    });
    const std::string path = fifo("late.json");
    FifoWriter writer(path, kTrace, std::chrono::milliseconds(800));
    EXPECT_EQ(detectFileFormat(path), TraceFileFormat::KinetoJson);
    setStreamWaitNotice(std::chrono::milliseconds(2000), nullptr);
    std::lock_guard lock(mutex);
    EXPECT_NE(notice.find("waiting for data from FIFO " + path), std::string::npos) << notice;
    EXPECT_NE(notice.find("is anything writing to it?"), std::string::npos) << notice;
}

TEST_F(StreamInput, EmptyPipeIsEmpty) {
    const std::string path = fifo("empty.json");
    FifoWriter writer(path, "");
    try {
        importTrace(path);
        ADD_FAILURE() << "an empty pipe was read";
    } catch (const ImportError& e) {
        EXPECT_EQ(e.kind(), ImportError::Kind::Empty) << e.what();
    }
}

TEST_F(StreamInput, SqliteThroughAPipeIsAClearError) {
    const std::string db = m_dir.path() + "/run.db";
    tuneup::test::writeTrace(db);
    const std::string path = fifo("run.db.pipe");
    FifoWriter writer(path, tuneup::test::readFile(db));
    try {
        importTrace(path);
        ADD_FAILURE() << "SQLite through a pipe";
    } catch (const ImportError& e) {
        EXPECT_NE(std::string(e.what()).find("save it to a file first"), std::string::npos) << e.what();
    }
    // The writer is still writing what the import did not read: let it finish.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK);
    char sink[65536];
    for (int i = 0; i < 200 && fd >= 0; ++i) {
        const ssize_t n = ::read(fd, sink, sizeof sink);
        if (n == 0) break;
        if (n < 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (fd >= 0) ::close(fd);
}

// ---- job summaries --------------------------------------------------------------------------------

std::string summaryError(const std::string& path) {
    try {
        readJobSummary(path);
    } catch (const SummaryFileError& e) {
        return e.what();
    }
    ADD_FAILURE() << path << " was read";
    return "";
}

constexpr const char* kSummaryHead = R"({"format": "tuneup-job-summary", "schema_version": 1, "tool_version": "t", )";

TEST_F(StreamInput, JobSummaryReadsThroughAPipeAndGzip) {
    const std::string text = std::string(kSummaryHead) + R"("ranks": []})";
    const std::string plain = fifo("plain.json");
    FifoWriter plainWriter(plain, text);
    EXPECT_TRUE(readJobSummary(plain).empty());
    const std::string packed = m_dir.path() + "/node.json.gz";
    FILE* f = fopen(packed.c_str(), "wb");
    const std::string bytes = gzip(text);
    fwrite(bytes.data(), 1, bytes.size(), f);
    fclose(f);
    EXPECT_TRUE(readJobSummary(packed).empty());
}

// RapidJSON's recursive parser would overflow the stack on deep nesting: the summary reader's is iterative.
TEST_F(StreamInput, DeeplyNestedSummaryFailsWithItsPlace) {
    const std::string path = m_dir.path() + "/deep.json";
    FILE* f = fopen(path.c_str(), "wb");
    fputs(kSummaryHead, f);
    fputs("\"ranks\": ", f);
    const std::string open(1'000'000, '['), close(1'000'000, ']');
    fputs(open.c_str(), f);
    fputs(close.c_str(), f);
    fputs("}", f);
    fclose(f);
    const std::string message = summaryError(path);
    EXPECT_NE(message.find("ranks[0]"), std::string::npos) << message;
}

TEST_F(StreamInput, SummaryWithNegativeTimesIsRefused) {
    const std::string path = m_dir.path() + "/negative.json";
    const std::string breakdown = "[100, -1, 0, 0, 0, 0, 0, 0, 0]";
    FILE* f = fopen(path.c_str(), "wb");
    fputs((std::string(kSummaryHead) + R"("ranks": [{"path": "a", "format": 1, "rank": 0, "event_count": 1, )"
              + R"("span": null, "device_name": "", "step_source": 0, "step_detail": "", "device": 0, "steps": [], )"
              + R"("per_step": [], "median": )" + breakdown + "}]}")
              .c_str(),
        f);
    fclose(f);
    const std::string message = summaryError(path);
    EXPECT_NE(message.find("ranks[0].median"), std::string::npos) << message;
    EXPECT_NE(message.find("negative"), std::string::npos) << message;
}

} // namespace
