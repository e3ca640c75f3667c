// ThreadRing: the lock-free per-thread event buffer that grows segment by segment from the shared
// BufferBudget. Records of every size survive the trip, a ring grows instead of dropping while the
// budget lasts, drops only when it is spent (counted by source), takes the writer's spare before it
// maps memory, hands emptied segments back, and under a concurrent producer and consumer
// produced == consumed + dropped exactly (run under TSan by the tsan preset).

#include "buffer_budget.h"
#include "thread_ring.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <vector>

using namespace tuneup::agent;

namespace {

constexpr size_t kPage = 4096;
constexpr size_t kPageCapacity = kPage - RingSegment::kRecordsOffset; // record space of a one-page segment

struct Drained {
    RecordHeader header;
    std::vector<std::byte> body;
};

std::vector<Drained> drainAll(ThreadRing& ring) {
    std::vector<Drained> out;
    ring.drain([&](const RecordHeader& header, const std::byte* body) {
        out.push_back({ header, std::vector<std::byte>(body, body + header.size - sizeof(RecordHeader)) });
    });
    return out;
}

std::string textOf(const Drained& record, size_t fixedBytes) {
    return std::string(reinterpret_cast<const char*>(record.body.data() + fixedBytes), record.header.textBytes);
}

// `fixedBytes` bytes of a recognisable pattern.
std::vector<std::byte> pattern(size_t bytes, int seed) {
    std::vector<std::byte> out(bytes);
    for (size_t i = 0; i < bytes; ++i)
        out[i] = std::byte(uint8_t(seed * 31 + int(i)));
    return out;
}

bool mark(
    ThreadRing& ring, uint64_t seq, size_t textBytes = 0, size_t reserve = 0, EventSource source = EventSource::Nvtx) {
    return ring.write(source, HostEventKind::NvtxMark, seq, &seq, sizeof seq, std::string(textBytes, 'm'), reserve);
}

// Sets BufferBudget's limit for one test; every ring of the test is gone before it ends.
class ThreadRingTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(BufferBudget::used(), 0u) << "a ring of an earlier test still holds memory";
        BufferBudget::setLimit(64 << 20);
    }
    void TearDown() override {
        EXPECT_EQ(BufferBudget::used(), 0u) << "a ring freed leaves nothing mapped";
        BufferBudget::setLimit(32 << 20);
    }
};

} // namespace

TEST_F(ThreadRingTest, NothingIsMappedBeforeTheFirstWriteThenTheFirstSegment) {
    ThreadRing ring(1234, 16 << 10, 1 << 20);
    EXPECT_EQ(ring.tid(), 1234);
    EXPECT_EQ(ring.segmentBytes(), size_t(1) << 20);
    EXPECT_EQ(BufferBudget::used(), 0u);
    ASSERT_TRUE(mark(ring, 1));
    EXPECT_EQ(BufferBudget::used(), size_t(16) << 10);
}

TEST_F(ThreadRingTest, RecordsOfManySizesRoundTrip) {
    ThreadRing ring(1, 64 << 10, 64 << 10);
    uint64_t written = 0;
    // Every size class of the copy (0, 1-3, 4-7, 8-15, 16-32, 33-64, more) and its edges.
    for (size_t fixedBytes : { 0, 8, 16, 24, 40, 48, 64, 72, 128 }) {
        for (size_t textBytes : { 0, 1, 2, 3, 4, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 1000, 4000 }) {
            const auto fixed = pattern(fixedBytes, int(fixedBytes + textBytes));
            const std::string text(textBytes, char('a' + textBytes % 26));
            const auto kind = HostEventKind((written % 12) + 1);
            const auto source = EventSource(written % 5);
            ASSERT_TRUE(ring.write(source, kind, 1000 + written, fixed.data(), fixedBytes, text));
            ++written;
            auto records = drainAll(ring);
            ASSERT_EQ(records.size(), 1u);
            const Drained& r = records[0];
            EXPECT_EQ(r.header.kind, kind);
            EXPECT_EQ(r.header.source, source);
            EXPECT_EQ(r.header.timeNs, 1000 + written - 1);
            EXPECT_EQ(r.header.textBytes, textBytes);
            EXPECT_EQ(r.header.size % 16, 0u);
            EXPECT_GE(r.header.size, sizeof(RecordHeader) + fixedBytes + textBytes);
            EXPECT_LT(r.header.size, sizeof(RecordHeader) + fixedBytes + textBytes + 16);
            EXPECT_TRUE(std::equal(fixed.begin(), fixed.end(), r.body.begin()));
            EXPECT_EQ(textOf(r, fixedBytes), text);
        }
    }
    EXPECT_EQ(ring.produced(), written);
    EXPECT_EQ(ring.dropped(), 0u);
}

