// RingRegistry: one ring per producing thread, made lazily within a memory budget. Many threads
// emitting while a writer drains account for every event; threads beyond the budget have their
// events counted as drops; rings of exited threads are freed and their memory reused.
// The registry is process-global: every test starts and ends with it drained, and emits only from
// threads it starts (the main thread never gets a ring here).

#include "ring_registry.h"

#include <atomic>
#include <cstring>
#include <gtest/gtest.h>
#include <latch>
#include <map>
#include <thread>
#include <vector>

using namespace tuneup::agent;

namespace {

struct Event {
    uint32_t thread;
    uint32_t seq;
};

// Drains until nothing is left, so retired rings are freed (a ring retired after a drain began
// is freed by the next one).
size_t drainEverything() {
    size_t total = 0;
    for (int i = 0; i < 3; ++i)
        total += RingRegistry::drainAll([](int, const RecordHeader&, const std::byte*) {});
    return total;
}

RingTotals delta(const RingTotals& before) {
    const RingTotals now = RingRegistry::totals();
    return { now.produced - before.produced, now.dropped - before.dropped, now.truncated - before.truncated };
}

bool emitEvent(uint32_t thread, uint32_t seq) {
    const Event event { thread, seq };
    return RingRegistry::emit(HostEventKind::NvtxMark, seq, &event, sizeof event, "registry-test");
}

class RingRegistryTest : public ::testing::Test {
protected:
    void SetUp() override { drainEverything(); }
    void TearDown() override {
        drainEverything();
        RingRegistry::setFirstRingHook(nullptr);
        RingRegistry::configure(1 << 20, 32 << 20);
    }
};

// Runs `threads` threads that each call emitEvent `perThread` times, all alive at once while they
// emit; returns for each thread how many events its ring accepted.
std::vector<uint32_t> runThreads(uint32_t threads, uint32_t perThread) {
    std::vector<uint32_t> accepted(threads, 0);
    std::latch firstEmitted(threads), mayExit(1);
    std::vector<std::thread> pool;
    for (uint32_t t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            accepted[t] += emitEvent(t, 0) ? 1 : 0; // takes (or is refused) a ring
            firstEmitted.count_down();
            mayExit.wait();
            for (uint32_t i = 1; i < perThread; ++i)
                accepted[t] += emitEvent(t, i) ? 1 : 0;
        });
    firstEmitted.wait();
    mayExit.count_down();
    for (auto& thread : pool)
        thread.join();
    return accepted;
}

} // namespace

TEST_F(RingRegistryTest, ManyThreadsWithAConcurrentWriterAccountForEveryEvent) {
    RingRegistry::configure(16 << 10, 64 << 20);
    const RingTotals before = RingRegistry::totals();
    constexpr uint32_t kThreads = 16, kPerThread = 20000;
    std::atomic<bool> producing { true };
    std::map<int, std::vector<Event>> seen; // tid -> events in drain order
    uint64_t drained = 0;
    auto visit = [&](int tid, const RecordHeader& header, const std::byte* body) {
        Event event;
        memcpy(&event, body, sizeof event);
        EXPECT_EQ(header.kind, HostEventKind::NvtxMark);
        EXPECT_EQ(
            std::string_view(reinterpret_cast<const char*>(body + sizeof event), header.textBytes), "registry-test");
        seen[tid].push_back(event);
        ++drained;
    };
    std::thread writer([&] {
        while (producing.load())
            RingRegistry::drainAll(visit);
        for (int i = 0; i < 3; ++i)
            RingRegistry::drainAll(visit);
    });
    std::vector<std::thread> pool;
    std::latch allEmitted(kThreads); // all alive until the end: no thread id is reused
    for (uint32_t t = 0; t < kThreads; ++t)
        pool.emplace_back([t, &allEmitted] {
            for (uint32_t i = 0; i < kPerThread; ++i)
                emitEvent(t, i);
            allEmitted.arrive_and_wait();
        });
    for (auto& thread : pool)
        thread.join();
    producing.store(false);
    writer.join();

    const RingTotals counted = delta(before);
    EXPECT_EQ(counted.produced, uint64_t(kThreads) * kPerThread);
    EXPECT_EQ(drained + counted.dropped, counted.produced);
    EXPECT_EQ(seen.size(), size_t(kThreads)) << "one ring per thread";
    for (auto& [tid, events] : seen) {
        ASSERT_FALSE(events.empty());
        const uint32_t thread = events[0].thread;
        for (size_t i = 0; i < events.size(); ++i) {
            ASSERT_EQ(events[i].thread, thread) << "tid " << tid << " carries another thread's events";
            if (i > 0) {
                ASSERT_GT(events[i].seq, events[i - 1].seq) << "events of one thread out of order";
            }
        }
    }
}

