// CUPTI's buffer pool and the agent's buffer budget: every buffer the pool holds is reserved from the
// budget the threads' event buffers share, requests beyond CUPTI's share or the budget are refused (and
// counted), emptied buffers come back zeroed and what the pool does not keep goes back to the budget;
// and all of it while CUPTI's threads request and complete buffers as the writer recycles them.

#include "buffer_budget.h"
#include "cupti_buffer_pool.h"

#include <algorithm>
#include <atomic>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

namespace tuneup::agent {
namespace {

constexpr size_t kBuffer = CuptiBufferPool::kBufferBytes;

class CuptiBufferPoolTest : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(BufferBudget::used(), 0u) << "another test left budget reserved";
        m_limit = BufferBudget::limit();
        BufferBudget::setLimit(8 * kBuffer);
    }
    void TearDown() override { BufferBudget::setLimit(m_limit); }

    // Hands every buffer back and recycles them: what the pool keeps stays reserved.
    static void giveBack(CuptiBufferPool& pool, const std::vector<uint8_t*>& buffers) {
        for (uint8_t* b : buffers)
            pool.complete(b, 0);
        pool.recycle(pool.takeCompleted());
    }

    size_t m_limit = 0;
};

TEST_F(CuptiBufferPoolTest, BuffersAreReservedFromTheSharedBudget) {
    CuptiBufferPool pool;
    pool.setMaxBuffers(8);
    std::vector<uint8_t*> lent { pool.request(), pool.request(), pool.request() };
    ASSERT_TRUE(std::all_of(lent.begin(), lent.end(), [](uint8_t* b) { return b != nullptr; }));
    EXPECT_EQ(BufferBudget::used(), 3 * kBuffer);
    // The threads' event buffers take most of what is left: CUPTI gets one more, then none.
    ASSERT_TRUE(BufferBudget::tryReserve(3 * kBuffer + kBuffer / 2));
    lent.push_back(pool.request());
    ASSERT_NE(lent.back(), nullptr);
    EXPECT_EQ(pool.request(), nullptr);
    CuptiBufferPool::Stats stats = pool.stats();
    EXPECT_EQ(stats.refused, 1u);
    EXPECT_EQ(stats.refusedOverBudget, 1u);
    EXPECT_EQ(stats.heldBytes, 4 * kBuffer);
    EXPECT_EQ(stats.peakBytes, 4 * kBuffer);
    EXPECT_LE(BufferBudget::used(), BufferBudget::limit());
    // Once the threads give theirs back, CUPTI is served again.
    BufferBudget::release(3 * kBuffer + kBuffer / 2);
    uint8_t* again = pool.request();
    EXPECT_NE(again, nullptr);
    lent.push_back(again);
    // Emptied: four kept for reuse (still reserved), the fifth freed back to the budget.
    giveBack(pool, lent);
    EXPECT_EQ(BufferBudget::used(), CuptiBufferPool::kSpareBuffers * kBuffer);
    EXPECT_EQ(pool.stats().heldBytes, CuptiBufferPool::kSpareBuffers * kBuffer);
    EXPECT_EQ(pool.stats().peakBytes, 5 * kBuffer);
}

TEST_F(CuptiBufferPoolTest, CuptisShareCapsItWhileTheBudgetHasRoom) {
    CuptiBufferPool pool;
    pool.setMaxBuffers(2);
    uint8_t* a = pool.request();
    uint8_t* b = pool.request();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(pool.request(), nullptr);
    EXPECT_EQ(pool.stats().refused, 1u);
    EXPECT_EQ(pool.stats().refusedOverBudget, 0u) << "refused for CUPTI's share, not the budget";
    EXPECT_EQ(BufferBudget::used(), 2 * kBuffer);
    giveBack(pool, { a, b });
}

TEST_F(CuptiBufferPoolTest, RecycledBuffersComeBackZeroed) {
    CuptiBufferPool pool;
    pool.setMaxBuffers(1);
    uint8_t* buffer = pool.request();
    ASSERT_NE(buffer, nullptr);
    std::fill(buffer, buffer + kBuffer, uint8_t(0xab));
    pool.complete(buffer, kBuffer);
    const CuptiBufferPool::Completed completed = pool.takeCompleted();
    ASSERT_EQ(completed.size(), 1u);
    EXPECT_EQ(completed[0].second, kBuffer);
    EXPECT_TRUE(pool.takeCompleted().empty());
    pool.recycle(completed);
    uint8_t* reused = pool.request();
    EXPECT_EQ(reused, buffer) << "the spare, without a new reservation";
    EXPECT_TRUE(std::all_of(reused, reused + kBuffer, [](uint8_t v) { return v == 0; }));
    EXPECT_EQ(BufferBudget::used(), kBuffer);
    giveBack(pool, { reused });
}

TEST_F(CuptiBufferPoolTest, AnotherClientsBuffersAreLeftAlone) {
    CuptiBufferPool pool;
    std::vector<uint64_t> theirs(kBuffer / 8, 0x5555);
    auto* foreign = reinterpret_cast<uint8_t*>(theirs.data());
    pool.complete(foreign, 64);
    pool.recycle(pool.takeCompleted());
    EXPECT_EQ(theirs[0], 0x5555u) << "not zeroed";
    EXPECT_EQ(BufferBudget::used(), 0u);
    EXPECT_EQ(pool.stats().heldBytes, 0u);
}

// CUPTI's threads request and complete buffers while the writer takes and recycles them: the budget
// always covers what the pool holds, and nothing is lost or held twice.
TEST_F(CuptiBufferPoolTest, ThreadsAndTheWriterTogether) {
    CuptiBufferPool pool;
    pool.setMaxBuffers(6);
    std::atomic<bool> stop { false };
    std::atomic<uint64_t> served { 0 }, refused { 0 };
    std::vector<std::thread> cupti;
    cupti.reserve(3);
    for (int t = 0; t < 3; ++t)
        cupti.emplace_back([&] {
            for (int i = 0; i < 400; ++i) {
                uint8_t* b = pool.request();
                if (!b) {
                    ++refused;
                    continue;
                }
                ++served;
                b[0] = 1;
                pool.complete(b, 1);
            }
        });
    std::thread writer([&] {
        while (!stop.load()) {
            pool.recycle(pool.takeCompleted());
            EXPECT_LE(pool.stats().heldBytes, 6 * kBuffer);
            std::this_thread::yield();
        }
        pool.recycle(pool.takeCompleted());
    });
    for (auto& t : cupti)
        t.join();
    stop = true;
    writer.join();
    EXPECT_EQ(served + refused, 1200u);
    EXPECT_EQ(pool.stats().refused, refused.load());
    EXPECT_EQ(pool.stats().heldBytes, BufferBudget::used());
    EXPECT_LE(pool.stats().heldBytes, CuptiBufferPool::kSpareBuffers * kBuffer);
    EXPECT_LE(pool.stats().peakBytes, 6 * kBuffer);
}

TEST_F(CuptiBufferPoolTest, APoolDestroyedGivesItsBuffersBack) {
    {
        CuptiBufferPool pool;
        pool.setMaxBuffers(3);
        giveBack(pool, { pool.request(), pool.request() });
        pool.request();
        EXPECT_EQ(BufferBudget::used(), 2 * kBuffer);
    }
    EXPECT_EQ(BufferBudget::used(), 0u);
}

} // namespace
} // namespace tuneup::agent
