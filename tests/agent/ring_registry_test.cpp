// RingRegistry: one ring per producing thread, made lazily, growing from one shared budget. Many
// threads emitting while a writer drains account for every event and drop none under the budget;
// once it is spent, drops are counted per thread and source; rings of exited threads are freed and
// their memory reused; a busy thread lives on the writer's recycled segments instead of mapping new
// ones. Also BufferBudget under concurrent reservations.
// The registry is process-global: every test starts and ends with it drained, and emits only from
// threads it starts (the main thread never gets a ring here).

#include "buffer_budget.h"
#include "ring_registry.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <gtest/gtest.h>
#include <latch>
#include <map>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tuneup::agent;

namespace {

struct Event {
    uint32_t thread;
    uint32_t seq;
};
// 16 header + 8 + 13 of text: 48 bytes a record.
constexpr size_t kRecordBytes = 48;
constexpr size_t kPage = 4096;

// Drains until nothing is left, so retired rings are freed (a ring retired after a drain began
// is freed by the next one), then gives back the memory kept for reuse.
size_t drainEverything() {
    size_t total = 0;
    for (size_t n = 1; n > 0;) {
        n = RingRegistry::drainAll([](int, const RecordHeader&, const std::byte*) {});
        total += n;
    }
    total += RingRegistry::drainAll([](int, const RecordHeader&, const std::byte*) {});
    RingRegistry::releaseSpareSegments();
    return total;
}

RingTotals delta(const RingTotals& before) {
    const RingTotals now = RingRegistry::totals();
    return { now.produced - before.produced, now.dropped - before.dropped, now.truncated - before.truncated };
}

bool emitEvent(uint32_t thread, uint32_t seq, EventSource source = EventSource::Nvtx) {
    const Event event { thread, seq };
    return RingRegistry::emit(source, HostEventKind::NvtxMark, seq, &event, sizeof event, "registry-test");
}

// The registry's drops of the threads `tids`, by tid.
std::map<int, ThreadDrops> dropsOf(const std::vector<int>& tids) {
    std::map<int, ThreadDrops> out;
    for (const ThreadDrops& drops : RingRegistry::drops())
        if (std::find(tids.begin(), tids.end(), drops.tid) != tids.end()) out[drops.tid] = drops;
    return out;
}

class RingRegistryTest : public ::testing::Test {
protected:
    void SetUp() override {
        drainEverything();
        ASSERT_EQ(BufferBudget::used(), 0u) << "rings of an earlier test still hold memory";
    }
    void TearDown() override {
        drainEverything();
        EXPECT_EQ(BufferBudget::used(), 0u) << "every segment given back once the threads are gone";
        RingRegistry::setFirstRingHook(nullptr);
        RingRegistry::configure(1 << 20, 32 << 20);
    }
};

// Runs `threads` threads that each call emitEvent `perThread` times, all alive at once while they
// emit; returns for each thread how many events its ring accepted, and its tid.
struct ThreadsRun {
    std::vector<uint32_t> accepted;
    std::vector<int> tids;
};
ThreadsRun runThreads(uint32_t threads, uint32_t perThread) {
    ThreadsRun run { std::vector<uint32_t>(threads, 0), std::vector<int>(threads, 0) };
    std::latch firstEmitted(threads), mayGoOn(1);
    std::vector<std::thread> pool;
    for (uint32_t t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            run.tids[t] = int(gettid());
            run.accepted[t] += emitEvent(t, 0) ? 1 : 0; // takes (or is refused) its first segment
            firstEmitted.count_down();
            mayGoOn.wait();
            for (uint32_t i = 1; i < perThread; ++i)
                run.accepted[t] += emitEvent(t, i) ? 1 : 0;
        });
    firstEmitted.wait();
    mayGoOn.count_down();
    for (auto& thread : pool)
        thread.join();
    return run;
}

} // namespace

TEST_F(RingRegistryTest, ManyThreadsWithAConcurrentWriterAccountForEveryEventAndDropNone) {
    // 16 threads x 20000 records of 48 bytes: 15 MB in 16 KiB segments, well within the budget
    // however far behind the writer is.
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
        EXPECT_EQ(header.source, EventSource::Nvtx);
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
    EXPECT_EQ(counted.dropped, 0u);
    EXPECT_EQ(drained, counted.produced);
    EXPECT_EQ(seen.size(), size_t(kThreads)) << "one ring per thread";
    for (auto& [tid, events] : seen) {
        ASSERT_EQ(events.size(), kPerThread);
        const uint32_t thread = events[0].thread;
        for (size_t i = 0; i < events.size(); ++i) {
            ASSERT_EQ(events[i].thread, thread) << "tid " << tid << " carries another thread's events";
            ASSERT_EQ(events[i].seq, i) << "events of one thread out of order";
        }
    }
}

