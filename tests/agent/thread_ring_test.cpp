// ThreadRing: the lock-free per-thread event buffer. Records of every size survive the trip,
// records never wrap (padding fills the end), a full ring drops and counts, and under a concurrent
// producer and consumer produced == consumed + dropped exactly (run under TSan by the tsan preset).

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

} // namespace

TEST(ThreadRing, CapacityIsAPowerOfTwoOfAtLeastOnePage) {
    EXPECT_EQ(ThreadRing(1, 0).capacity(), 4096u);
    EXPECT_EQ(ThreadRing(4096, 0).capacity(), 4096u);
    EXPECT_EQ(ThreadRing(5000, 0).capacity(), 8192u);
    EXPECT_EQ(ThreadRing(1 << 20, 0).capacity(), size_t(1) << 20);
    EXPECT_EQ(ThreadRing(4096, 1234).tid(), 1234);
}

TEST(ThreadRing, RecordsOfManySizesRoundTrip) {
    ThreadRing ring(64 << 10, 1);
    uint64_t written = 0;
    for (size_t fixedBytes : { 0, 8, 16, 24, 48, 72 }) {
        for (size_t textBytes : { 0, 1, 7, 15, 16, 17, 100, 1000, 4000 }) {
            const auto fixed = pattern(fixedBytes, int(fixedBytes + textBytes));
            const std::string text(textBytes, char('a' + textBytes % 26));
            const auto kind = HostEventKind((written % 9) + 1);
            ASSERT_TRUE(ring.write(kind, 1000 + written, fixed.data(), fixedBytes, text));
            ++written;
            auto records = drainAll(ring);
            ASSERT_EQ(records.size(), 1u);
            const Drained& r = records[0];
            EXPECT_EQ(r.header.kind, kind);
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

TEST(ThreadRing, ManyRecordsDrainInOrder) {
    ThreadRing ring(64 << 10, 1);
    for (uint64_t i = 0; i < 500; ++i)
        ASSERT_TRUE(ring.write(HostEventKind::NvtxMark, i, &i, sizeof i, std::string(i % 50, 'x')));
    const auto records = drainAll(ring);
    ASSERT_EQ(records.size(), 500u);
    for (uint64_t i = 0; i < 500; ++i) {
        uint64_t seq;
        memcpy(&seq, records[i].body.data(), sizeof seq);
        EXPECT_EQ(seq, i);
        EXPECT_EQ(records[i].header.timeNs, i);
        EXPECT_EQ(textOf(records[i], sizeof seq), std::string(i % 50, 'x'));
    }
}

TEST(ThreadRing, ARecordThatDoesNotFitBeforeTheEndStartsAtZeroAfterPadding) {
    ThreadRing ring(4096, 1);
    // 50 records of 80 bytes: 4000 bytes, 96 left before the end.
    const auto fixed = pattern(48, 1);
    for (int i = 0; i < 50; ++i)
        ASSERT_TRUE(ring.write(HostEventKind::NvtxMark, uint64_t(i), fixed.data(), 48, std::string(16, 'a')));
    EXPECT_EQ(drainAll(ring).size(), 50u);

    // 112 bytes do not fit in the last 96: padding to the end, then the record at offset 0.
    const std::string text(48, 'w');
    ASSERT_TRUE(ring.write(HostEventKind::NvtxPush, 77, fixed.data(), 48, text));
    auto records = drainAll(ring);
    ASSERT_EQ(records.size(), 1u) << "the padding record must not be visited";
    EXPECT_EQ(records[0].header.kind, HostEventKind::NvtxPush);
    EXPECT_EQ(records[0].header.size, 112u);
    EXPECT_EQ(textOf(records[0], 48), text);

    EXPECT_EQ(ring.produced(), 51u);
    EXPECT_EQ(ring.dropped(), 0u);
}

TEST(ThreadRing, PaddingCountsAgainstTheSpaceLeft) {
    ThreadRing ring(4096, 1);
    const auto fixed = pattern(48, 2);
    // 63 records of 64 bytes leave 64 bytes, all at the end of the ring.
    for (int i = 0; i < 63; ++i)
        ASSERT_TRUE(ring.write(HostEventKind::NvtxMark, 0, fixed.data(), 48, {}));
    // A 96-byte record needs 64 bytes of padding plus 96: only 64 are free.
    EXPECT_FALSE(ring.write(HostEventKind::NvtxMark, 0, fixed.data(), 48, std::string(32, 'x')));
    // A 64-byte record fits exactly.
    EXPECT_TRUE(ring.write(HostEventKind::NvtxMark, 0, fixed.data(), 48, {}));
    EXPECT_FALSE(ring.write(HostEventKind::NvtxMark, 0, fixed.data(), 48, {}));
    EXPECT_EQ(drainAll(ring).size(), 64u);
    EXPECT_EQ(ring.produced(), 66u);
    EXPECT_EQ(ring.dropped(), 2u);
}

TEST(ThreadRing, FullRingDropsAndCountsThenRecovers) {
    ThreadRing ring(4096, 1);
    int accepted = 0;
    for (int i = 0; i < 300; ++i)
        accepted += ring.write(HostEventKind::NvtxPop, 0, nullptr, 0, {}) ? 1 : 0; // 16-byte records
    EXPECT_EQ(accepted, 4096 / 16);
    EXPECT_EQ(ring.produced(), 300u);
    EXPECT_EQ(ring.dropped(), 300u - 256);
    EXPECT_EQ(drainAll(ring).size(), 256u);
    EXPECT_TRUE(ring.write(HostEventKind::NvtxPop, 0, nullptr, 0, {}));
    EXPECT_EQ(ring.produced(), 301u);
    EXPECT_EQ(ring.dropped(), 300u - 256);
}

TEST(ThreadRing, RecordLargerThanTheRingIsDropped) {
    ThreadRing ring(4096, 1);
    EXPECT_FALSE(ring.write(HostEventKind::NvtxMark, 0, nullptr, 0, std::string(5000, 'x')));
    EXPECT_EQ(ring.dropped(), 1u);
    EXPECT_TRUE(drainAll(ring).empty());
    EXPECT_TRUE(ring.write(HostEventKind::NvtxMark, 0, nullptr, 0, "small"));
    EXPECT_EQ(drainAll(ring).size(), 1u);
}

TEST(ThreadRing, LongTextIsTruncatedAndCounted) {
    ThreadRing ring(256 << 10, 1);
    const std::string text(70000, 'q');
    ASSERT_TRUE(ring.write(HostEventKind::NvtxMark, 0, nullptr, 0, text));
    const auto records = drainAll(ring);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].header.textBytes, 65535);
    EXPECT_EQ(textOf(records[0], 0), text.substr(0, 65535));
    EXPECT_EQ(ring.truncated(), 1u);
    EXPECT_EQ(ring.dropped(), 0u);
}

TEST(ThreadRing, ReservedBytesStayFree) {
    ThreadRing ring(4096, 1);
    const auto fixed = pattern(48, 3);
    // 62 records of 64 bytes: 128 bytes free.
    for (int i = 0; i < 62; ++i)
        ASSERT_TRUE(ring.write(HostEventKind::NvtxMark, 0, fixed.data(), 48, {}));
    // 64 bytes with 96 kept free would leave only 64: refused. With 64 kept free: accepted.
    EXPECT_FALSE(ring.write(HostEventKind::NvtxMark, 0, fixed.data(), 48, {}, 96));
    EXPECT_TRUE(ring.write(HostEventKind::NvtxMark, 0, fixed.data(), 48, {}, 64));
    // The last 64 bytes, with nothing kept: accepted.
    EXPECT_TRUE(ring.write(HostEventKind::NvtxMark, 0, fixed.data(), 48, {}, 0));
    EXPECT_EQ(ring.dropped(), 1u);
    EXPECT_EQ(drainAll(ring).size(), 64u);
}

TEST(ThreadRing, CountDroppedCountsProducedAndDropped) {
    ThreadRing ring(4096, 1);
    ring.countDropped();
    ring.countDropped();
    EXPECT_EQ(ring.produced(), 2u);
    EXPECT_EQ(ring.dropped(), 2u);
    EXPECT_TRUE(drainAll(ring).empty());
}

TEST(ThreadRing, RetireIsVisible) {
    ThreadRing ring(4096, 1);
    EXPECT_FALSE(ring.retired());
    ring.retire();
    EXPECT_TRUE(ring.retired());
}

namespace {

// One producer writes `count` records of varying sizes (its sequence number, then text derived
// from it) while one consumer drains; the consumer checks every record it sees.
void stress(size_t ringBytes, uint64_t count, bool slowConsumer) {
    ThreadRing ring(ringBytes, 1);
    std::atomic<bool> done { false };
    uint64_t consumed = 0, lastSeq = 0, badRecords = 0, paddingSeen = 0;
    bool first = true;
    auto consume = [&] {
        return ring.drain([&](const RecordHeader& header, const std::byte* body) {
            uint64_t seq;
            memcpy(&seq, body, sizeof seq);
            const std::string text(reinterpret_cast<const char*>(body + sizeof seq), header.textBytes);
            const bool good = header.kind == HostEventKind::NvtxMark && header.timeNs == seq
                && header.textBytes == seq % 301 && text == std::string(seq % 301, char('a' + seq % 26))
                && (first || seq > lastSeq);
            badRecords += good ? 0 : 1;
            paddingSeen += header.kind == HostEventKind::Padding ? 1 : 0;
            lastSeq = seq;
            first = false;
            ++consumed;
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
        accepted += ring.write(HostEventKind::NvtxMark, seq, &seq, sizeof seq, text) ? 1 : 0;
    }
    done.store(true, std::memory_order_release);
    consumer.join();

    EXPECT_EQ(badRecords, 0u);
    EXPECT_EQ(paddingSeen, 0u);
    EXPECT_EQ(ring.produced(), count);
    EXPECT_EQ(consumed, accepted);
    EXPECT_EQ(ring.produced(), consumed + ring.dropped());
}

} // namespace

TEST(ThreadRingStress, SmallRingConcurrentProducerAndConsumerAccountExactly) {
    stress(4096, 300000, false);
}

TEST(ThreadRingStress, SlowConsumerDropsButAccountsExactly) {
    stress(16 << 10, 300000, true);
}

TEST(ThreadRingStress, LargeRingConcurrentProducerAndConsumer) {
    stress(1 << 20, 300000, false);
}
