// Another CUPTI client in the recorded process (as torch.profiler's Kineto): its CUPTI calls reach the real
// libcupti unchanged, and the recording names the client and what it did (meta cupti.other_clients). With
// a GPU, the recording also says what of the agent's own capture it took (capture.cuda.lost; the rules for
// that are tested in tests/agent/cupti_coexistence_test.cpp). Uses the toolkit's real libcupti, no GPU.

#include "injection.h"
#include "sqlite_query.h"

#include <gtest/gtest.h>
#include <string>

namespace tuneup::test {
namespace {

std::string meta(SqliteQuery& q, const std::string& key) {
    const auto rows = q.rows("SELECT value FROM meta WHERE key = '" + key + "'");
    return rows.empty() || !rows[0][0] ? "" : *rows[0][0];
}

TEST(CuptiCoexistence, AnotherClientsCallsArePassedOnAndNamed) {
    TempDir dir;
    InjectedProcess run(dir, { TUNEUP_TEST_CUPTI_CLIENT });
    ASSERT_TRUE(run.wait(std::chrono::seconds(60)));
    ASSERT_EQ(run.exitCode(), 0) << run.err();
    // The real libcupti answered each call (no driver here: its errors, not the agent's).
    EXPECT_NE(run.out().find("buffers 0"), std::string::npos) << run.out();
    EXPECT_NE(run.out().find("subscribe 999"), std::string::npos) << run.out();
    SqliteQuery q(dir.base());
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(meta(q, "cupti.other_clients"),
        "cupti_client: subscribe, timestamp callback, activity buffers, enable kind 10, disable kind 10, finalize");
    // The agent's own capture was off (no GPU): nothing of it was lost.
    EXPECT_EQ(meta(q, "capture.cuda.lost"), "");
}

} // namespace
} // namespace tuneup::test