TEST_F(ThreadRingTest, GrowsInsteadOfDroppingWhileTheBudgetLasts) {
    // 20000 records of 32 bytes (640 000 bytes) with nobody draining: the first 4 KiB segment, then
    // 64 KiB ones, and not one record dropped.
    ThreadRing ring(1, kPage, 64 << 10);
    for (uint64_t i = 0; i < 20000; ++i)
        ASSERT_TRUE(mark(ring, i)) << i;
    EXPECT_EQ(ring.dropped(), 0u);
    const size_t growth = (20000 * 32 - kPageCapacity + (64 << 10) - RingSegment::kRecordsOffset - 1)
        / ((64 << 10) - RingSegment::kRecordsOffset);
    EXPECT_EQ(BufferBudget::used(), kPage + growth * (64 << 10));

    size_t recycled = 0;
    uint64_t expected = 0;
    ring.drain(
        [&](const RecordHeader& header, const std::byte* body) {
            uint64_t seq;
            memcpy(&seq, body, sizeof seq);
            EXPECT_EQ(seq, expected);
            EXPECT_EQ(header.timeNs, expected);
            ++expected;
        },
        [&](RingSegment* segment) {
            ++recycled;
            RingSegment::free(segment);
        });
    EXPECT_EQ(expected, 20000u);
    EXPECT_EQ(recycled, growth) << "every full segment but the one being written";
    EXPECT_EQ(BufferBudget::used(), size_t(64) << 10) << "only the segment being written is left";
}

TEST_F(ThreadRingTest, DropsOnlyWhenTheBudgetIsSpentAndCountsBySource) {
    BufferBudget::setLimit(2 * kPage);
    ThreadRing ring(1, kPage, kPage);
    const size_t perSegment = kPageCapacity / 32;
    for (uint64_t i = 0; i < 2 * perSegment; ++i)
        ASSERT_TRUE(mark(ring, i)) << i;
    EXPECT_EQ(BufferBudget::used(), 2 * kPage);
    EXPECT_FALSE(mark(ring, 0, 0, 0, EventSource::Nvtx));
    EXPECT_FALSE(mark(ring, 0, 0, 0, EventSource::Gemm));
    EXPECT_FALSE(mark(ring, 0, 0, 0, EventSource::Gemm));
    ring.countDropped(EventSource::Python);
    EXPECT_EQ(ring.dropped(EventSource::Nvtx), 1u);
    EXPECT_EQ(ring.dropped(EventSource::Gemm), 2u);
    EXPECT_EQ(ring.dropped(EventSource::Python), 1u);
    EXPECT_EQ(ring.dropped(EventSource::Conv), 0u);
    EXPECT_EQ(ring.dropped(), 4u);
    EXPECT_EQ(ring.produced(), 2 * perSegment + 4);

    // Draining frees the full segment: the ring grows again.
    EXPECT_EQ(drainAll(ring).size(), 2 * perSegment);
    EXPECT_EQ(BufferBudget::used(), kPage);
    EXPECT_TRUE(mark(ring, 1));
    EXPECT_EQ(ring.produced(), ring.dropped() + 2 * perSegment + 1);
}

TEST_F(ThreadRingTest, ARecordLargerThanASegmentGetsASegmentOfItsOwn) {
    ThreadRing ring(1, kPage, kPage);
    ASSERT_TRUE(mark(ring, 1, 10));
    const std::string big(60000, 'b');
    ASSERT_TRUE(ring.write(EventSource::Nvtx, HostEventKind::NvtxMark, 2, nullptr, 0, big));
    ASSERT_TRUE(mark(ring, 3, 10)); // in what is left of the big segment's last page
    EXPECT_EQ(BufferBudget::used(), kPage + RingSegment::mappedSizeFor(60016));
    const auto records = drainAll(ring);
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(textOf(records[1], 0), big);
    EXPECT_EQ(records[2].header.timeNs, 3u);
    EXPECT_EQ(ring.dropped(), 0u);
}

