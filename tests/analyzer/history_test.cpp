// The run history (analyzer/lib/compare/history.h) in real SQLite files: summaries written and read
// back whole, the baseline of the last runs of one environment, a comparison against it whose
// threshold includes the runs' own spread, and files that are not a history or are damaged.

#include "compare/comparison.h"
#include "compare/history.h"
#include "compare/run_profile_json.h"
#include "stats/random.h"
#include "temp_dir.h"

#include <cmath>
#include <gtest/gtest.h>
#include <sqlite3.h>

namespace tuneup::analysis {
namespace {

RunProfile run(double ms, double noise, size_t steps, uint64_t seed, const std::string& gpu = "NVIDIA L4") {
    RunProfile p;
    p.inputs = { "run" + std::to_string(seed) + ".db" };
    p.files = p.inputs;
    p.ranks = 1;
    p.stepSource = "ProfilerStep#N ranges";
    stats::Random random(seed);
    for (size_t i = 0; i < steps; ++i)
        p.stepMs.push_back(ms * std::exp(noise * random.normal()));
    p.stepsFound = steps;
    p.hasGpuWork = true;
    p.perStep = { int64_t(ms * 1e6), int64_t(ms * 0.8e6), 0, int64_t(ms * 0.1e6), 0, int64_t(ms * 0.1e6), 0, 0,
        int64_t(ms * 0.1e6) };
    KernelStat k;
    k.name = "sm80_xmma_gemm_f16f16_f16f32";
    k.kernelClass = KernelClass::Gemm;
    k.calls = int64_t(steps) * 10;
    k.totalNs = int64_t(ms * 0.5e6) * int64_t(steps);
    p.kernels = { k };
    p.kernelSteps = steps;
    p.findings = { { "amp-unused", Severity::Warning, "fp32 \"GEMMs\" <here>", 1'000'000 } };
    p.settings = { { "cudnn.benchmark", "on" } };
    p.environment = { { "gpu.model", gpu }, { "world_size", "1" } };
    return p;
}

TEST(History, ASummaryKeepsTheIdleInsideGraphReplaysAndOldOnesLackIt) {
    RunProfile p = run(50, 0.05, 30, 1);
    p.perStep.idleGraphNs = 123'000;
    const std::string json = runProfileToJson(p);
    EXPECT_EQ(runProfileFromJson(json).perStep.idleGraphNs, 123'000);
    // Profiles stored before it had a part of its own have no "idle_graph".
    std::string before = json;
    const size_t at = before.find(",\"idle_graph\":123000");
    ASSERT_NE(at, std::string::npos) << json;
    before.erase(at, std::string(",\"idle_graph\":123000").size());
    const RunProfile old = runProfileFromJson(before);
    EXPECT_EQ(old.perStep.idleGraphNs, 0);
    EXPECT_EQ(old.perStep.stepNs, p.perStep.stepNs);
}

TEST(History, ASummaryComesBackWhole) {
    const RunProfile p = run(50, 0.05, 30, 1);
    const RunProfile back = runProfileFromJson(runProfileToJson(p));
    EXPECT_EQ(back.stepMs, p.stepMs);
    EXPECT_EQ(back.inputs, p.inputs);
    EXPECT_EQ(back.perStep.memcpyNs, p.perStep.memcpyNs);
    ASSERT_EQ(back.kernels.size(), 1u);
    EXPECT_EQ(back.kernels[0].kernelClass, KernelClass::Gemm);
    EXPECT_EQ(back.kernels[0].totalNs, p.kernels[0].totalNs);
    ASSERT_EQ(back.findings.size(), 1u);
    EXPECT_EQ(back.findings[0].title, p.findings[0].title);
    EXPECT_EQ(back.findings[0].severity, Severity::Warning);
    EXPECT_EQ(back.settings, p.settings);
    EXPECT_EQ(environmentFingerprint(back.environment), "gpu.model=NVIDIA L4; world_size=1");
    EXPECT_THROW(runProfileFromJson("{\"inputs\": []}"), std::runtime_error);
}

TEST(History, RunsAreKeptInOrderAndTheBaselineIsTheLastOfTheSameEnvironment) {
    const test::TempDir dir("history_test");
    const std::string db = dir.path() + "/history.db";
    EXPECT_THROW(readHistory(db), HistoryError); // no file yet
    for (uint64_t i = 1; i <= 7; ++i)
        EXPECT_EQ(addToHistory(db, run(100 + double(i), 0.02, 20, i), "commit-" + std::to_string(i)), int64_t(i));
    addToHistory(db, run(60, 0.02, 20, 99, "NVIDIA H100 80GB HBM3"), "on an H100");
    const std::vector<HistoryEntry> history = readHistory(db);
    ASSERT_EQ(history.size(), 8u);
    EXPECT_EQ(history[0].label, "commit-1");
    EXPECT_EQ(history[7].fingerprint, "gpu.model=NVIDIA H100 80GB HBM3; world_size=1");
    EXPECT_EQ(history[2].profile.stepMs, run(103, 0.02, 20, 3).stepMs);

    const RunProfile base = historyBaseline(history, "gpu.model=NVIDIA L4; world_size=1", 5, db);
    ASSERT_EQ(base.runs.size(), 5u); // commits 3 to 7, not the H100's
    EXPECT_EQ(base.runs.front(), run(103, 0.02, 20, 3).stepMs);
    EXPECT_EQ(base.stepMs.size(), 100u);
    EXPECT_EQ(base.kernelSteps, 100u);
    EXPECT_NEAR(double(base.perStep.stepNs), 105e6, 1e6); // the mean of 103..107 ms
    EXPECT_NE(base.inputs[0].find("commit-3, commit-4, commit-5, commit-6, commit-7"), std::string::npos);

    // NEW 20% slower than those runs: regressed; as fast: same (the runs' own spread of ~4% is the threshold).
    EXPECT_EQ(compareProfiles(base, run(126, 0.02, 20, 50)).verdict, Verdict::Regressed);
    const CompareResult same = compareProfiles(base, run(105, 0.02, 20, 51));
    EXPECT_EQ(same.verdict, Verdict::Same);
    EXPECT_GT(same.stepTime.threshold, 0.03);
    EXPECT_EQ(same.stepTime.thresholdFrom, "run-to-run noise of BASE's runs");

    try {
        historyBaseline(history, "gpu.model=Tesla T4; world_size=1", 5, db);
        FAIL() << "a baseline from another environment";
    } catch (const HistoryError& e) {
        EXPECT_NE(std::string(e.what()).find("holds no run recorded in this environment"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("7 run(s): gpu.model=NVIDIA L4"), std::string::npos) << e.what();
    }
}

TEST(History, AFileOfAnotherKindIsNeverWrittenAndADamagedEntryIsNamed) {
    const test::TempDir dir("history_test");
    const std::string other = dir.path() + "/other.db";
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    try {
        addToHistory(other, run(10, 0.01, 10, 1), "x");
        FAIL() << "wrote into another database";
    } catch (const HistoryError& e) {
        EXPECT_NE(std::string(e.what()).find("not a tuneup history"), std::string::npos) << e.what();
    }
    EXPECT_THROW(readHistory(other), HistoryError);

    const std::string history = dir.path() + "/history.db";
    addToHistory(history, run(10, 0.01, 10, 1), "good");
    addToHistory(history, run(10, 0.01, 10, 2), "bad");
    ASSERT_EQ(sqlite3_open(history.c_str(), &db), SQLITE_OK);
    sqlite3_exec(db, "UPDATE runs SET profile = '{\"inputs\": 3}' WHERE label = 'bad'", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    try {
        readHistory(history);
        FAIL() << "read a damaged entry";
    } catch (const HistoryError& e) {
        EXPECT_NE(std::string(e.what()).find("run 2 (bad) is damaged"), std::string::npos) << e.what();
    }
}

} // namespace
} // namespace tuneup::analysis
