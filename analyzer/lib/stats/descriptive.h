#pragma once
// Statistics shared by `tuneup bench` (issue 14) and `tuneup compare` (issue 15): the one place where
// both compute medians, percentiles, confidence intervals, p-values and verdicts, so that they cannot
// disagree. This header: medians and percentiles of step times.

#include <cstddef>
#include <string_view>
#include <vector>

namespace tuneup::stats {

// The q-quantile (0 <= q <= 1) by linear interpolation between order statistics (R's type 7, numpy's
// default): percentile({1,2,3,4}, 0.5) = 2.5. Takes its argument by value because it sorts it. NaN for
// an empty sample.
double percentile(std::vector<double> values, double q);
double median(std::vector<double> values);

// The mean of the values left after the `trim` share of the smallest and of the largest are dropped
// (trim 0.1: a tenth each side; 0.5 approaches the median). NaN for an empty sample.
double trimmedMean(std::vector<double> values, double trim);

// The centre of a side's step times that a ratio compares. The median shrugs off slow outliers but is
// either mode of a two-mode sample: the steps of a DataLoader whose workers barely keep up alternate
// (20 ms, 60 ms, 20 ms, ...) and their median is 20 or 60 by chance; so is, with few steps, the
// interquartile mean. The 10%-trimmed mean follows the time per step of such runs and still drops the
// tenth of steps most slowed (or sped up) by what else the machine does.
enum class Center { Median, TrimmedMean };
inline constexpr double kCenterTrim = 0.1;
double center(std::vector<double> values, Center c);
std::string_view centerName(Center c); // "median", "10%-trimmed mean"

// Median, p10 and p90 of a sample, and its size; what bench and compare print for each side.
struct Distribution {
    double median = 0, p10 = 0, p90 = 0;
    double trimmedMean = 0; // trimmedMean(values, kCenterTrim)
    size_t n = 0;
};
Distribution describe(const std::vector<double>& values);

// Every run's values in one sample, in run order.
std::vector<double> pooled(const std::vector<std::vector<double>>& runs);

} // namespace tuneup::stats