TEST_F(ThreadRingTest, LongTextIsTruncatedAndCounted) {
    ThreadRing ring(1, 64 << 10, 64 << 10);
    const std::string text(70000, 'q');
    ASSERT_TRUE(ring.write(EventSource::Nvtx, HostEventKind::NvtxMark, 0, nullptr, 0, text));
    const auto records = drainAll(ring);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].header.textBytes, 65535);
    EXPECT_EQ(textOf(records[0], 0), text.substr(0, 65535));
    EXPECT_EQ(ring.truncated(), 1u);
    EXPECT_EQ(ring.dropped(), 0u);
}

TEST_F(ThreadRingTest, ReservedBytesStayFreeInTheSegmentBeingWritten) {
    // One segment is all the budget: what a writer reserved must fit without another.
    BufferBudget::setLimit(kPage);
    ThreadRing ring(1, kPage, kPage);
    // 120 records of 32 bytes: 3840 bytes, 192 left.
    for (uint64_t i = 0; i < 120; ++i)
        ASSERT_TRUE(mark(ring, i));
    // 32 bytes with 192 kept free would need 224: refused. With 160 kept free: accepted.
    EXPECT_FALSE(mark(ring, 0, 0, 192));
    EXPECT_TRUE(mark(ring, 0, 0, 160));
    // The kept 160 bytes take five more records reserving nothing, and not a sixth.
    for (int i = 0; i < 5; ++i)
        EXPECT_TRUE(mark(ring, 0));
    EXPECT_FALSE(mark(ring, 0));
    EXPECT_EQ(ring.dropped(), 2u);
    EXPECT_EQ(drainAll(ring).size(), 126u);
}

TEST_F(ThreadRingTest, ARingTakesItsSpareBeforeItMapsMemory) {
    ThreadRing ring(1, kPage, kPage);
    ASSERT_TRUE(mark(ring, 0));
    RingSegment* spare = RingSegment::allocate(kPageCapacity);
    ASSERT_NE(spare, nullptr);
    EXPECT_FALSE(ring.hasSpare());
    ring.offerSpare(spare);
    EXPECT_TRUE(ring.hasSpare());
    const size_t used = BufferBudget::used();
    for (uint64_t i = 1; i < kPageCapacity / 32 + 1; ++i)
        ASSERT_TRUE(mark(ring, i));
    EXPECT_FALSE(ring.hasSpare()) << "taken when the first segment was full";
    EXPECT_EQ(BufferBudget::used(), used) << "nothing more mapped";
    std::vector<RingSegment*> recycled;
    EXPECT_EQ(ring.drain([](const RecordHeader&, const std::byte*) {},
                  [&](RingSegment* segment) { recycled.push_back(segment); }),
        kPageCapacity / 32 + 1);
    ASSERT_EQ(recycled.size(), 1u);
    EXPECT_NE(recycled[0], spare) << "the first segment comes back; the spare is being written";
    // A spare given back before the producer takes it.
    recycled[0]->reset();
    ring.offerSpare(recycled[0]);
    EXPECT_EQ(ring.takeSpareBack(), recycled[0]);
    EXPECT_EQ(ring.takeSpareBack(), nullptr);
    RingSegment::free(recycled[0]);
}

TEST_F(ThreadRingTest, ASpareTooSmallForTheRecordIsLeftForLater) {
    ThreadRing ring(1, kPage, kPage);
    ring.offerSpare(RingSegment::allocate(kPageCapacity));
    ASSERT_TRUE(ring.write(EventSource::Nvtx, HostEventKind::NvtxMark, 0, nullptr, 0, std::string(10000, 'x')));
    EXPECT_TRUE(ring.hasSpare());
    EXPECT_EQ(drainAll(ring).size(), 1u);
}

