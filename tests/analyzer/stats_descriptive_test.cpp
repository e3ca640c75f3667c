// Medians, percentiles and the bootstrap interval of a ratio of medians (analyzer/lib/stats).

#include "stats/bootstrap.h"
#include "stats/descriptive.h"
#include "stats/distributions.h"
#include "stats_test_support.h"

#include <cmath>
#include <gtest/gtest.h>

namespace tuneup::stats {
namespace {

using testing::drawRuns;
using testing::RunShape;

TEST(Percentile, InterpolatesBetweenOrderStatisticsLikeNumpy) {
    // numpy.percentile([4, 1, 3, 2], [10, 50, 90]) = [1.3, 2.5, 3.7]
    EXPECT_DOUBLE_EQ(percentile({ 4, 1, 3, 2 }, 0.1), 1.3);
    EXPECT_DOUBLE_EQ(percentile({ 4, 1, 3, 2 }, 0.5), 2.5);
    EXPECT_DOUBLE_EQ(percentile({ 4, 1, 3, 2 }, 0.9), 3.7);
    EXPECT_DOUBLE_EQ(median({ 5, 1, 3 }), 3);
    EXPECT_DOUBLE_EQ(percentile({ 7 }, 0.9), 7);
    EXPECT_DOUBLE_EQ(percentile({ 1, 2 }, 0), 1);
    EXPECT_DOUBLE_EQ(percentile({ 1, 2 }, 1), 2);
    EXPECT_TRUE(std::isnan(median({})));
}

TEST(Percentile, HeavyTiesAndDuplicates) {
    EXPECT_DOUBLE_EQ(median({ 2, 2, 2, 2, 9 }), 2);
    EXPECT_DOUBLE_EQ(percentile({ 1, 1, 1, 5, 5, 5 }, 0.5), 3);
}

TEST(TrimmedMean, DropsATenthEachSideAndFollowsThroughput) {
    // 20 values: 2 dropped each side.
    std::vector<double> values;
    for (int i = 1; i <= 20; ++i)
        values.push_back(i);
    values.back() = 1000; // an outlier goes with the trimmed tail
    EXPECT_DOUBLE_EQ(trimmedMean(values, 0.1), (3 + 18) / 2.0);
    EXPECT_DOUBLE_EQ(trimmedMean({ 5 }, 0.1), 5);
    EXPECT_DOUBLE_EQ(trimmedMean({ 1, 2, 3 }, 0.5), 2); // at most all but the middle
    EXPECT_TRUE(std::isnan(trimmedMean({}, 0.1)));
    // Alternating steps: the median is a mode, the 10%-trimmed mean the time per step.
    const std::vector<double> alternating = { 20, 60, 20, 60, 20, 60, 20, 60, 20, 60 };
    EXPECT_DOUBLE_EQ(trimmedMean(alternating, kCenterTrim), 40);
    EXPECT_DOUBLE_EQ(center(alternating, Center::TrimmedMean), 40);
    EXPECT_DOUBLE_EQ(center({ 20, 60, 20 }, Center::Median), 20);
}

TEST(Describe, MedianP10P90AndCount) {
    std::vector<double> values;
    for (int i = 1; i <= 101; ++i)
        values.push_back(i);
    const Distribution d = describe(values);
    EXPECT_EQ(d.n, 101u);
    EXPECT_DOUBLE_EQ(d.median, 51);
    EXPECT_DOUBLE_EQ(d.p10, 11);
    EXPECT_DOUBLE_EQ(d.p90, 91);
    EXPECT_DOUBLE_EQ(d.trimmedMean, 51);
    EXPECT_EQ(describe({}).n, 0u);
}

TEST(Distributions, QuantilesOfTablesOfTheNormalAndStudentsT) {
    EXPECT_NEAR(normalQuantile(0.975), 1.959964, 1e-6);
    EXPECT_NEAR(normalQuantile(0.5), 0, 1e-12);
    EXPECT_NEAR(normalQuantile(0.05), -1.644854, 1e-6);
    // Student's t, two-sided 95%: df 1, 2, 4, 6, 30.
    EXPECT_NEAR(studentTQuantile(0.975, 1), 12.7062, 1e-4);
    EXPECT_NEAR(studentTQuantile(0.975, 2), 4.3027, 1e-4);
    EXPECT_NEAR(studentTQuantile(0.975, 4), 2.7764, 1e-4);
    EXPECT_NEAR(studentTQuantile(0.975, 6), 2.4469, 1e-4);
    EXPECT_NEAR(studentTQuantile(0.975, 30), 2.0423, 1e-4);
    EXPECT_NEAR(studentTQuantile(0.025, 4), -2.7764, 1e-4);
    EXPECT_NEAR(studentTCdf(0, 3), 0.5, 1e-12);
    EXPECT_NEAR(studentTCdf(2.0, 10), 0.963306, 1e-6);
}

TEST(Random, SameSeedSameSequenceAndNormalMoments) {
    Random a(42), b(42);
    for (int i = 0; i < 100; ++i)
        ASSERT_EQ(a.below(1000), b.below(1000));
    Random r(7);
    double sum = 0, squares = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        const double x = r.normal();
        sum += x;
        squares += x * x;
    }
    EXPECT_NEAR(sum / n, 0, 0.01);
    EXPECT_NEAR(squares / n, 1, 0.01);
}

TEST(Bootstrap, IdenticalSamplesGiveExactlyOne) {
    const Runs runs = { { 10, 11, 12, 13 }, { 10, 11, 12, 13 } };
    const RatioEstimate r = bootstrapRatio(runs, runs);
    ASSERT_TRUE(r.valid);
    EXPECT_DOUBLE_EQ(r.ratio, 1);
    // Not degenerate: each side resamples on its own, so the interval has a width, around 1.
    EXPECT_LT(r.low, 1);
    EXPECT_GT(r.high, 1);
    const Runs constant = { { 5, 5, 5 }, { 5, 5 } };
    const RatioEstimate c = bootstrapRatio(constant, constant);
    EXPECT_DOUBLE_EQ(c.low, 1);
    EXPECT_DOUBLE_EQ(c.high, 1);
}

TEST(Bootstrap, SameSeedSameInterval) {
    Random random(3);
    const Runs a = drawRuns(random, {}), b = drawRuns(random, {});
    const RatioEstimate x = bootstrapRatio(a, b), y = bootstrapRatio(a, b);
    EXPECT_EQ(x.low, y.low);
    EXPECT_EQ(x.high, y.high);
    BootstrapOptions other;
    other.seed = 99;
    EXPECT_NE(bootstrapRatio(a, b, other).low, x.low);
}

TEST(Bootstrap, ShiftedNormalsIntervalHoldsTheTrueRatioAndExcludesOne) {
    // Steps of 100 ms against steps of 80 ms, 5% noise: the baseline is 1.25x the candidate.
    Random random(11);
    RunShape slow;
    slow.medianMs = 100;
    RunShape fast = slow;
    fast.medianMs = 80;
    const Runs a = drawRuns(random, slow), b = drawRuns(random, fast);
    const RatioEstimate r = bootstrapRatio(a, b);
    ASSERT_TRUE(r.valid);
    EXPECT_NEAR(r.ratio, 1.25, 0.05);
    EXPECT_LT(r.low, 1.25);
    EXPECT_GT(r.high, 1.25);
    EXPECT_GT(r.low, 1.1);
    EXPECT_LT(r.high, 1.4);
}

TEST(Bootstrap, CoverageOfTheTrueRatioIsNearTheConfidence) {
    // 100 data sets with a true ratio of 1.2, 8 runs of 20 steps each side: the 95% interval should hold
    // 1.2 in about 95 of them (with the small-sample widening, a little more).
    int covered = 0;
    const int trials = 100;
    BootstrapOptions options;
    options.iterations = 1000;
    for (int seed = 0; seed < trials; ++seed) {
        Random random(uint64_t(1000 + seed));
        RunShape base;
        base.runs = 8;
        base.medianMs = 120;
        RunShape candidate = base;
        candidate.medianMs = 100;
        const Runs a = drawRuns(random, base), b = drawRuns(random, candidate);
        const RatioEstimate r = bootstrapRatio(a, b, options);
        if (r.low <= 1.2 && 1.2 <= r.high) ++covered;
    }
    EXPECT_GE(covered, 90);
    EXPECT_LE(covered, 100);
}

TEST(Bootstrap, RunToRunDifferencesWidenTheInterval) {
    // The same step noise, with and without run-to-run differences: the interval must account for them.
    Random random(5);
    RunShape steady;
    steady.runNoise = 0;
    RunShape shaky = steady;
    shaky.runNoise = 0.10;
    const Runs a1 = drawRuns(random, steady), b1 = drawRuns(random, steady);
    const Runs a2 = drawRuns(random, shaky), b2 = drawRuns(random, shaky);
    const RatioEstimate narrow = bootstrapRatio(a1, b1), wide = bootstrapRatio(a2, b2);
    EXPECT_GT(std::log(wide.high / wide.low), 2 * std::log(narrow.high / narrow.low));
}

TEST(Bootstrap, FewRunsWidenTheIntervalByTheSmallSampleFactor) {
    Random random(17);
    RunShape three;
    three.runs = 3;
    const RatioEstimate r = bootstrapRatio(drawRuns(random, three), drawRuns(random, three));
    // t(4) / z * sqrt(3 / 2) = 2.7764 / 1.9600 * 1.2247
    EXPECT_NEAR(r.widening, 1.7349, 1e-3);
    EXPECT_LE(r.low, r.ratio);
    EXPECT_GE(r.high, r.ratio);
    // One run a side (compare's two recordings): nothing to measure run-to-run variance with.
    RunShape one;
    one.runs = 1;
    EXPECT_DOUBLE_EQ(bootstrapRatio(drawRuns(random, one), drawRuns(random, one)).widening, 1);
}

TEST(Bootstrap, AlternatingStepsNeedTheTrimmedMean) {
    // A DataLoader whose two workers barely keep up: steps alternate 20 and 60 ms (some a little off),
    // against a steady 120 ms. The time per step is 40 ms (3x); the median of the steps is 20 or 60
    // depending on a few values, so its interval spans both; the 10%-trimmed mean's does not.
    Random random(4);
    Runs alternating(4), steady(4);
    for (size_t r = 0; r < 4; ++r)
        for (int s = 0; s < 20; ++s) {
            alternating[r].push_back((s % 2 ? 60 : 20) * std::exp(0.05 * random.normal()));
            steady[r].push_back(120 * std::exp(0.05 * random.normal()));
        }
    BootstrapOptions trimmed;
    trimmed.center = Center::TrimmedMean;
    const RatioEstimate t = bootstrapRatio(steady, alternating, trimmed);
    EXPECT_NEAR(t.ratio, 3, 0.15);
    EXPECT_GT(t.low, 2.3); // four runs a side: widened x1.44
    EXPECT_LT(t.high, 4.0);
    const RatioEstimate m = bootstrapRatio(steady, alternating);
    EXPECT_GT(m.high / m.low, 2 * t.high / t.low);
}

TEST(Bootstrap, EmptyOrNonPositiveSidesAreInvalid) {
    EXPECT_FALSE(bootstrapRatio({}, { { 1, 2 } }).valid);
    EXPECT_FALSE(bootstrapRatio({ {} }, { { 1, 2 } }).valid);
    EXPECT_FALSE(bootstrapRatio({ { 0, 0, 0 } }, { { 1, 2 } }).valid);
    // Empty runs are skipped, not counted as runs.
    EXPECT_TRUE(bootstrapRatio({ {}, { 4, 4 } }, { { 2, 2 } }).valid);
    EXPECT_DOUBLE_EQ(bootstrapRatio({ {}, { 4, 4 } }, { { 2, 2 } }).ratio, 2);
}

} // namespace
} // namespace tuneup::stats
