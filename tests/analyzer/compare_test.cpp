// tuneup compare's comparison (analyzer/lib/compare/comparison.h) on sides with known step times:
// the verdicts, the threshold from the runs' noise, few steps, incomparable environments, kernels
// per call and per step, findings and settings as causes; and the real HTA trace_diff pair (A100 vs
// V100) opened through the job core.

#include "all_rules.h"
#include "compare/calibration.h"
#include "compare/comparison.h"
#include "shared_traces.h"
#include "stats/random.h"

#include <cmath>
#include <gtest/gtest.h>

namespace tuneup::analysis {
namespace {

// A side whose steps take `ms` each with a relative noise `noise` (lognormal), drawn with `seed`.
RunProfile side(double ms, double noise, size_t steps, uint64_t seed) {
    RunProfile p;
    p.inputs = { "run" + std::to_string(seed) + ".db" };
    p.ranks = 1;
    p.stepSource = "ProfilerStep#N ranges";
    stats::Random random(seed);
    for (size_t i = 0; i < steps; ++i)
        p.stepMs.push_back(ms * std::exp(noise * random.normal()));
    p.stepsFound = steps;
    p.environment = { { "gpu.model", "NVIDIA H100 80GB HBM3" }, { "world_size", "1" } };
    return p;
}

TEST(Compare, SameProgramTwiceNeverClaimsAChange) {
    // 200 A/A comparisons of 20 steps with 5% step-to-step noise: noise must not read as a change.
    int changes = 0, same = 0;
    for (uint64_t seed = 1; seed <= 200; ++seed) {
        const RunProfile a = side(100, 0.05, 20, seed), b = side(100, 0.05, 20, seed + 1000);
        const CompareResult r = compareProfiles(a, b);
        changes += r.verdict == Verdict::Regressed || r.verdict == Verdict::Improved;
        same += r.verdict == Verdict::Same;
    }
    EXPECT_LE(changes, 2); // a 95% interval and the rank test: at most 1% here
    EXPECT_GE(same, 150); // and mostly a plain "same"
}

TEST(Compare, ARunAgainstItselfIsSameWithRatioOne) {
    const RunProfile a = side(50, 0.1, 30, 7);
    const CompareResult r = compareProfiles(a, a);
    EXPECT_EQ(r.verdict, Verdict::Same);
    EXPECT_DOUBLE_EQ(r.stepTime.ratio, 1.0);
    EXPECT_LE(r.stepTime.low, 1.0);
    EXPECT_GE(r.stepTime.high, 1.0);
}

TEST(Compare, ASlowerRunRegressesAndTheSwappedPairImproves) {
    const RunProfile fast = side(100, 0.03, 20, 1), slow = side(130, 0.03, 20, 2);
    const CompareResult r = compareProfiles(fast, slow);
    EXPECT_EQ(r.verdict, Verdict::Regressed);
    EXPECT_NEAR(r.stepTime.ratio, 1.3, 0.05);
    EXPECT_GT(r.stepTime.low, 1 + r.stepTime.threshold);
    EXPECT_LT(r.stepTime.pValue, 0.05);
    const CompareResult swapped = compareProfiles(slow, fast);
    EXPECT_EQ(swapped.verdict, Verdict::Improved);
    EXPECT_NEAR(swapped.stepTime.ratio, 1 / 1.3, 0.05);
}

TEST(Compare, TheThresholdIsTheLargerOfTwoPercentAndTheRunsNoise) {
    // Quiet runs: the 2% floor.
    const CompareResult quiet = compareProfiles(side(100, 0.001, 24, 1), side(100, 0.001, 24, 2));
    EXPECT_DOUBLE_EQ(quiet.stepTime.threshold, 0.02);
    EXPECT_EQ(quiet.stepTime.thresholdFrom, "2% floor");
    // Runs whose blocks of steps drift apart by 20%: that drift is the threshold.
    RunProfile drifting = side(100, 0.001, 24, 3);
    for (size_t i = 18; i < 24; ++i)
        drifting.stepMs[i] *= 1.2;
    const CompareResult noisy = compareProfiles(drifting, side(100, 0.001, 24, 4));
    EXPECT_NEAR(noisy.stepTime.threshold, 0.2, 0.01);
    EXPECT_EQ(noisy.stepTime.thresholdFrom, "run noise");
    // --max-regression replaces it.
    CompareOptions options;
    options.maxRegression = 0.05;
    EXPECT_DOUBLE_EQ(compareProfiles(drifting, side(100, 0.001, 24, 4), options).stepTime.threshold, 0.05);
}

TEST(Compare, BlockNoiseIsTheSpreadOfTheMediansOfConsecutiveSteps) {
    EXPECT_FALSE(blockNoise({ 1, 2, 3, 4, 5 })); // fewer than two blocks of three
    // Two blocks of three: medians 10 and 12.
    EXPECT_NEAR(*blockNoise({ 10, 9, 11, 12, 12, 13 }), 0.2, 1e-12);
}

TEST(Compare, AStraddlingIntervalIsInconclusiveAndSaysHowManyStepsWouldDecide) {
    // 8% slower with 10% noise over 8 steps, against a 2% threshold: the interval straddles 1.02.
    CompareOptions options;
    options.maxRegression = 0.02;
    const CompareResult r = compareProfiles(side(100, 0.10, 8, 11), side(108, 0.10, 8, 12), options);
    ASSERT_EQ(r.verdict, Verdict::Inconclusive);
    EXPECT_FALSE(r.stepTime.why.empty());
    ASSERT_TRUE(r.stepTime.stepsToDecide);
    EXPECT_GT(*r.stepTime.stepsToDecide, 8u);
}

TEST(Compare, FewStepsAreSaidAndTooFewGiveNoVerdict) {
    const CompareResult two = compareProfiles(side(100, 0.01, 2, 1), side(200, 0.01, 2, 2));
    EXPECT_EQ(two.verdict, Verdict::Inconclusive);
    EXPECT_NE(two.stepTime.why.find("fewer than 3"), std::string::npos);
    const CompareResult four = compareProfiles(side(100, 0.01, 4, 1), side(100, 0.01, 30, 2));
    bool said = false;
    for (const std::string& note : four.notes)
        said |= note.find("BASE has only 4 measured steps") != std::string::npos;
    EXPECT_TRUE(said);
}

TEST(Compare, AChangedGpuIsIncomparableUnlessAllowed) {
    const RunProfile a = side(100, 0.02, 20, 1);
    RunProfile b = side(150, 0.02, 20, 2);
    b.environment = { { "gpu.model", "Tesla V100-SXM2-16GB" }, { "world_size", "1" } };
    const CompareResult r = compareProfiles(a, b);
    EXPECT_EQ(r.verdict, Verdict::Incomparable);
    EXPECT_EQ(r.stepVerdict, Verdict::Regressed);
    ASSERT_EQ(r.environment.changed.size(), 1u);
    EXPECT_EQ(r.environment.changed[0].key, "gpu.model");
    EXPECT_EQ(r.environment.changed[0].now, "Tesla V100-SXM2-16GB");
    CompareOptions allow;
    allow.allowEnvChange = true;
    EXPECT_EQ(compareProfiles(a, b, allow).verdict, Verdict::Regressed);
    // A fact one side does not record is said, not a change.
    RunProfile c = side(100, 0.02, 20, 3);
    c.environment = { { "world_size", "1" } };
    const CompareResult oneSided = compareProfiles(a, c);
    EXPECT_NE(oneSided.verdict, Verdict::Incomparable);
    ASSERT_EQ(oneSided.environment.oneSided.size(), 1u);
}

KernelStat kernel(const std::string& name, size_t calls, double us) {
    KernelStat k;
    k.name = name;
    k.kernelClass = classifyKernel(name);
    k.calls = int64_t(calls);
    for (size_t i = 0; i < calls; ++i)
        k.callUs.push_back(us * (1 + 0.01 * double(i % 5)));
    for (double v : k.callUs)
        k.totalNs += int64_t(std::llround(v * 1e3));
    return k;
}

TEST(Compare, KernelsAreJudgedPerCallSoAWindowWithFewerLayersIsNotFaster) {
    RunProfile a = side(100, 0.02, 10, 1), b = side(100, 0.02, 10, 2);
    a.kernelSteps = b.kernelSteps = 10;
    a.kernels = { kernel("volta_sgemm_128x64_nn", 100, 50), kernel("vectorized_elementwise_kernel", 100, 10) };
    // NEW's window holds half the GEMM calls per step, each as long; the pointwise kernel is 2x slower.
    b.kernels = { kernel("volta_sgemm_128x64_nn", 50, 50), kernel("vectorized_elementwise_kernel", 100, 20) };
    const CompareResult r = compareProfiles(a, b);
    ASSERT_EQ(r.kernels.size(), 2u);
    const KernelDelta& gemm = r.kernels[0].name == "volta_sgemm_128x64_nn" ? r.kernels[0] : r.kernels[1];
    const KernelDelta& pointwise = r.kernels[0].name == "volta_sgemm_128x64_nn" ? r.kernels[1] : r.kernels[0];
    EXPECT_NEAR(gemm.newPerStepUs, gemm.basePerStepUs / 2, 1);
    EXPECT_NEAR(*gemm.perCallRatio, 1.0, 1e-9);
    EXPECT_EQ(gemm.change, KernelChange::Same);
    EXPECT_EQ(gemm.kernelClass, KernelClass::Gemm);
    EXPECT_NEAR(*pointwise.perCallRatio, 2.0, 1e-9);
    EXPECT_EQ(pointwise.change, KernelChange::Slower);
    ASSERT_TRUE(pointwise.pValue);
    EXPECT_LT(*pointwise.pValue, 0.05);
    EXPECT_EQ(r.kernelNames, 2u);
}

TEST(Compare, AnImprovementNamesTheResolvedFindingAndTheChangedSetting) {
    RunProfile slow = side(50, 0.03, 20, 1), fast = side(25, 0.03, 20, 2);
    slow.findings = { { "dataloader-stall", Severity::Error, "the training loop waits 25 ms per step", 25'000'000 } };
    slow.settings = { { "dataloader.num_workers", "0" } };
    fast.settings = { { "dataloader.num_workers", "4" } };
    const CompareResult r = compareProfiles(slow, fast);
    ASSERT_EQ(r.verdict, Verdict::Improved);
    ASSERT_EQ(r.resolved.size(), 1u);
    EXPECT_TRUE(r.appeared.empty());
    ASSERT_GE(r.causes.size(), 2u);
    EXPECT_EQ(r.causes[0].rfind("dataloader-stall resolved", 0), 0u) << r.causes[0];
    EXPECT_NE(r.causes[1].find("dataloader.num_workers changed: 0 -> 4"), std::string::npos) << r.causes[1];
    // Swapped: the finding appears, and names the regression.
    const CompareResult back = compareProfiles(fast, slow);
    ASSERT_EQ(back.verdict, Verdict::Regressed);
    ASSERT_EQ(back.appeared.size(), 1u);
    EXPECT_EQ(back.causes[0].rfind("dataloader-stall appeared", 0), 0u);
}

TEST(Compare, TheBreakdownPartThatGrewIsACause) {
    RunProfile a = side(100, 0.02, 20, 1), b = side(140, 0.02, 20, 2);
    a.hasGpuWork = b.hasGpuWork = true;
    a.perStep = { 100'000'000, 80'000'000, 0, 10'000'000, 0, 10'000'000, 0, 0, 10'000'000 };
    b.perStep = { 140'000'000, 80'000'000, 0, 50'000'000, 0, 10'000'000, 0, 0, 10'000'000 };
    const CompareResult r = compareProfiles(a, b);
    ASSERT_EQ(r.verdict, Verdict::Regressed);
    ASSERT_FALSE(r.causes.empty());
    EXPECT_EQ(r.causes[0].rfind("Copies +40 ms per step", 0), 0u) << r.causes[0];
}

TEST(CompareCalibration, SuggestsAThresholdUnderWhichEveryPairOfTheRunsIsTheSame) {
    // Five runs of one program whose runs land up to ~8% apart (each run's own offset) with 4% step noise.
    std::vector<RunProfile> runs;
    const double offsets[] = { 1.0, 1.08, 0.97, 1.03, 1.05 };
    for (uint64_t i = 0; i < 5; ++i)
        runs.push_back(side(100 * offsets[i], 0.04, 30, 50 + i));
    const Calibration c = calibrate(runs);
    ASSERT_EQ(c.runs.size(), 5u);
    ASSERT_EQ(c.pairs.size(), 10u);
    ASSERT_TRUE(c.runToRunNoise);
    EXPECT_NEAR(*c.runToRunNoise, 1.08 / 0.97 - 1, 0.04);
    EXPECT_GE(c.suggested, 0.02);
    EXPECT_DOUBLE_EQ(c.suggested * 100, std::round(c.suggested * 100)); // a whole percent
    CompareOptions suggested;
    suggested.maxRegression = c.suggested;
    for (const CalibrationPair& p : c.pairs) {
        EXPECT_LE(p.sameFrom, c.suggested);
        EXPECT_EQ(compareProfiles(runs[p.base], runs[p.now], suggested).verdict, Verdict::Same)
            << p.base << " -> " << p.now;
    }
    // The default threshold called some of these A/A pairs a change: what calibrating is for.
    size_t changes = 0;
    for (const CalibrationPair& p : c.pairs)
        changes += p.verdict == Verdict::Regressed || p.verdict == Verdict::Improved;
    EXPECT_EQ(changes, c.falseAlarms);
}

// ---- the real pair: HTA's trace_diff, rank 3 of 8 A100s against rank 1 of 2 V100s ------------------

const std::string kTraceDiff = std::string(TUNEUP_SHARED_TRACES) + "/hta/tests/data/trace_diff";

RunProfile openSide(const std::string& path) {
    JobOptions options;
    options.builtinRules = rules::builtinRules;
    options.threads = 1;
    const std::unique_ptr<Job> job = openJob({ path }, options);
    return profileJob(*job, { path });
}

TEST(CompareRealTraces, TheTraceDiffPairIsIncomparableAndNamesTheGpus) {
    TUNEUP_REQUIRE_SHARED_TRACES(TUNEUP_SHARED_TRACES);
    const RunProfile control = openSide(kTraceDiff + "/control/control.json.gz");
    const RunProfile test = openSide(kTraceDiff + "/test/test.json.gz");
    EXPECT_EQ(environmentValue(control.environment, "gpu.model"), "NVIDIA A100-PG509-200");
    EXPECT_EQ(environmentValue(test.environment, "gpu.model"), "Tesla V100-SXM2-16GB");
    EXPECT_EQ(environmentValue(control.environment, "world_size"), "8");
    EXPECT_EQ(environmentValue(test.environment, "world_size"), "2");
    const CompareResult r = compareProfiles(control, test);
    EXPECT_EQ(r.verdict, Verdict::Incomparable);
    // Compared anyway: V100 in fp32 is slower than A100 in TF32 (465 ms vs 744 ms over 6 steps).
    CompareOptions allow;
    allow.allowEnvChange = true;
    const CompareResult anyway = compareProfiles(control, test, allow);
    EXPECT_EQ(anyway.verdict, Verdict::Regressed);
    EXPECT_GT(anyway.stepTime.ratio, 1.3);
    EXPECT_TRUE(anyway.breakdownRecorded);
    EXPECT_FALSE(anyway.causes.empty());
    // The V100's fp32 GEMMs are there, by name and class, only on the NEW side.
    bool voltaAdded = false;
    for (const KernelDelta& k : anyway.kernels)
        voltaAdded |= k.name.starts_with("volta_sgemm") && k.change == KernelChange::Added
            && k.kernelClass == KernelClass::Gemm;
    EXPECT_TRUE(voltaAdded);
}

TEST(CompareRealTraces, ATraceAgainstItselfIsTheSame) {
    TUNEUP_REQUIRE_SHARED_TRACES(TUNEUP_SHARED_TRACES);
    const RunProfile control = openSide(kTraceDiff + "/control/control.json.gz");
    const CompareResult r = compareProfiles(control, control);
    // The same step times on both sides: the same, though six steps of 75-81 ms give an interval
    // (0.96x-1.04x) wider than the 3% their own spread sets.
    EXPECT_EQ(r.verdict, Verdict::Same);
    EXPECT_GT(r.stepTime.high - r.stepTime.low, 2 * r.stepTime.threshold);
    EXPECT_DOUBLE_EQ(r.stepTime.ratio, 1.0);
    EXPECT_TRUE(r.appeared.empty());
    EXPECT_TRUE(r.resolved.empty());
    for (const KernelDelta& k : r.kernels)
        EXPECT_EQ(k.change, KernelChange::Same) << k.name;
}

} // namespace
} // namespace tuneup::analysis
