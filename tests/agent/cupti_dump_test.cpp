// CUPTI buffers written to files (TUNEUP_CUPTI_DUMP) and read back as decoder fixtures: a buffer built
// from this toolkit's real record structs, walked by the real libcupti as the agent does, written, read
// with the tests' loader (tests/support/cupti_dump_reader.h) and decoded, must give what decoding the
// buffer itself gives; and every fixture kept in tests/fixtures/cupti_buffers (recorded on a GPU by
// scripts/gpu-bundle.sh's check, or by the agent here) must decode, wherever the tests run.

#include "cupti_decode.h"
#include "cupti_dump.h"
#include "cupti_dump_reader.h"
#include "cupti_loader.h"
#include "temp_dir.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <sstream>
#include <unistd.h>

namespace tuneup::agent {
namespace {

using test::CuptiDump;
using test::CuptiDumpWalker;
using test::readCuptiDump;
namespace fs = std::filesystem;

const CuptiApi* cupti() {
    static CuptiApi api;
    static const bool loaded = [] {
        std::string error;
        return loadCupti("", api, error);
    }();
    return loaded ? &api : nullptr;
}

// Names for API records from the real libcupti (kept: the decoder holds views of them).
ApiNameInfo apiName(int api, uint32_t cbid) {
    static std::map<std::pair<int, uint32_t>, std::string> names;
    auto [it, added] = names.try_emplace({ api, cbid });
    const char* raw = nullptr;
    const auto domain = api == 1 ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
    if (added && cupti() && cupti()->getCallbackName && cupti()->getCallbackName(domain, cbid, &raw) == CUPTI_SUCCESS
        && raw)
        it->second = std::string(apiDisplayName(raw));
    return { it->second, false, false };
}

// Every record the decoder hands over, one line each.
class LineSink final : public ActivitySink {
public:
    std::vector<std::string> lines;
    void kernel(const KernelRecord& r) override {
        add("kernel", r.startNs, r.endNs, r.correlationId, std::string(r.name) + " grid " + std::to_string(r.gridX));
    }
    void memcpy(const MemcpyRecord& r) override {
        add("memcpy", r.startNs, r.endNs, r.correlationId,
            std::to_string(r.bytes) + " kind " + std::to_string(r.copyKind));
    }
    void memset(const MemsetRecord& r) override {
        add("memset", r.startNs, r.endNs, r.correlationId, std::to_string(r.bytes));
    }
    void sync(const SyncRecord& r) override {
        add("sync", r.startNs, r.endNs, r.correlationId, "type " + std::to_string(r.type));
    }
    void api(const ApiRecord& r) override {
        add("api", r.startNs, r.endNs, r.correlationId, std::string(r.name) + " cbid " + std::to_string(r.cbid));
    }
    void device(const DeviceRecord& r) override { add("device", 0, 0, r.id, std::string(r.name)); }
    void externalCorrelation(const ExternalCorrelationRecord& r) override {
        add("external", 0, 0, r.correlationId, std::to_string(r.externalId));
    }

private:
    void add(const char* what, uint64_t start, uint64_t end, uint64_t correlation, const std::string& rest) {
        std::ostringstream s;
        s << what << " " << start << "-" << end << " corr " << correlation << " " << rest;
        lines.push_back(s.str());
    }
};

// A buffer as CUPTI lays it out: records back to back, 8-byte aligned.
class ActivityBuffer {
public:
    template <typename Record> void add(const Record& record) {
        const size_t offset = m_bytes;
        m_bytes += sizeof record;
        m_words.resize(m_bytes / 8);
        std::memcpy(data() + offset, &record, sizeof record);
    }
    uint8_t* data() { return reinterpret_cast<uint8_t*>(m_words.data()); }
    size_t size() const { return m_bytes; }

private:
    std::vector<uint64_t> m_words;
    size_t m_bytes = 0;
};

ActivityBuffer everyKind() {
    ActivityBuffer b;
    CUpti_ActivityDevice5 d {};
    d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
    d.id = 0;
    d.numMultiprocessors = 132;
    d.computeCapabilityMajor = 9;
    d.name = "NVIDIA H100 80GB HBM3";
    b.add(d);
    static const char* const kNames[] = { "ampere_sgemm_128x64_tn", "_Z6kernelPfi", "" };
    for (uint32_t i = 0; i < 30; ++i) {
        const uint64_t t = 1'000'000 + i * 1000;
        CUpti_ActivityAPI a {};
        a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
        a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
        a.start = t;
        a.end = t + 5;
        a.correlationId = 100 + i;
        a.threadId = 77;
        b.add(a);
        CUpti_ActivityKernel10 k {};
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.start = t + 10;
        k.end = t + 500;
        k.correlationId = 100 + i;
        k.gridX = int32_t(i + 1);
        k.name = i % 4 == 3 ? nullptr : kNames[i % 3];
        b.add(k);
        CUpti_ActivityMemcpy6 m {};
        m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
        m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
        m.bytes = 4096 + i;
        m.start = t + 600;
        m.end = t + 700;
        m.correlationId = 200 + i;
        b.add(m);
        CUpti_ActivitySynchronization2 s {};
        s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
        s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
        s.start = t + 700;
        s.end = t + 900;
        s.correlationId = 300 + i;
        b.add(s);
        CUpti_ActivityExternalCorrelation e {};
        e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
        e.externalId = 9000 + i;
        e.correlationId = 100 + i;
        b.add(e);
    }
    return b;
}

std::vector<std::string> decodeLines(
    uint8_t* buffer, size_t validSize, const RecordWalker& walker, int64_t clockOffsetNs, DecodeStats& stats) {
    DecodeOptions options;
    options.apiName = apiName;
    options.clockOffsetNs = clockOffsetNs;
    LineSink sink;
    decodeActivityBuffer(buffer, validSize, walker, options, sink, stats);
    return sink.lines;
}

class CuptiDumpTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!cupti()) GTEST_SKIP() << "no libcupti";
        m_walker = std::make_unique<CuptiRecordWalker>(cupti()->activityGetNextRecord);
    }
    std::unique_ptr<CuptiRecordWalker> m_walker;
    test::TempDir m_dir { "tuneup_cupti_dump" };
    const std::vector<int32_t> m_kinds { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION };
};

