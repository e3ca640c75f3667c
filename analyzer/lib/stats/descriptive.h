#pragma once
// Statistics shared by `tuneup bench` (issue 14) and `tuneup compare` (issue 15): the one place where
// both compute medians, percentiles, confidence intervals, p-values and verdicts, so that they cannot
// disagree. This header: medians and percentiles of step times.

#include <cstddef>
#include <vector>

namespace tuneup::stats {

// The q-quantile (0 <= q <= 1) by linear interpolation between order statistics (R's type 7, numpy's
// default): percentile({1,2,3,4}, 0.5) = 2.5. Takes its argument by value because it sorts it. NaN for
// an empty sample.
double percentile(std::vector<double> values, double q);
double median(std::vector<double> values);

// Median, p10 and p90 of a sample, and its size; what bench and compare print for each side.
struct Distribution {
    double median = 0, p10 = 0, p90 = 0;
    size_t n = 0;
};
Distribution describe(const std::vector<double>& values);

// Every run's values in one sample, in run order.
std::vector<double> pooled(const std::vector<std::vector<double>>& runs);

} // namespace tuneup::stats
