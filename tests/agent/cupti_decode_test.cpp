// CUPTI activity decoding without a GPU: buffers built from this toolkit's real record structs
// (cupti_records.h), walked both by CUPTI's own cuptiActivityGetNextRecord (it works on any buffer, no
// GPU needed) and by a walker that knows the header's record sizes. Loading libcupti and starting
// capture on a machine without a driver are in cupti_capture_test.cpp.

#include "config.h"
#include "cuda_api.h"
#include "cupti_decode.h"
#include "cupti_loader.h"
#include "cupti_records.h"
#include "cupti_source.h"
#include "toolkit_cupti.h"
#include "trace_schema.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace tuneup::agent {
namespace {

using namespace test;

// ---- decoding -----------------------------------------------------------------------------

enum class WalkerKind { Header, Cupti };

class DecodeTest : public ::testing::TestWithParam<WalkerKind> {
protected:
    void SetUp() override {
        if (GetParam() == WalkerKind::Cupti) {
            if (!toolkitCupti()) GTEST_SKIP() << "libcupti not found";
            m_cuptiWalker = std::make_unique<CuptiRecordWalker>(toolkitCupti()->activityGetNextRecord);
        }
        m_options.apiName = testApiName;
    }

    const RecordWalker& walker() const {
        return GetParam() == WalkerKind::Cupti ? static_cast<const RecordWalker&>(*m_cuptiWalker) : m_headerWalker;
    }

    void decode(ActivityBuffer& buffer, size_t validSize = size_t(-1)) {
        decodeActivityBuffer(buffer.data(), std::min(validSize, buffer.size()), walker(), m_options, m_sink, m_stats);
    }

