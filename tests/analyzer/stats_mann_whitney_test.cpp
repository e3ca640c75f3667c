// The Mann-Whitney U test (analyzer/lib/stats/mann_whitney.h), checked against full enumeration of
// every way the pooled values can be split into two samples (the permutation distribution of U), and
// its normal approximation against the exact count.

#include "stats/mann_whitney.h"
#include "stats/random.h"

#include <cmath>
#include <gtest/gtest.h>
#include <numeric>

namespace tuneup::stats {
namespace {

double uOf(const std::vector<double>& x, const std::vector<double>& y) {
    double u = 0;
    for (double a : x)
        for (double b : y)
            u += a > b ? 1 : a == b ? 0.5 : 0;
    return u;
}

// Two-sided permutation p-value of U: the share of all splits of the pooled values into samples of
// the same sizes whose U lies at least as far from its mean as the observed one.
double enumeratedPValue(const std::vector<double>& x, const std::vector<double>& y) {
    std::vector<double> all(x);
    all.insert(all.end(), y.begin(), y.end());
    const size_t n = all.size(), k = x.size();
    const double mean = double(x.size() * y.size()) / 2;
    const double observed = std::abs(uOf(x, y) - mean);
    std::vector<bool> pick(n, false);
    std::fill(pick.begin(), pick.begin() + ptrdiff_t(k), true);
    double extreme = 0, total = 0;
    do {
        std::vector<double> a, b;
        for (size_t i = 0; i < n; ++i)
            (pick[i] ? a : b).push_back(all[i]);
        if (std::abs(uOf(a, b) - mean) >= observed - 1e-9) ++extreme;
        ++total;
    } while (std::prev_permutation(pick.begin(), pick.end()));
    return extreme / total;
}

TEST(MannWhitney, CompletelySeparatedSmallSamplesExact) {
    // Three against three, every x below every y: U = 0, and 2 of the 20 splits are as extreme.
    const MannWhitney r = mannWhitney({ 1, 2, 3 }, { 4, 5, 6 });
    EXPECT_TRUE(r.exact);
    EXPECT_DOUBLE_EQ(r.u, 0);
    EXPECT_NEAR(r.pValue, 0.1, 1e-12);
    const MannWhitney s = mannWhitney({ 4, 5, 6 }, { 1, 2, 3 });
    EXPECT_DOUBLE_EQ(s.u, 9);
    EXPECT_NEAR(s.pValue, 0.1, 1e-12);
}

TEST(MannWhitney, ExactMatchesEnumerationWithoutTies) {
    Random random(21);
    for (int trial = 0; trial < 12; ++trial) {
        const size_t n1 = 2 + random.below(6), n2 = 2 + random.below(7);
        std::vector<double> x, y;
        for (size_t i = 0; i < n1; ++i)
            x.push_back(random.normal() + 0.8);
        for (size_t i = 0; i < n2; ++i)
            y.push_back(random.normal());
        const MannWhitney r = mannWhitney(x, y);
        ASSERT_TRUE(r.exact);
        EXPECT_DOUBLE_EQ(r.u, uOf(x, y));
        EXPECT_NEAR(r.pValue, enumeratedPValue(x, y), 1e-12) << n1 << " + " << n2;
    }
}

TEST(MannWhitney, ExactCountsStayFiniteForTheLargestExactSamples) {
    std::vector<double> x, y;
    for (int i = 0; i < 30; ++i) {
        x.push_back(2 * i);
        y.push_back(2 * i + 1);
    }
    const MannWhitney r = mannWhitney(x, y);
    EXPECT_TRUE(r.exact);
    EXPECT_TRUE(std::isfinite(r.pValue));
    EXPECT_GT(r.pValue, 0.8); // interleaved: no difference
    EXPECT_FALSE(mannWhitney(x,
        { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30,
            31 })
                     .exact);
}

TEST(MannWhitney, HeavyTiesExactMatchesEnumeration) {
    // Step times on a coarse clock: few distinct values, many ties. 9 + 9 values: 48620 splits.
    const std::vector<std::vector<double>> xs = { { 1, 1, 2, 2, 2, 3, 3, 3, 3 }, { 1, 1, 1, 1, 2, 2, 2, 3, 3 },
        { 2, 2, 2, 2, 2, 2, 3, 3, 3 }, { 3, 3, 3, 3, 3, 3, 3, 3, 3 } };
    const std::vector<double> y = { 1, 1, 1, 1, 1, 2, 2, 2, 3 };
    for (const auto& x : xs) {
        const MannWhitney r = mannWhitney(x, y);
        EXPECT_TRUE(r.exact);
        EXPECT_NEAR(r.pValue, enumeratedPValue(x, y), 1e-12);
    }
    // Unequal sizes, ties across and within the samples.
    const std::vector<double> a = { 5, 5, 6, 7, 7, 7 }, b = { 4, 5, 5, 6, 6, 7, 8, 8 };
    EXPECT_NEAR(mannWhitney(a, b).pValue, enumeratedPValue(a, b), 1e-12);
}

TEST(MannWhitney, NormalApproximationIsCloseToExactForLargerSamples) {
    Random random(8);
    std::vector<double> x, y, xCoarse, yCoarse;
    for (int i = 0; i < 30; ++i) {
        x.push_back(random.normal() + 0.5);
        y.push_back(random.normal());
        xCoarse.push_back(std::round(x.back() * 2)); // about five distinct values: heavy ties
        yCoarse.push_back(std::round(y.back() * 2));
    }
    const MannWhitney exact = mannWhitney(x, y, MannWhitneyMethod::Exact);
    const MannWhitney normal = mannWhitney(x, y, MannWhitneyMethod::Normal);
    EXPECT_TRUE(exact.exact);
    EXPECT_FALSE(normal.exact);
    EXPECT_NEAR(normal.pValue, exact.pValue, 0.005);
    EXPECT_NEAR(mannWhitney(xCoarse, yCoarse, MannWhitneyMethod::Normal).pValue,
        mannWhitney(xCoarse, yCoarse, MannWhitneyMethod::Exact).pValue, 0.01);
}

TEST(MannWhitney, AllTiedOrEmptyMeansNoEvidence) {
    EXPECT_DOUBLE_EQ(mannWhitney({ 5, 5, 5 }, { 5, 5 }).pValue, 1);
    EXPECT_DOUBLE_EQ(mannWhitney({}, { 1, 2 }).pValue, 1);
    EXPECT_DOUBLE_EQ(mannWhitney({ 1 }, {}).pValue, 1);
}

TEST(MannWhitney, SameDistributionRejectsAboutFivePercent) {
    // 400 pairs of samples of 40 from one normal: p < 0.05 in about 5% of them (binomial sd ~1.1%).
    int rejected = 0;
    for (int seed = 0; seed < 400; ++seed) {
        Random random { uint64_t(seed) };
        std::vector<double> x, y;
        for (int i = 0; i < 40; ++i) {
            x.push_back(random.normal());
            y.push_back(random.normal());
        }
        if (mannWhitney(x, y).pValue < 0.05) ++rejected;
    }
    EXPECT_GE(rejected, 6);
    EXPECT_LE(rejected, 34);
}

TEST(MannWhitney, ShiftedNormalsAreSignificantWithTheRightSign) {
    Random random(2);
    std::vector<double> x, y;
    for (int i = 0; i < 60; ++i) {
        x.push_back(random.normal() + 1);
        y.push_back(random.normal());
    }
    const MannWhitney r = mannWhitney(x, y);
    EXPECT_FALSE(r.exact);
    EXPECT_LT(r.pValue, 1e-4);
    EXPECT_GT(r.z, 0);
    EXPECT_GT(r.u, 60.0 * 60 / 2);
}

} // namespace
} // namespace tuneup::stats
