// Verdicts (analyzer/lib/stats/verdict.h): faster, slower, same or inconclusive, on step times drawn
// from known distributions with fixed seeds. The A/A property: runs of one program against runs of
// the same program never come out as a change beyond the expected false-positive rate.

#include "stats/verdict.h"
#include "stats_test_support.h"

#include <cmath>
#include <gtest/gtest.h>

namespace tuneup::stats {
namespace {

using testing::drawRuns;
using testing::RunShape;

ComparisonOptions quick() {
    ComparisonOptions o;
    o.bootstrap.iterations = 1000;
    return o;
}

struct Tally {
    int higher = 0, lower = 0, same = 0, inconclusive = 0;
    void add(Change c) {
        (c == Change::Higher ? higher : c == Change::Lower ? lower : c == Change::Same ? same : inconclusive)++;
    }
};

Tally tally(int seeds, uint64_t firstSeed, const RunShape& a, const RunShape& b) {
    Tally t;
    for (int s = 0; s < seeds; ++s) {
        Random random(firstSeed + uint64_t(s));
        const Runs x = drawRuns(random, a), y = drawRuns(random, b);
        t.add(compareRuns(x, y, quick()).change);
    }
    return t;
}

TEST(RunToRunNoise, WidestSpreadOfRunMediansOnOneSide) {
    // Run medians 100, 104 and 97 on one side (7.2% apart), 50 and 51 on the other (2%).
    const Runs a = { { 100, 100, 100 }, { 104, 104 }, { 97, 96, 98 } }, b = { { 50 }, { 51, 51 } };
    const auto noise = runToRunNoise({ &a, &b });
    ASSERT_TRUE(noise);
    EXPECT_NEAR(*noise, 104.0 / 97 - 1, 1e-12);
    const Runs single = { { 1, 2, 3 } };
    EXPECT_FALSE(runToRunNoise({ &single, &single }));
}

TEST(Verdict, AAmongManySeedsNeverClaimsAChangeBeyondTheFalsePositiveRate) {
    // 300 A/A benchmarks: 4 runs of 20 steps per side, 3% run-to-run and 5% step-to-step noise, 2% of
    // the steps three times slower (a loaded machine). A change must clear the interval and the spread
    // of the runs themselves: an A/A benchmark that says faster or slower is a bug, not bad luck.
    RunShape shape;
    shape.outlierShare = 0.02;
    const Tally t = tally(300, 500, shape, shape);
    EXPECT_EQ(t.higher + t.lower, 0) << t.higher << " higher, " << t.lower << " lower";
}

TEST(Verdict, AAWithoutRunNoiseIsMostlySameWithinTheTwoPercentFloor) {
    RunShape shape;
    shape.runNoise = 0;
    shape.stepNoise = 0.02;
    shape.runs = 6;
    const Tally t = tally(100, 900, shape, shape);
    EXPECT_EQ(t.higher + t.lower, 0);
    EXPECT_GE(t.same, 90);
}

TEST(Verdict, AAWithLargeRunToRunSwingsStaysQuiet) {
    // Runs that differ by 15% from each other (a neighbour's build starting and stopping): the threshold
    // grows with the measured noise instead of reporting it. With four runs a side (bench's default) no
    // seed claims a change.
    RunShape shape;
    shape.runNoise = 0.15;
    const Tally t = tally(200, 3000, shape, shape);
    EXPECT_EQ(t.higher + t.lower, 0) << t.higher << " higher, " << t.lower << " lower";
}

TEST(Verdict, AAWithTwoOrThreeRunsStaysWithinTheFalsePositiveRate) {
    // Two or three runs a side cannot measure a 15% run-to-run noise well: now and then both sides' runs
    // agree among themselves and differ from each other by chance. The 95% interval bounds that to 5%
    // of A/A benchmarks; the widening and the threshold keep it near 1% (docs/bench.md: use 4 runs).
    for (size_t runs : { size_t(2), size_t(3) }) {
        RunShape shape;
        shape.runNoise = 0.15;
        shape.runs = runs;
        const Tally t = tally(200, 4000, shape, shape);
        EXPECT_LE(t.higher + t.lower, 10) << runs << " runs: " << t.higher << " higher, " << t.lower << " lower";
    }
}

TEST(Verdict, RealSpeedUpIsHigherWithTheRightRatio) {
    RunShape baseline;
    baseline.medianMs = 130;
    RunShape candidate;
    candidate.medianMs = 100;
    const Tally t = tally(100, 70, baseline, candidate);
    EXPECT_GE(t.higher, 95);
    EXPECT_EQ(t.lower + t.same, 0);

    Random random(1);
    const Comparison c = compareRuns(drawRuns(random, baseline), drawRuns(random, candidate));
    EXPECT_EQ(c.change, Change::Higher);
    EXPECT_NEAR(c.ratio.ratio, 1.3, 0.06);
    EXPECT_GT(c.ratio.low, 1 + c.threshold);
    EXPECT_LT(c.test.pValue, 0.05);
    EXPECT_EQ(c.runs, 4u);
    EXPECT_EQ(c.numerator.n, 80u);
}

TEST(Verdict, RealSlowDownIsLower) {
    RunShape baseline;
    baseline.medianMs = 100;
    RunShape candidate;
    candidate.medianMs = 125;
    const Tally t = tally(50, 170, baseline, candidate);
    EXPECT_GE(t.lower, 45);
    EXPECT_EQ(t.higher + t.same, 0);
}

TEST(Verdict, TinyRealDifferenceWithPlentyOfDataIsSame) {
    // 0.5% apart, measured precisely: inside the 2% band, so not worth reporting as a change.
    RunShape a;
    a.runNoise = 0.002;
    a.stepNoise = 0.01;
    a.runs = 8;
    a.steps = 50;
    RunShape b = a;
    b.medianMs = a.medianMs * 1.005;
    const Tally t = tally(40, 40, a, b);
    EXPECT_EQ(t.same, 40);
}

TEST(Verdict, HeavyTiesOnACoarseClockAreSame) {
    // Every step 10 or 11 ms (a millisecond clock) on both sides.
    Runs a, b;
    for (int r = 0; r < 4; ++r) {
        a.push_back({});
        b.push_back({});
        for (int s = 0; s < 30; ++s) {
            a.back().push_back((s + r) % 3 ? 10 : 11);
            b.back().push_back((s + r + 1) % 3 ? 10 : 11);
        }
    }
    const Comparison c = compareRuns(a, b);
    EXPECT_EQ(c.change, Change::Same);
    EXPECT_FALSE(c.test.exact);
}

TEST(Verdict, TooFewRunsForASmallEffectIsInconclusiveAndSaysHowManyWouldDecide) {
    // A 6% effect under 4% run-to-run noise with two runs a side: the interval straddles the threshold.
    RunShape baseline;
    baseline.runs = 2;
    baseline.runNoise = 0.04;
    baseline.medianMs = 106;
    RunShape candidate = baseline;
    candidate.medianMs = 100;
    int inconclusive = 0, suggested = 0, decidedWithSuggestion = 0;
    for (int seed = 0; seed < 30; ++seed) {
        Random random(uint64_t(7000 + seed));
        const Comparison c = compareRuns(drawRuns(random, baseline), drawRuns(random, candidate), quick());
        if (c.change != Change::Inconclusive) continue;
        ++inconclusive;
        EXPECT_FALSE(c.why.empty());
        if (!c.runsToDecide) continue;
        ++suggested;
        EXPECT_GT(*c.runsToDecide, 2u);
        // With the runs it asked for (capped to keep the test quick), the verdict is usually decided.
        RunShape more = baseline, moreCandidate = candidate;
        more.runs = moreCandidate.runs = std::min<size_t>(*c.runsToDecide, 40);
        const Comparison again = compareRuns(drawRuns(random, more), drawRuns(random, moreCandidate), quick());
        if (again.change != Change::Inconclusive) ++decidedWithSuggestion;
        EXPECT_NE(again.change, Change::Lower);
    }
    EXPECT_GE(inconclusive, 20);
    EXPECT_GE(suggested, 10);
    EXPECT_GE(decidedWithSuggestion * 2, suggested);
}

TEST(SamplesToDecide, ShrinksTheIntervalAsOneOverRootN) {
    // Ratio 1.10, interval [1.00, 1.21] from 4 runs, threshold 2%: the half-width (log) must fall from
    // log(1.1) to log(1.1) - log(1.02); (0.0953 / 0.0755)^2 * 4 = 6.4 -> 7 runs.
    const auto n = samplesToDecide(1.10, 1.0, 1.21, 0.02, 4);
    ASSERT_TRUE(n);
    EXPECT_EQ(*n, 7u);
    // Centred on the edge: no number of runs decides.
    EXPECT_FALSE(samplesToDecide(1.02, 0.95, 1.09, 0.02, 4));
    // Decided already.
    EXPECT_EQ(samplesToDecide(1.5, 1.4, 1.6, 0.02, 4), 4u);
    EXPECT_FALSE(samplesToDecide(0, 1, 1, 0.02, 4));
}

TEST(Verdict, EmptySideIsInconclusiveAndSaysWhy) {
    const Comparison c = compareRuns({ { 1, 2, 3 } }, {});
    EXPECT_EQ(c.change, Change::Inconclusive);
    EXPECT_FALSE(c.ratio.valid);
    EXPECT_EQ(c.why, "a side has no step times");
}

} // namespace
} // namespace tuneup::stats