TEST_F(RingRegistryTest, AThreadGrowsWithoutDroppingWhileTheWriterIsAway) {
    RingRegistry::configure(16 << 10, 8 << 20);
    const RingTotals before = RingRegistry::totals();
    const auto run = runThreads(1, 100000); // 4.8 MB, nothing drained meanwhile
    EXPECT_EQ(run.accepted[0], 100000u);
    EXPECT_EQ(delta(before).dropped, 0u);
    EXPECT_EQ(drainEverything(), 100000u);
}

TEST_F(RingRegistryTest, ALongBacklogGivesItsMemoryBackWhileTheWriterWorksThroughIt) {
    // 200 000 records (9.6 MB in 64 KiB segments) waiting: each segment the pass has emptied is
    // unmapped at once (but for a few kept for reuse), not at the end of the pass, so the threads can
    // grow again while the writer is still busy.
    RingRegistry::configure(64 << 10, 64 << 20);
    const auto run = runThreads(1, 200000);
    ASSERT_EQ(run.accepted[0], 200000u);
    const size_t held = BufferBudget::used();
    size_t visited = 0, heldHalfWay = 0;
    EXPECT_EQ(RingRegistry::drainAll([&](int, const RecordHeader&, const std::byte*) {
        if (++visited == 100000) heldHalfWay = BufferBudget::used();
    }),
        200000u);
    EXPECT_LT(heldHalfWay, held - 100000 * kRecordBytes + (4 + 2) * (64 << 10));
    EXPECT_EQ(drainEverything(), 0u);
}

TEST_F(RingRegistryTest, OnceTheBudgetIsSpentDropsAreCountedPerThreadAndSource) {
    // Four one-page first segments are the whole budget: four threads get one, two get none.
    RingRegistry::configure(kPage, 4 * kPage);
    const RingTotals before = RingRegistry::totals();
    const auto run = runThreads(6, 10);
    std::vector<int> refused;
    for (size_t t = 0; t < run.accepted.size(); ++t) {
        EXPECT_TRUE(run.accepted[t] == 10 || run.accepted[t] == 0) << run.accepted[t];
        if (run.accepted[t] == 0) refused.push_back(run.tids[t]);
    }
    ASSERT_EQ(refused.size(), 2u);
    const RingTotals counted = delta(before);
    EXPECT_EQ(counted.produced, 60u);
    EXPECT_EQ(counted.dropped, 20u);
    const auto drops = dropsOf(run.tids);
    ASSERT_EQ(drops.size(), 2u) << "only the threads that dropped";
    for (int tid : refused) {
        ASSERT_TRUE(drops.count(tid)) << tid;
        for (size_t s = 0; s < kEventSourceCount; ++s)
            EXPECT_EQ(drops.at(tid).dropped[s], EventSource(s) == EventSource::Nvtx ? 10u : 0u) << s;
    }
    EXPECT_EQ(drainEverything(), 40u);
    EXPECT_EQ(dropsOf(run.tids).size(), 2u) << "kept after the rings are freed";
}

TEST_F(RingRegistryTest, DropsOfOneThreadAreCountedBySource) {
    RingRegistry::configure(kPage, 0); // nothing can be mapped
    int tid = 0;
    std::thread([&] {
        tid = int(gettid());
        emitEvent(0, 0, EventSource::Gemm);
        emitEvent(0, 1, EventSource::Gemm);
        emitEvent(0, 2, EventSource::Conv);
        emitEvent(0, 3, EventSource::Torch);
        RingRegistry::countDropped(EventSource::Python);
    }).join();
    const auto drops = dropsOf({ tid });
    ASSERT_EQ(drops.size(), 1u);
    const ThreadDrops& d = drops.at(tid);
    EXPECT_EQ(d.dropped[size_t(EventSource::Gemm)], 2u);
    EXPECT_EQ(d.dropped[size_t(EventSource::Conv)], 1u);
    EXPECT_EQ(d.dropped[size_t(EventSource::Torch)], 1u);
    EXPECT_EQ(d.dropped[size_t(EventSource::Python)], 1u);
    EXPECT_EQ(d.dropped[size_t(EventSource::Nvtx)], 0u);
}

TEST_F(RingRegistryTest, RetiredRingsAreFreedAndTheirBudgetReused) {
    RingRegistry::configure(kPage, 4 * kPage);
    for (int round = 0; round < 5; ++round) {
        // Each round's threads exit; once drained, their memory is free for the next round.
        const RingTotals before = RingRegistry::totals();
        const auto run = runThreads(4, 10);
        for (uint32_t count : run.accepted)
            EXPECT_EQ(count, 10u) << "round " << round;
        EXPECT_EQ(delta(before).dropped, 0u);
        EXPECT_EQ(drainEverything(), 40u);
    }
}