TEST_F(CuptiDumpTest, AWrittenBufferDecodesAsTheBufferItself) {
    ActivityBuffer buffer = everyKind();
    CuptiDumper dumper(m_dir.path() + "/dumps", 1 << 20, 130001, m_kinds);
    ASSERT_TRUE(dumper.dump(buffer.data(), buffer.size(), *m_walker, -42));
    const std::vector<std::string> files = [&] {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(m_dir.path() + "/dumps"))
            names.push_back(entry.path().string());
        return names;
    }();
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(fs::path(files[0]).filename().string(), "cupti.pid" + std::to_string(getpid()) + ".00000.bin");
    EXPECT_EQ(dumper.filesWritten(), 1u);
    EXPECT_EQ(dumper.bytesWritten(), fs::file_size(files[0]));

    // The file names no address: the strings are in it, the pointers zero.
    const std::string raw = test::readFile(files[0]);
    EXPECT_NE(raw.find("ampere_sgemm_128x64_tn"), std::string::npos);
    EXPECT_NE(raw.find("NVIDIA H100 80GB HBM3"), std::string::npos);

    CuptiDump dump = readCuptiDump(files[0]);
    ASSERT_EQ(dump.error, "");
    EXPECT_EQ(dump.header.cuptiVersion, 130001u);
    EXPECT_EQ(dump.header.pid, uint32_t(getpid()));
    EXPECT_EQ(dump.header.clockOffsetNs, -42);
    EXPECT_EQ(dump.kinds, m_kinds);
    EXPECT_EQ(dump.header.recordCount, 1u + 30 * 5);
    EXPECT_EQ(dump.header.stringCount, 1u + 30 - 30 / 4) << "the device's name and each named kernel's";
    EXPECT_EQ(dump.validBytes(), buffer.size());

    DecodeStats direct, fromFile;
    const auto expected = decodeLines(buffer.data(), buffer.size(), *m_walker, -42, direct);
    const auto decoded = decodeLines(dump.buffer(), dump.validBytes(), CuptiDumpWalker(dump), -42, fromFile);
    EXPECT_EQ(decoded, expected);
    EXPECT_EQ(fromFile, direct);
    EXPECT_EQ(direct.kernels, 30u);
    EXPECT_EQ(direct.devices, 1u);
    EXPECT_EQ(direct.externalCorrelations, 30u);
}

