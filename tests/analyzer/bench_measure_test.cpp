// From runs' step times to a candidate's measurement (analyzer/lib/bench/bench_measure.h): steps of a
// run, warm-up detection, the speed-up and verdict, one-time cost and break-even, loss delta.

#include "bench/bench_measure.h"
#include "stats/random.h"

#include <cmath>
#include <gtest/gtest.h>

namespace tuneup::analysis {
namespace {

// A run of `n` steps around `ms` (2% noise), its first `slow` steps `extra` ms slower.
ArmRun run(stats::Random& random, size_t n, double ms, size_t slow = 0, double extra = 0) {
    ArmRun r;
    for (size_t i = 0; i < n; ++i)
        r.stepMs.push_back(ms * std::exp(0.02 * random.normal()) + (i < slow ? extra : 0));
    return r;
}

std::vector<ArmRun> runs(uint64_t seed, size_t count, size_t n, double ms, size_t slow = 0, double extra = 0) {
    stats::Random random(seed);
    std::vector<ArmRun> out;
    for (size_t i = 0; i < count; ++i)
        out.push_back(run(random, n, ms * std::exp(0.01 * random.normal()), slow, extra));
    return out;
}

TEST(RunSteps, DropsTheCutLastStep) {
    RankAnalysis rank;
    rank.steps.detection.source = StepSource::OptimizerRanges;
    for (int i = 0; i < 5; ++i)
        rank.steps.detection.steps.push_back({ i, i * 10'000'000, (i + 1) * 10'000'000 });
    const RunSteps optimizer = runSteps(rank, false);
    EXPECT_EQ(optimizer.stepMs.size(), 4u); // the last optimizer-range step runs to the end of the recording
    EXPECT_TRUE(optimizer.lastDropped);
    EXPECT_DOUBLE_EQ(optimizer.stepMs[0], 10);
    rank.steps.detection.source = StepSource::StepRange;
    EXPECT_EQ(runSteps(rank, false).stepMs.size(), 5u); // whole "step" ranges
    EXPECT_EQ(runSteps(rank, true).stepMs.size(), 4u); // stopped by bench inside its last step
    rank.steps.detection.steps.clear();
    EXPECT_TRUE(runSteps(rank, true).stepMs.empty());
}

TEST(Warmup, LeadingSlowStepsAndTheirExtraCost) {
    const std::vector<double> steps = { 250, 130, 100, 101, 99, 100, 102, 98, 100, 101, 99, 100 };
    const Warmup w = detectWarmup(steps);
    EXPECT_EQ(w.steps, 2u);
    EXPECT_NEAR(w.steadyMs, 100, 1);
    EXPECT_NEAR(w.extraMs, 150 + 30, 3);
}

TEST(Warmup, OneFastStepBetweenSlowOnesIsStillWarmup) {
    const Warmup w = detectWarmup({ 300, 100, 200, 100, 100, 100, 100, 100, 100, 100 });
    EXPECT_EQ(w.steps, 3u);
    EXPECT_DOUBLE_EQ(w.extraMs, 300);
}

TEST(Warmup, NoneInASteadyRunNorInALateOutlier) {
    EXPECT_EQ(detectWarmup({ 100, 101, 99, 100, 102, 98, 100, 300, 100, 101 }).steps, 0u);
    EXPECT_EQ(detectWarmup({ 100, 100, 100 }).steps, 0u); // too short to tell
    // Noisy steps: a step 8% slow is within the noise, not warm-up.
    EXPECT_EQ(detectWarmup({ 108, 92, 105, 95, 100, 110, 90, 104, 96, 100 }).steps, 0u);
}

TEST(MeasureCandidate, LargeSpeedupIsFasterWithTheRatioAndSteps) {
    MeasureOptions options;
    options.warmup = 2;
    options.steps = 10;
    BenchCandidate c;
    ArmMeasure b, m;
    measureCandidate(runs(1, 4, 13, 100), runs(2, 4, 13, 25), options, c, &b, &m);
    EXPECT_EQ(c.verdict, BenchVerdict::Faster);
    ASSERT_TRUE(c.speedup);
    EXPECT_NEAR(*c.speedup, 4, 0.15);
    ASSERT_TRUE(c.speedupCi);
    EXPECT_GT(c.speedupCi->first, 3.5);
    EXPECT_LT(c.speedupCi->second, 4.6);
    EXPECT_LT(*c.pValue, 1e-6);
    EXPECT_EQ(c.baselineStepMs.n, 40u); // 10 measured steps of 4 runs
    EXPECT_NEAR(c.baselineStepMs.meanMs, 100, 3);
    EXPECT_NEAR(c.candidateStepMs.meanMs, 25, 1);
    EXPECT_NEAR(c.baselineStepMs.medianMs, 100, 3);
    EXPECT_EQ(m.firstMeasured, 2u);
    EXPECT_EQ(m.measured, std::vector<size_t>(4, 10));
    EXPECT_TRUE(c.why.empty());
    EXPECT_DOUBLE_EQ(*c.oneTimeCostMs, 0);
    EXPECT_DOUBLE_EQ(*c.breakEvenSteps, 0);
}

TEST(MeasureCandidate, AlternatingStepsOfTwoWorkersAreMeasuredByTheirTimePerStep) {
    // Two DataLoader workers that barely keep up: the steps alternate 20 and 60 ms (a 40 ms time per
    // step) against 120 ms steps without workers. Two runs a side, as a quick bench makes.
    MeasureOptions options;
    options.warmup = 1;
    options.steps = 10;
    stats::Random random(9);
    std::vector<ArmRun> base, cand;
    for (int r = 0; r < 2; ++r) {
        base.push_back(run(random, 11, 120));
        ArmRun a;
        for (int s = 0; s < 11; ++s)
            a.stepMs.push_back((s % 2 ? 60 : 20) * std::exp(0.03 * random.normal()));
        cand.push_back(a);
    }
    BenchCandidate c;
    measureCandidate(base, cand, options, c);
    EXPECT_EQ(c.verdict, BenchVerdict::Faster) << c.why;
    EXPECT_NEAR(*c.speedup, 3, 0.2);
    EXPECT_NEAR(c.candidateStepMs.meanMs, 40, 2);
}

TEST(MeasureCandidate, SameProgramOnBothSidesIsNeverFasterOrSlower) {
    MeasureOptions options;
    options.warmup = 2;
    options.steps = 10;
    for (uint64_t seed = 0; seed < 40; ++seed) {
        BenchCandidate c;
        measureCandidate(runs(100 + seed, 4, 13, 50), runs(900 + seed, 4, 13, 50), options, c);
        EXPECT_TRUE(c.verdict == BenchVerdict::Same || c.verdict == BenchVerdict::Inconclusive)
            << seed << ": " << benchVerdictName(c.verdict);
    }
}

TEST(MeasureCandidate, SameWithinTheMachinesNoiseSaysHowWideThatIs) {
    // Runs of one command landing 30% apart (a busy machine), on both sides alike.
    MeasureOptions options;
    options.warmup = 0;
    options.steps = 10;
    stats::Random random(12);
    std::vector<ArmRun> base, cand;
    for (double level : { 100.0, 130.0, 100.0, 130.0, 115.0, 115.0 }) {
        base.push_back(run(random, 10, level));
        cand.push_back(run(random, 10, level));
    }
    BenchCandidate c;
    measureCandidate(base, cand, options, c);
    ASSERT_EQ(c.verdict, BenchVerdict::Same) << c.why;
    EXPECT_GT(c.threshold, 0.25);
    EXPECT_NE(c.why.find("how far apart the runs of one command landed here"), std::string::npos) << c.why;
}

TEST(MeasureCandidate, AutotunerLikeWarmupIsAOneTimeCostWithItsBreakEven) {
    // The candidate's first two steps take 400 ms more (autotuning), then it is 20 ms faster per step.
    MeasureOptions options;
    options.warmup = 1;
    options.steps = 16;
    BenchCandidate c;
    ArmMeasure m;
    measureCandidate(runs(5, 4, 20, 100), runs(6, 4, 20, 80, 2, 400), options, c, nullptr, &m);
    EXPECT_EQ(c.verdict, BenchVerdict::Faster);
    EXPECT_EQ(c.warmupSteps, 2u);
    EXPECT_EQ(m.firstMeasured, 2u); // the detected warm-up is longer than --warmup: not measured
    EXPECT_EQ(m.measured[0], 16u);
    ASSERT_TRUE(c.oneTimeCostMs);
    EXPECT_NEAR(*c.oneTimeCostMs, 800, 40);
    ASSERT_TRUE(c.breakEvenSteps);
    EXPECT_NEAR(*c.breakEvenSteps, 40, 5);
}

TEST(MeasureCandidate, InconclusiveSaysWhyAndHowManyRuns) {
    // 4% apart with 2 runs a side and run-to-run differences of a few percent.
    MeasureOptions options;
    options.warmup = 0;
    options.steps = 10;
    stats::Random random(3);
    std::vector<ArmRun> base = { run(random, 10, 104), run(random, 10, 100) };
    std::vector<ArmRun> cand = { run(random, 10, 99), run(random, 10, 103) };
    BenchCandidate c;
    measureCandidate(base, cand, options, c);
    EXPECT_EQ(c.verdict, BenchVerdict::Inconclusive);
    EXPECT_NE(c.why.find("straddles the threshold"), std::string::npos) << c.why;
}

TEST(MeasureCandidate, NoStepsOnASideFails) {
    MeasureOptions options;
    options.warmup = 5;
    BenchCandidate c;
    stats::Random random(1);
    measureCandidate(runs(1, 2, 12, 50), { run(random, 4, 50) }, options, c);
    EXPECT_EQ(c.verdict, BenchVerdict::Failed);
    EXPECT_EQ(c.why, "no run of the candidate left steps to measure after the warm-up");
    BenchCandidate d;
    measureCandidate({}, runs(1, 2, 12, 50), options, d);
    EXPECT_EQ(d.verdict, BenchVerdict::Failed);
}

TEST(MeasureCandidate, LossDeltaOverTheMeasuredSteps) {
    MeasureOptions options;
    options.warmup = 1;
    options.steps = 4;
    options.withLoss = true;
    std::vector<ArmRun> base = runs(1, 2, 6, 50), cand = runs(2, 2, 6, 40);
    for (ArmRun& r : base)
        r.losses = { 9, 2.0, 2.0, 2.0, 2.0, 9 }; // steps 1-4 measured: mean 2
    for (ArmRun& r : cand)
        r.losses = { 9, 2.1, 2.1, 2.1, 2.1, 9 };
    BenchCandidate c;
    measureCandidate(base, cand, options, c);
    ASSERT_TRUE(c.lossDelta);
    EXPECT_NEAR(*c.lossDelta, 0.1, 1e-9);
    options.withLoss = false;
    BenchCandidate d;
    measureCandidate(base, cand, options, d);
    EXPECT_FALSE(d.lossDelta);
}

} // namespace
} // namespace tuneup::analysis