TEST_F(RingRegistryTest, TotalsSurviveTheirRingsBeingFreed) {
    // Three pages for three threads of 300 records each, nobody draining: whichever thread holds
    // them, three full pages of 84 records are kept and the rest dropped.
    RingRegistry::configure(kPage, 3 * kPage);
    const RingTotals before = RingRegistry::totals();
    runThreads(3, 300);
    const RingTotals whileAlive = delta(before);
    EXPECT_EQ(drainEverything(), 3 * ((kPage - RingSegment::kRecordsOffset) / kRecordBytes));
    const RingTotals afterFree = delta(before);
    EXPECT_EQ(whileAlive.produced, 900u);
    EXPECT_EQ(whileAlive.dropped, 900u - 3 * 84);
    EXPECT_EQ(afterFree.produced, whileAlive.produced);
    EXPECT_EQ(afterFree.dropped, whileAlive.dropped);
}

TEST_F(RingRegistryTest, ABusyThreadLivesOnRecycledSegments) {
    // Bursts smaller than a segment, drained between them: once the writer has left the thread a
    // spare, every segment it fills comes back to it, and nothing new is mapped.
    RingRegistry::configure(16 << 10, 64 << 20);
    std::atomic<int> burstsDone { 0 }, burstsAllowed { 0 };
    std::atomic<uint64_t> accepted { 0 };
    constexpr int kBursts = 200, kPerBurst = 300; // 14 400 bytes a burst
    std::thread producer([&] {
        for (int b = 0; b < kBursts; ++b) {
            while (burstsAllowed.load() <= b)
                std::this_thread::yield();
            for (int i = 0; i < kPerBurst; ++i)
                accepted += emitEvent(0, uint32_t(b * kPerBurst + i)) ? 1 : 0;
            burstsDone.store(b + 1);
        }
    });
    uint64_t drained = 0, mappedAfterWarmUp = 0;
    for (int b = 0; b < kBursts; ++b) {
        burstsAllowed.store(b + 1);
        while (burstsDone.load() <= b)
            std::this_thread::yield();
        drained += RingRegistry::drainAll([](int, const RecordHeader&, const std::byte*) {});
        if (b == 9) mappedAfterWarmUp = RingSegment::mappedCount();
    }
    producer.join();
    EXPECT_EQ(RingSegment::mappedCount(), mappedAfterWarmUp) << "segments mapped after the first ten bursts";
    EXPECT_EQ(accepted.load(), uint64_t(kBursts) * kPerBurst);
    EXPECT_EQ(drained + drainEverything(), uint64_t(kBursts) * kPerBurst);
}

TEST_F(RingRegistryTest, CountDroppedCountsOnTheCallingThread) {
    RingRegistry::configure(kPage, 1 << 20);
    const RingTotals before = RingRegistry::totals();
    std::thread([] {
        RingRegistry::countDropped(EventSource::Nvtx); // before any ring: counted as a thread without one
        emitEvent(0, 0);
        RingRegistry::countDropped(EventSource::Nvtx);
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
    RingRegistry::configure(kPage, 1 << 20);
    s_hookCalls = 0;
    RingRegistry::setFirstRingHook(countHook);
    runThreads(3, 5);
    EXPECT_EQ(s_hookCalls.load(), 3);
    // Threads that get no memory run it too: the file must still say what they dropped.
    RingRegistry::configure(kPage, 0);
    runThreads(2, 5);
    EXPECT_EQ(s_hookCalls.load(), 5);
}

TEST(BufferBudget, ConcurrentReservationsNeverPassTheLimit) {
    const size_t limit = BufferBudget::limit();
    const size_t base = BufferBudget::used();
    BufferBudget::setLimit(base + 10 * kPage);
    std::atomic<uint64_t> overLimit { 0 }, granted { 0 };
    std::vector<std::thread> threads;
    for (int t = 0; t < 8; ++t)
        threads.emplace_back([&] {
            for (int i = 0; i < 20000; ++i) {
                if (!BufferBudget::tryReserve(kPage)) continue;
                ++granted;
                if (BufferBudget::used() > base + 10 * kPage) ++overLimit;
                BufferBudget::release(kPage);
            }
        });
    for (auto& thread : threads)
        thread.join();
    EXPECT_EQ(overLimit.load(), 0u);
    EXPECT_GT(granted.load(), 0u);
    EXPECT_EQ(BufferBudget::used(), base);
    // Exactly up to the limit, then refused.
    for (int i = 0; i < 10; ++i)
        EXPECT_TRUE(BufferBudget::tryReserve(kPage)) << i;
    EXPECT_FALSE(BufferBudget::tryReserve(kPage));
    EXPECT_FALSE(BufferBudget::tryReserve(size_t(-1)));
    BufferBudget::release(10 * kPage);
    BufferBudget::setLimit(limit);
}