TEST_F(RingRegistryTest, ThreadsBeyondTheBudgetHaveTheirEventsCountedAsDropped) {
    RingRegistry::configure(4096, 4 * 4096);
    const RingTotals before = RingRegistry::totals();
    const auto accepted = runThreads(6, 10);
    int withRing = 0, without = 0;
    for (uint32_t count : accepted) {
        EXPECT_TRUE(count == 10 || count == 0) << count;
        (count == 10 ? withRing : without)++;
    }
    EXPECT_EQ(withRing, 4);
    EXPECT_EQ(without, 2);
    const RingTotals counted = delta(before);
    EXPECT_EQ(counted.produced, 60u);
    EXPECT_EQ(counted.dropped, 20u);
    EXPECT_EQ(drainEverything(), 40u);
}

TEST_F(RingRegistryTest, RetiredRingsAreFreedAndTheirBudgetReused) {
    RingRegistry::configure(4096, 4 * 4096);
    for (int round = 0; round < 5; ++round) {
        // Each round's threads exit; once drained, their rings' memory is free for the next round.
        const RingTotals before = RingRegistry::totals();
        const auto accepted = runThreads(4, 10);
        for (uint32_t count : accepted)
            EXPECT_EQ(count, 10u) << "round " << round;
        EXPECT_EQ(delta(before).dropped, 0u);
        EXPECT_EQ(drainEverything(), 40u);
    }
}

TEST_F(RingRegistryTest, TheBudgetCountsTheRingsRealSize) {
    // Rings are rounded up to a power of two: 5000 bytes make 8192-byte rings, so a budget of
    // three rings' worth gives three rings, however the ring size was asked for.
    RingRegistry::configure(5000, 3 * 8192);
    for (int round = 0; round < 3; ++round) {
        const auto accepted = runThreads(4, 2);
        int withRing = 0;
        for (uint32_t count : accepted)
            withRing += count == 2 ? 1 : 0;
        EXPECT_EQ(withRing, 3) << "round " << round;
        drainEverything();
    }
}

TEST_F(RingRegistryTest, TotalsSurviveTheirRingsBeingFreed) {
    RingRegistry::configure(4096, 1 << 20);
    const RingTotals before = RingRegistry::totals();
    // 300 16-byte-aligned records of 48 bytes cannot fit a 4 KiB ring with nobody draining.
    runThreads(3, 300);
    const RingTotals whileAlive = delta(before);
    drainEverything();
    const RingTotals afterFree = delta(before);
    EXPECT_EQ(whileAlive.produced, 900u);
    EXPECT_GT(whileAlive.dropped, 0u);
    EXPECT_EQ(afterFree.produced, whileAlive.produced);
    EXPECT_EQ(afterFree.dropped, whileAlive.dropped);
}

TEST_F(RingRegistryTest, CountDroppedCountsOnTheCallingThread) {
    RingRegistry::configure(4096, 1 << 20);
    const RingTotals before = RingRegistry::totals();
    std::thread([] {
        RingRegistry::countDropped(); // before any ring: counted as a thread without a ring
        emitEvent(0, 0);
        RingRegistry::countDropped();
    }).join();
    const RingTotals counted = delta(before);
    EXPECT_EQ(counted.produced, 3u);
    EXPECT_EQ(counted.dropped, 2u);
    EXPECT_EQ(drainEverything(), 1u);
}

namespace {
std::atomic<int> s_hookCalls { 0 };
void countHook() {
    s_hookCalls.fetch_add(1);
}
} // namespace

TEST_F(RingRegistryTest, FirstRingHookRunsOnceForEachNewThread) {
    RingRegistry::configure(4096, 1 << 20);
    s_hookCalls = 0;
    RingRegistry::setFirstRingHook(countHook);
    runThreads(3, 5);
    EXPECT_EQ(s_hookCalls.load(), 3);
    // Threads refused a ring run it too: the file must still say what they dropped.
    RingRegistry::configure(4096, 0);
    runThreads(2, 5);
    EXPECT_EQ(s_hookCalls.load(), 5);
}