    HeaderLayoutWalker m_headerWalker;
    std::unique_ptr<CuptiRecordWalker> m_cuptiWalker;
    DecodeOptions m_options;
    CollectingSink m_sink;
    DecodeStats m_stats;
};

TEST_P(DecodeTest, ManyRecordsOfEveryKind) {
    static const char* const kNames[] = { "_Z6kernelPfi",
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int, float*)",
        "ampere_sgemm_128x64_tn", "" };
    std::vector<std::string> expected, expectedSyncs; // syncs come at the end of their pass
    DecodeStats expectedStats;
    const int kBuffers = 3;
    const uint32_t kPerBuffer = 300;
    for (int b = 0; b < kBuffers; ++b) {
        ActivityBuffer buffer;
        if (b == 0) {
            buffer.add(deviceRecord(0, true));
            expected.push_back(describe(DeviceRecord { 0, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85'000'000'000ull,
                3'352'000'000, 1'980'000, "GPU-00112233-4455-6677-8899-aabbccddeeff" }));
            buffer.add(deviceRecord(1, false));
            expected.push_back(describe(DeviceRecord {
                1, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85'000'000'000ull, 3'352'000'000, 1'980'000, "" }));
            expectedStats.devices += 2;
        }
        for (uint32_t j = 0; j < kPerBuffer; ++j) {
            const uint32_t i = uint32_t(b) * kPerBuffer + j;
            const uint64_t t = 1'000'000'000ull + uint64_t(i) * 10'000;
            const char* name = kNames[i % 4];
            buffer.add(apiRecord(t, t + 900, i, true));
            expected.push_back(describe(expectedApi(t, t + 900, i, true)));
            buffer.add(apiRecord(t + 100, t + 800, i, false));
            expected.push_back(describe(expectedApi(t + 100, t + 800, i, false)));
            buffer.add(kernelRecord(t + 2000, t + 5000 + i, i, name));
            expected.push_back(describe(expectedKernel(t + 2000, t + 5000 + i, i, name)));
            expectedStats.runtimeApis++, expectedStats.driverApis++, expectedStats.kernels++;
            switch (i % 4) {
            case 0:
                buffer.add(memcpyRecord(t + 6000, t + 7000, i));
                expected.push_back(describe(expectedMemcpy(t + 6000, t + 7000, i)));
                expectedStats.memcpys++;
                break;
            case 1:
                buffer.add(peerRecord(t + 6000, t + 6500, i));
                expected.push_back(describe(expectedPeer(t + 6000, t + 6500, i)));
                expectedStats.memcpys++;
                break;
            case 2:
                buffer.add(memsetRecord(t + 6000, t + 6100, i));
                expected.push_back(describe(expectedMemset(t + 6000, t + 6100, i)));
                expectedStats.memsets++;
                break;
            case 3:
                buffer.add(syncRecord(t + 6000, t + 9000, i));
                expectedSyncs.push_back(describe(expectedSync(t + 6000, t + 9000, i)));
                expectedStats.syncs++;
                break;
            }
            if (i % 50 == 7) { // kinds CUPTI knows and the agent skips, around an external correlation it keeps
                CUpti_ActivityContext3 context {};
                context.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
                context.contextId = 1;
                buffer.add(context);
                // The id the agent's interposers push around a library call (interpose_record.h).
                CUpti_ActivityExternalCorrelation external {};
                external.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
                external.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
                external.externalId = 99 + i;
                external.correlationId = 1000 + i;
                buffer.add(external);
                expected.push_back(describe(ExternalCorrelationRecord { 5, 99 + i, 1000 + i }));
                expectedStats.externalCorrelations++;
                CUpti_ActivityOverhead3 overhead {};
                overhead.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
                overhead.start = t;
                overhead.end = t + 5;
                buffer.add(overhead);
                expectedStats.unknownKind += 2;
            }
            if (i % 60 == 11) { // no timing: not written
                buffer.add(kernelRecord(0, 0, i, name));
                buffer.add(memcpyRecord(0, 0, i));
                buffer.add(apiRecord(0, 0, i, true));
                expectedStats.noTimestamp += 3;
            }
            if (i % 70 == 13) { // ends before it starts: written with end = start
                buffer.add(kernelRecord(t + 3000, t + 2500, i, name));
                expected.push_back(describe(expectedKernel(t + 3000, t + 3000, i, name)));
                buffer.add(memsetRecord(t + 3000, 0, i));
                expected.push_back(describe(expectedMemset(t + 3000, t + 3000, i)));
                expectedStats.kernels++, expectedStats.memsets++;
                expectedStats.endBeforeStart += 2;
            }
        }
        decode(buffer);
        expected.insert(expected.end(), expectedSyncs.begin(), expectedSyncs.end());
        expectedSyncs.clear();
        expectedStats.buffers++;
    }
    ASSERT_EQ(m_sink.lines.size(), expected.size());
    for (size_t i = 0; i < expected.size(); ++i)
        ASSERT_EQ(m_sink.lines[i], expected[i]) << "record " << i;
    EXPECT_EQ(m_stats, expectedStats);
    EXPECT_EQ(m_stats.records(), expected.size());
    EXPECT_GT(m_stats.unknownKind, 0u);
    EXPECT_GT(m_stats.noTimestamp, 0u);
    EXPECT_GT(m_stats.endBeforeStart, 0u);
}

// ---- GPU memory: CUPTI's MEMORY2 records -----------------------------------------------------

TEST_P(DecodeTest, MemoryAllocationsAndReleases) {
    ActivityBuffer buffer;
    std::vector<std::string> expected;
    for (uint32_t i = 0; i < 40; ++i) {
        const uint64_t t = 1'000'000 + 1'000 * i;
        buffer.add(memoryRecord(t, i));
        expected.push_back(describe(expectedMemory(t, i)));
        if (i % 9 == 5) { // between the memory records, as a kernel would be
            buffer.add(kernelRecord(t + 10, t + 500, i, "k"));
            expected.push_back(describe(expectedKernel(t + 10, t + 500, i, "k")));
        }
    }
    decode(buffer);
    EXPECT_EQ(m_sink.lines, expected);
    EXPECT_EQ(m_stats.memories, 40u);
    EXPECT_EQ(m_stats.records(), expected.size());
    EXPECT_EQ(m_stats.unknownKind, 0u);
}

TEST_P(DecodeTest, MemoryRecordsWithoutAnOperationOrATimeAreSkipped) {
    m_options.clockOffsetNs = 100;
    ActivityBuffer buffer;
    CUpti_ActivityMemory4 invalid = memoryRecord(5'000, 0);
    invalid.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
    buffer.add(invalid);
    buffer.add(memoryRecord(0, 1)); // no timestamp
    buffer.add(memoryRecord(6'000, 2));
    decode(buffer);
    EXPECT_EQ(m_sink.lines, std::vector<std::string> { describe(expectedMemory(5'900, 2)) });
    EXPECT_EQ(m_stats.memoryNotOperations, 1u);
    EXPECT_EQ(m_stats.noTimestamp, 1u);
    EXPECT_EQ(m_stats.records(), 1u);
}

TEST_P(DecodeTest, MemoryRecordsOfTheFirstLayout) {
    // CUDA 11.2's CUPTI writes CUpti_ActivityMemory2 (no utilizedSize, no source): every field the agent
    // reads is where the newest record has it.
    if (GetParam() == WalkerKind::Cupti) GTEST_SKIP() << "this CUPTI writes the newest record";
    m_headerWalker.older[CUPTI_ACTIVITY_KIND_MEMORY2] = sizeof(CUpti_ActivityMemory2);
    ActivityBuffer buffer;
    for (uint32_t i = 2; i < 5; ++i) {
        const CUpti_ActivityMemory4 current = memoryRecord(7'000 + i, i);
        CUpti_ActivityMemory2 old {};
        std::memcpy(&old, &current, sizeof old);
        buffer.add(old);
    }
    buffer.add(memsetRecord(9'000, 9'100, 1)); // right after the shorter records
    decode(buffer);
    EXPECT_EQ(m_sink.lines,
        (std::vector<std::string> { describe(expectedMemory(7'002, 2)), describe(expectedMemory(7'003, 3)),
            describe(expectedMemory(7'004, 4)), describe(expectedMemset(9'000, 9'100, 1)) }));
}

TEST_P(DecodeTest, KindCuptiDoesNotKnowEndsTheBuffer) {
    ActivityBuffer buffer;
    buffer.add(memsetRecord(10, 20, 1));
    CUpti_ActivityAPI bogus {};
    bogus.kind = CUpti_ActivityKind(9999);
    buffer.add(bogus);
    buffer.add(memsetRecord(30, 40, 2)); // unreachable: the bogus record's size is unknown
    decode(buffer);
    ASSERT_EQ(m_sink.lines, std::vector<std::string> { describe(expectedMemset(10, 20, 1)) });
    DecodeStats expected;
    expected.buffers = 1;
    expected.memsets = 1;
    expected.invalidBuffers = 1;
    EXPECT_EQ(m_stats, expected);
}

TEST_P(DecodeTest, RecordCutShortEndsTheWalk) {
    ActivityBuffer buffer;
    buffer.add(syncRecord(10, 20, 0));
    buffer.add(kernelRecord(30, 40, 1, "k"));
    decode(buffer, buffer.size() - 8);
    ASSERT_EQ(m_sink.lines, std::vector<std::string> { describe(expectedSync(10, 20, 0)) });
    EXPECT_EQ(m_stats.invalidBuffers, 0u);
    EXPECT_EQ(m_stats.records(), 1u);
}

TEST_P(DecodeTest, EmptyBuffers) {
    ActivityBuffer buffer;
    decode(buffer);
    decodeActivityBuffer(nullptr, 100, walker(), m_options, m_sink, m_stats);
    EXPECT_TRUE(m_sink.lines.empty());
    DecodeStats expected;
    expected.buffers = 2;
    EXPECT_EQ(m_stats, expected);
}

TEST_P(DecodeTest, ClockOffsetMapsCuptiTimeToMonotonic) {
    m_options.clockOffsetNs = 1'000;
    ActivityBuffer buffer;
    buffer.add(kernelRecord(5'000, 6'000, 1, "k"));
    buffer.add(apiRecord(4'000, 4'500, 1, true));
    buffer.add(memcpyRecord(500, 2'000, 0)); // before the offset: clamped to 0, never wraps
    decode(buffer);
    EXPECT_EQ(m_sink.lines,
        (std::vector<std::string> { describe(expectedKernel(4'000, 5'000, 1, "k")),
            describe(expectedApi(3'000, 3'500, 1, true)), describe(expectedMemcpy(0, 1'000, 0)) }));
}

TEST_P(DecodeTest, ApiNamesAreEmptyWithoutLookup) {
    m_options.apiName = nullptr;
    ActivityBuffer buffer;
    buffer.add(apiRecord(1, 2, 1, true));
    decode(buffer);
    ApiRecord expected = expectedApi(1, 2, 1, true);
    expected.name = {};
    EXPECT_EQ(m_sink.lines, std::vector<std::string> { describe(expected) });
}

// ---- synchronisation records that are not waits (CUDA 13 reports queries by default) ------------

CUpti_ActivityAPI callRecord(uint64_t start, uint32_t correlation, bool runtime, uint32_t cbid) {
    CUpti_ActivityAPI a = apiRecord(start, start + 100, 1, runtime);
    a.cbid = cbid;
    a.correlationId = correlation;
    a.returnValue = 0;
    return a;
}

TEST_P(DecodeTest, QueriesOfUnfinishedWorkAreNotWaits) {
    ActivityBuffer buffer;
    CUpti_ActivitySynchronization2 notReady = syncRecord(10, 11, 1);
    notReady.returnValue = 600; // CUDA_ERROR_NOT_READY: cudaEventQuery found the event pending
    buffer.add(notReady);
    buffer.add(syncRecord(20, 90, 4)); // a real wait (returnValue 0)
    decode(buffer);
    EXPECT_EQ(m_sink.lines, std::vector<std::string> { describe(expectedSync(20, 90, 4)) });
    EXPECT_EQ(m_stats.syncNotWaits, 1u);
    EXPECT_EQ(m_stats.syncs, 1u);
}

TEST_P(DecodeTest, QueryCallsAreNotWaitsEvenInALaterBufferOfThePass) {
    // The sync record of a finished query (return value 0) is told from a wait by its call's API record,
    // which may come first, later in the buffer, or in another buffer of the same pass.
    ActivityBuffer first, second;
    CUpti_ActivitySynchronization2 query = syncRecord(100, 101, 1);
    query.correlationId = 71;
    first.add(query);
    CUpti_ActivitySynchronization2 driverQuery = syncRecord(200, 201, 0);
    driverQuery.correlationId = 72;
    first.add(driverQuery);
    CUpti_ActivitySynchronization2 wait = syncRecord(300, 900, 1);
    wait.correlationId = 73;
    first.add(wait);
    first.add(callRecord(300, 73, true, CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020));
    second.add(callRecord(100, 71, true, CUPTI_RUNTIME_TRACE_CBID_cudaEventQuery_v3020));
    second.add(callRecord(200, 72, false, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery));
    ActivityDecoder pass(m_options, m_sink, m_stats);
    pass.decode(first.data(), first.size(), walker());
    pass.decode(second.data(), second.size(), walker());
    pass.finish();
    SyncRecord expectedWait = expectedSync(300, 900, 1);
    expectedWait.correlationId = 73;
    ApiRecord synchronize = expectedApi(300, 400, 1, true);
    synchronize.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaEventSynchronize_v3020;
    synchronize.correlationId = 73;
    synchronize.returnValue = 0;
    synchronize.name = "cudaEventSynchronize";
    // The queries are noisy calls: counted, not written.
    EXPECT_EQ(m_sink.lines, (std::vector<std::string> { describe(synchronize), describe(expectedWait) }));
    EXPECT_EQ(m_stats.syncNotWaits, 2u);
    EXPECT_EQ(m_stats.syncs, 1u);
    EXPECT_EQ(m_stats.countedApis,
        (std::map<std::string, uint64_t, std::less<>> { { "cudaEventQuery", 1 }, { "cuStreamQuery", 1 } }));
}

TEST_P(DecodeTest, ReturnValueIsReadOnlyWhereTheRecordHasIt) {
    // A CUPTI before 12.8 writes the shorter synchronisation record: its return value does not exist, and
    // the bytes where it would be belong to the next record.
    if (GetParam() == WalkerKind::Cupti) GTEST_SKIP() << "this CUPTI writes the longer record";
    m_headerWalker.older[CUPTI_ACTIVITY_KIND_SYNCHRONIZATION] = sizeof(CUpti_ActivitySynchronization);
    ActivityBuffer buffer;
    CUpti_ActivitySynchronization old {};
    old.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    old.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    old.start = 10;
    old.end = 50;
    old.correlationId = 5;
    old.contextId = 1;
    old.streamId = 7;
    old.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
    buffer.add(old);
    buffer.add(memsetRecord(60, 70, 3)); // non-zero bytes where a longer record's returnValue would be
    decode(buffer);
    SyncRecord expected;
    expected.startNs = 10;
    expected.endNs = 50;
    expected.type = 3;
    expected.contextId = 1;
    expected.correlationId = 5;
    expected.streamId = 7;
    EXPECT_EQ(m_sink.lines, (std::vector<std::string> { describe(expectedMemset(60, 70, 3)), describe(expected) }));
    EXPECT_EQ(m_stats.syncNotWaits, 0u);
}

// ---- noisy API calls: counted per name, not written -------------------------------------------

TEST_P(DecodeTest, NoisyCallsAreCountedPerName) {
    ActivityBuffer buffer;
    for (uint32_t i = 0; i < 50; ++i)
        buffer.add(callRecord(1000 + i, 100 + i, true, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
    buffer.add(callRecord(5000, 900, true, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
    decode(buffer);
    ASSERT_EQ(m_sink.lines.size(), 1u);
    EXPECT_NE(m_sink.lines[0].find("'cudaLaunchKernel'"), std::string::npos) << m_sink.lines[0];
    EXPECT_EQ(m_stats.countedApis, (std::map<std::string, uint64_t, std::less<>> { { "cudaGetDevice", 50 } }));
    EXPECT_EQ(m_stats.runtimeApis, 1u);
}

TEST_P(DecodeTest, NoisyCallsAsRowsWhenAsked) {
    m_options.noisyApiRows = true;
    ActivityBuffer buffer;
    buffer.add(callRecord(1000, 100, true, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
    buffer.add(callRecord(2000, 101, false, CUPTI_DRIVER_TRACE_CBID_cuStreamQuery));
    decode(buffer);
    ASSERT_EQ(m_sink.lines.size(), 2u);
    EXPECT_NE(m_sink.lines[0].find("'cudaGetDevice'"), std::string::npos) << m_sink.lines[0];
    EXPECT_NE(m_sink.lines[1].find("'cuStreamQuery'"), std::string::npos) << m_sink.lines[1];
    EXPECT_TRUE(m_stats.countedApis.empty());
}

INSTANTIATE_TEST_SUITE_P(Walkers, DecodeTest, ::testing::Values(WalkerKind::Header, WalkerKind::Cupti),
    [](const ::testing::TestParamInfo<WalkerKind>& param) {
        return param.param == WalkerKind::Cupti ? std::string("CuptiGetNextRecord") : std::string("HeaderLayout");
    });

TEST(ApiDisplayName, DropsOnlyCuptisVersionTag) {
    EXPECT_EQ(apiDisplayName("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
    EXPECT_EQ(apiDisplayName("cudaMemcpyAsync_ptsz_v7000"), "cudaMemcpyAsync_ptsz");
    EXPECT_EQ(apiDisplayName("cudaGetDeviceProperties_v2_v12000"), "cudaGetDeviceProperties_v2");
    EXPECT_EQ(apiDisplayName("cuMemcpyHtoD_v2"), "cuMemcpyHtoD_v2");
    EXPECT_EQ(apiDisplayName("cuLaunchKernel"), "cuLaunchKernel");
    EXPECT_EQ(apiDisplayName("cuFoo_v12a4"), "cuFoo_v12a4");
    EXPECT_EQ(apiDisplayName("_v1234"), "");
    EXPECT_EQ(apiDisplayName(""), "");
}

} // namespace
} // namespace tuneup::agent
