// CUPTI's activity buffers in a real process, with a stand-in libcupti that fills them as CUPTI does on a
// GPU (tests/clients/cupti_standin.cpp): no GPU here, and the real CUPTI asks for no buffer without one.
// Checked: at the defaults every record is written; the buffers come from the agent's budget, shared with
// the threads' event buffers, so under a small budget CUPTI is refused buffers and the records it drops are
// counted as CUPTI's in event_counts, none lost uncounted; TUNEUP_CUPTI_DUMP writes the buffers the agent
// decoded, which the tests' loader reads back into the same kernels.

#include "cupti_dump_reader.h"
#include "injection.h"
#include "sqlite_query.h"

#include <cupti.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>

using namespace tuneup::test;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

namespace {

// Kernel records in one of the agent's 1 MiB buffers.
constexpr int kPerBuffer = int((size_t(1) << 20) / sizeof(CUpti_ActivityKernel10));

class CuptiBuffersTest : public ::testing::Test {
protected:
    std::unique_ptr<SqliteQuery> run(int kernels, const std::map<std::string, std::string>& env = {}) {
        InjectOptions options;
        options.env["TUNEUP_TRACE"] = "nvtx,cuda";
        options.env["TUNEUP_CUPTI_PATH"] = TUNEUP_TEST_CUPTI_STANDIN;
        for (const auto& [name, value] : env)
            options.env[name] = value;
        InjectedProcess process(
            m_dir, { TUNEUP_TEST_CUPTI_BUFFERS_CLIENT, TUNEUP_TEST_CUPTI_STANDIN, std::to_string(kernels) }, options);
        EXPECT_TRUE(process.wait(120s));
        EXPECT_EQ(process.exitCode(), 0) << process.err();
        auto q = std::make_unique<SqliteQuery>(m_dir.base());
        EXPECT_TRUE(q->ok()) << q->error();
        EXPECT_EQ(q->meta("capture.cuda"), "on") << process.err();
        return q;
    }

    // event_counts' row for CUPTI: written, dropped.
    static std::vector<Row> cuptiCounts(SqliteQuery& q) {
        return q.rows("SELECT written, dropped FROM event_counts WHERE source = 'cupti'");
    }

    TempDir m_dir;
};

TEST_F(CuptiBuffersTest, AtTheDefaultsEveryRecordIsWritten) {
    const int kernels = 3 * kPerBuffer + 100;
    auto q = run(kernels);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM kernels"), kernels);
    EXPECT_EQ(cuptiCounts(*q), (std::vector<Row> { { std::to_string(kernels), "0" } }));
    EXPECT_EQ(q->stat("cupti.buffers_refused"), 0);
    EXPECT_EQ(q->stat("cupti.buffers_over_budget"), 0);
    EXPECT_GE(q->stat("cupti.buffer_bytes_peak"), 1 << 20);
}

// A budget of 2 MiB, shared with the thread's event buffer: CUPTI gets one buffer, not a second while the
// first is still held, and the records it has no room for are dropped and counted.
TEST_F(CuptiBuffersTest, OverTheBudgetCuptisDropsAreCountedAsCuptis) {
    const int kernels = 20 * kPerBuffer;
    auto q = run(kernels, { { "TUNEUP_MAX_BUFFER_MB", "2" } });
    const int64_t written = q->scalar("SELECT count(*) FROM kernels");
    EXPECT_GT(written, 0);
    EXPECT_LT(written, kernels);
    EXPECT_EQ(cuptiCounts(*q), (std::vector<Row> { { std::to_string(written), std::to_string(kernels - written) } }))
        << "every record is written or counted as dropped";
    EXPECT_GT(q->stat("cupti.buffers_refused"), 0);
    EXPECT_GT(q->stat("cupti.buffers_over_budget"), 0);
    EXPECT_LE(q->stat("cupti.buffer_bytes_peak"), 2 << 20);
    EXPECT_EQ(q->stat("cupti.dropped"), kernels - written);
}

TEST_F(CuptiBuffersTest, DumpedBuffersReadBackAsTheKernelsWritten) {
    const int kernels = 2 * kPerBuffer + 500;
    const std::string dumps = m_dir.path() + "/dumps";
    auto q = run(kernels, { { "TUNEUP_CUPTI_DUMP", dumps } });
    EXPECT_EQ(q->meta("cupti.dump"), dumps);
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(dumps))
        files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    ASSERT_EQ(files.size(), 3u) << "two full buffers and the one flushed at exit";
    EXPECT_EQ(q->stat("cupti.dump_files"), 3);
    EXPECT_EQ(q->stat("cupti.dump_not_written"), 0);

    // The kernels, as the file has them and as the buffers read back have them.
    const auto recorded = q->rows("SELECT k.start_ns, k.end_ns, k.correlation_id, s.value FROM kernels k "
                                  "JOIN strings s ON s.id = k.name_id ORDER BY k.correlation_id");
    std::vector<Row> readBack;
    struct Kernels final : tuneup::agent::ActivitySink {
        std::vector<Row>* out;
        void kernel(const tuneup::agent::KernelRecord& k) override {
            out->push_back({ std::to_string(k.startNs), std::to_string(k.endNs), std::to_string(k.correlationId),
                std::string(k.name) });
        }
        void memcpy(const tuneup::agent::MemcpyRecord&) override { }
        void memset(const tuneup::agent::MemsetRecord&) override { }
        void sync(const tuneup::agent::SyncRecord&) override { }
        void api(const tuneup::agent::ApiRecord&) override { }
        void device(const tuneup::agent::DeviceRecord&) override { }
        void externalCorrelation(const tuneup::agent::ExternalCorrelationRecord&) override { }
    } sink;
    sink.out = &readBack;
    for (const std::string& file : files) {
        CuptiDump dump = readCuptiDump(file);
        ASSERT_EQ(dump.error, "") << file;
        EXPECT_EQ(dump.header.cuptiVersion, uint32_t(CUPTI_API_VERSION));
        EXPECT_NE(std::find(dump.kinds.begin(), dump.kinds.end(), int32_t(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)),
            dump.kinds.end());
        tuneup::agent::DecodeOptions options;
        options.apiName = [](int, uint32_t) { return tuneup::agent::ApiNameInfo {}; };
        options.clockOffsetNs = dump.header.clockOffsetNs;
        tuneup::agent::DecodeStats stats;
        decodeActivityBuffer(dump.buffer(), dump.validBytes(), CuptiDumpWalker(dump), options, sink, stats);
    }
    std::sort(readBack.begin(), readBack.end(),
        [](const Row& a, const Row& b) { return std::stoll(*a[2]) < std::stoll(*b[2]); });
    EXPECT_EQ(int(readBack.size()), kernels);
    EXPECT_EQ(readBack, recorded);
}

TEST_F(CuptiBuffersTest, DumpsStopAtTheirLimit) {
    const std::string dumps = m_dir.path() + "/dumps";
    auto q = run(4 * kPerBuffer, { { "TUNEUP_CUPTI_DUMP", dumps }, { "TUNEUP_CUPTI_DUMP_MB", "2" } });
    EXPECT_EQ(q->scalar("SELECT count(*) FROM kernels"), 4 * kPerBuffer) << "decoded all the same";
    const int64_t files = std::distance(fs::directory_iterator(dumps), fs::directory_iterator());
    EXPECT_EQ(q->stat("cupti.dump_files"), files);
    EXPECT_LE(q->stat("cupti.dump_bytes"), 2 << 20);
    EXPECT_EQ(files + q->stat("cupti.dump_not_written"), 4);
    EXPECT_GE(files, 1);
}

} // namespace