TEST_F(CuptiDumpTest, ABufferCuptiCouldNotWalkStopsWhereItDid) {
    ActivityBuffer buffer = everyKind();
    CUpti_ActivityKernel10 unknown {};
    unknown.kind = CUpti_ActivityKind(0x7ffffff0); // no CUPTI knows it
    buffer.add(unknown);
    const CuptiDumper dumper(m_dir.path(), 1 << 20, 130001, m_kinds);
    const std::vector<uint8_t> bytes = dumper.encode(buffer.data(), buffer.size(), *m_walker, 0, 7);
    const std::string path = m_dir.path() + "/cut.bin";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    CuptiDump dump = readCuptiDump(path);
    ASSERT_EQ(dump.error, "");
    EXPECT_EQ(dump.header.sequence, 7u);
    EXPECT_TRUE(dump.header.flags & kCuptiDumpWalkInvalid);
    DecodeStats direct, fromFile;
    EXPECT_EQ(decodeLines(dump.buffer(), dump.validBytes(), CuptiDumpWalker(dump), 0, fromFile),
        decodeLines(buffer.data(), buffer.size(), *m_walker, 0, direct));
    EXPECT_EQ(fromFile, direct);
    EXPECT_EQ(direct.invalidBuffers, 1u);
}

TEST_F(CuptiDumpTest, StopsWritingAtItsLimit) {
    ActivityBuffer buffer = everyKind();
    const size_t one
        = CuptiDumper(m_dir.path(), 1 << 20, 1, m_kinds).encode(buffer.data(), buffer.size(), *m_walker, 0, 0).size();
    CuptiDumper dumper(m_dir.path() + "/limited", 2 * one + one / 2, 130001, m_kinds);
    for (int i = 0; i < 5; ++i)
        dumper.dump(buffer.data(), buffer.size(), *m_walker, 0);
    EXPECT_EQ(dumper.filesWritten(), 2u);
    EXPECT_EQ(dumper.bytesWritten(), 2 * one);
    EXPECT_EQ(dumper.buffersNotWritten(), 3u);
    EXPECT_EQ(std::distance(fs::directory_iterator(m_dir.path() + "/limited"), fs::directory_iterator()), 2);
}

TEST_F(CuptiDumpTest, AFolderThatCannotBeWrittenStopsTheDumpsAndNothingElse) {
    CuptiDumper dumper("/proc/no/such/folder", 1 << 20, 130001, m_kinds);
    ActivityBuffer buffer = everyKind();
    EXPECT_FALSE(dumper.dump(buffer.data(), buffer.size(), *m_walker, 0));
    EXPECT_FALSE(dumper.dump(buffer.data(), buffer.size(), *m_walker, 0));
    EXPECT_EQ(dumper.filesWritten(), 0u);
    EXPECT_EQ(dumper.buffersNotWritten(), 2u);
}

TEST(CuptiDumpReader, RefusesWhatIsNotADump) {
    const test::TempDir dir("tuneup_cupti_dump");
    std::ofstream(dir.path() + "/junk.bin")
        << "not a dump at all, but long enough to hold a header of sixty-four bytes";
    EXPECT_NE(readCuptiDump(dir.path() + "/junk.bin").error, "");
    EXPECT_NE(readCuptiDump(dir.path() + "/absent.bin").error, "");
}

// The fixtures brought back from GPU runs: each decodes, every record is accounted for, and what is
// written is sane. Runs wherever the tests run: the file carries the record offsets and strings.
TEST(CuptiDumpFixtures, EveryKeptBufferDecodes) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(TUNEUP_CUPTI_FIXTURES))
        if (entry.path().extension() == ".bin") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    ASSERT_FALSE(files.empty()) << "no fixtures in " << TUNEUP_CUPTI_FIXTURES;
    for (const fs::path& file : files) {
        SCOPED_TRACE(file.filename().string());
        CuptiDump dump = readCuptiDump(file.string());
        ASSERT_EQ(dump.error, "");
        DecodeStats stats;
        const auto lines
            = decodeLines(dump.buffer(), dump.validBytes(), CuptiDumpWalker(dump), dump.header.clockOffsetNs, stats);
        uint64_t counted = 0;
        for (const auto& [name, calls] : stats.countedApis)
            counted += calls;
        EXPECT_EQ(stats.invalidBuffers, (dump.header.flags & kCuptiDumpWalkInvalid) ? 1u : 0u);
        EXPECT_EQ(stats.records() + stats.unknownKind + stats.noTimestamp + stats.syncNotWaits + counted,
            dump.header.recordCount);
        EXPECT_EQ(lines.size(), stats.records());
        EXPECT_GT(dump.header.recordCount, 0u);
    }
}

} // namespace
} // namespace tuneup::agent