TEST_F(ThreadRingTest, ADrainTakesWhatWasPublishedWhenItBegan) {
    // Records written while a drain runs (here by its own visitor, past the end of a segment) wait for
    // the next drain: a producer that never stops cannot keep the writer in one drain forever.
    ThreadRing ring(1, kPage, kPage);
    for (uint64_t i = 0; i < 200; ++i) // a segment and a half of 32-byte records
        ASSERT_TRUE(mark(ring, i));
    std::vector<uint64_t> seen;
    uint64_t next = 200;
    const auto visit = [&](const RecordHeader& header, const std::byte*) {
        seen.push_back(header.timeNs);
        if (next < 400) mark(ring, next++);
    };
    const auto free = [](RingSegment* segment) { RingSegment::free(segment); };
    EXPECT_EQ(ring.drain(visit, free), 200u);
    EXPECT_FALSE(ring.drainedAll());
    EXPECT_EQ(ring.drain(visit, free), 200u);
    EXPECT_TRUE(ring.drainedAll());
    ASSERT_EQ(seen.size(), 400u);
    for (uint64_t i = 0; i < 400; ++i)
        EXPECT_EQ(seen[i], i);
    EXPECT_EQ(BufferBudget::used(), kPage) << "only the segment being written";
}

TEST_F(ThreadRingTest, RetireIsVisible) {
    ThreadRing ring(1, kPage, kPage);
    EXPECT_FALSE(ring.retired());
    ring.retire();
    EXPECT_TRUE(ring.retired());
}

namespace {

// One producer writes `count` records of varying sizes (its sequence number, then text derived
// from it) while one consumer drains and, as the writer does, leaves emptied segments as spares;
// the consumer checks every record it sees.
void stress(size_t segmentBytes, size_t budgetBytes, uint64_t count, bool slowConsumer, bool mayDrop) {
    BufferBudget::setLimit(budgetBytes);
    ThreadRing ring(1, segmentBytes, segmentBytes);
    std::atomic<bool> done { false };
    uint64_t consumed = 0, lastSeq = 0, badRecords = 0;
    bool first = true;
    auto consume = [&] {
        return ring.drain(
            [&](const RecordHeader& header, const std::byte* body) {
                uint64_t seq;
                memcpy(&seq, body, sizeof seq);
                const std::string text(reinterpret_cast<const char*>(body + sizeof seq), header.textBytes);
                const bool good = header.kind == HostEventKind::NvtxMark && header.source == EventSource::Conv
                    && header.timeNs == seq && header.textBytes == seq % 301
                    && text == std::string(seq % 301, char('a' + seq % 26)) && (first || seq > lastSeq);
                badRecords += good ? 0 : 1;
                lastSeq = seq;
                first = false;
                ++consumed;
            },
            [&](RingSegment* segment) {
                if (!ring.hasSpare() && segment->mappedBytes == ring.segmentBytes()) {
                    segment->reset();
                    ring.offerSpare(segment);
                } else {
                    RingSegment::free(segment);
                }
            });
    };
    std::thread consumer([&] {
        while (!done.load(std::memory_order_acquire)) {
            consume();
            if (slowConsumer)
                std::this_thread::sleep_for(std::chrono::microseconds(50));
            else
                std::this_thread::yield();
        }
        consume();
    });
    uint64_t accepted = 0;
    std::string text;
    for (uint64_t seq = 0; seq < count; ++seq) {
        text.assign(seq % 301, char('a' + seq % 26));
        accepted += ring.write(EventSource::Conv, HostEventKind::NvtxMark, seq, &seq, sizeof seq, text) ? 1 : 0;
    }
    done.store(true, std::memory_order_release);
    consumer.join();

    EXPECT_EQ(badRecords, 0u);
    EXPECT_EQ(ring.produced(), count);
    EXPECT_EQ(consumed, accepted);
    EXPECT_EQ(ring.produced(), consumed + ring.dropped());
    EXPECT_EQ(ring.dropped(), ring.dropped(EventSource::Conv));
    EXPECT_LE(BufferBudget::used(), budgetBytes);
    if (!mayDrop) {
        EXPECT_EQ(ring.dropped(), 0u);
    }
}

} // namespace

TEST_F(ThreadRingTest, StressSmallSegmentsWithinABudgetTheyNeverFill) {
    // 300 000 records of at most 336 bytes: under 100 MB, the budget.
    stress(kPage, 128 << 20, 300000, false, false);
}

TEST_F(ThreadRingTest, StressSlowConsumerAndTinyBudgetDropsButAccountsExactly) {
    stress(16 << 10, 64 << 10, 300000, true, true);
}

TEST_F(ThreadRingTest, StressLargeSegments) {
    stress(1 << 20, 8 << 20, 300000, false, true);
}
