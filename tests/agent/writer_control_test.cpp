// The writer's hand-shakes with the rest of the process, from several threads at once (this test runs
// under the tsan preset too): flushes, the pause before an exec and the resume after a failed one, and
// the final stop. No file descriptor carries them (wake_word.h), so nothing the program closes can
// stall them.

#include "agent.h"
#include "env_guard.h"
#include "nvtx_source.h"
#include "sqlite_query.h"
#include "temp_dir.h"
#include "writer.h"

#include <atomic>
#include <gtest/gtest.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace tuneup::agent;

TEST(WriterControl, FlushesAndAnExecPauseFromManyThreadsLoseNothing) {
    tuneup::test::TempDir dir("tuneup_writer_control");
    tuneup::test::EnvGuard env;
    const std::string path = dir.path() + "/run.db";
    env.set("TUNEUP_OUTPUT", path);
    env.set("TUNEUP_MAIN_PID", std::to_string(getpid()));
    env.set("TUNEUP_TRACE", "nvtx");
    env.set("TUNEUP_FLUSH_MS", "20");
    ASSERT_TRUE(ensureStarted());

    constexpr int kThreads = 4, kRanges = 3000;
    std::atomic<bool> recording { true };
    std::vector<std::thread> threads;
    threads.reserve(kThreads);
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([t] {
            for (int i = 0; i < kRanges; ++i) {
                bootstrapRangePush("work");
                bootstrapRangePop();
                if (i % 500 == t) Writer::flush();
            }
        });
    // Meanwhile: exec() that fails, again and again (a PATH search tries several directories).
    std::thread execs([&] {
        int pauses = 0;
        while (recording.load()) {
            if (Writer::finishForExec()) ++pauses;
            Writer::resumeAfterFailedExec();
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        EXPECT_GT(pauses, 0);
    });
    for (std::thread& thread : threads)
        thread.join();
    recording.store(false);
    execs.join();
    shutdown();

    tuneup::test::SqliteQuery q(path);
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(q.text("PRAGMA quick_check"), "ok");
    EXPECT_TRUE(q.meta("end_ns"));
    // Every push is a row; a range open across a pause was written then (with no end), and its pop
    // counted as unmatched.
    EXPECT_EQ(q.scalar("SELECT count(*) FROM nvtx_ranges"), kThreads * kRanges);
    EXPECT_EQ(q.scalar("SELECT count(*) FROM nvtx_ranges WHERE end_ns IS NULL"), q.stat("nvtx.unmatched_end"));
    EXPECT_EQ(q.stat("events.produced"), 2 * kThreads * kRanges + 1) << "+ the bootstrap domain's creation";
    EXPECT_EQ(q.stat("events.dropped"), 0);
    EXPECT_EQ(q.stat("events.written") + q.stat("events.dropped") + q.stat("events.unwritten_at_exit"),
        q.stat("events.produced"));
}
