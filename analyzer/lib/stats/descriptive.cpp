#include "stats/descriptive.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tuneup::stats {

double percentile(std::vector<double> values, double q) {
    if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
    q = std::clamp(q, 0.0, 1.0);
    const double position = q * double(values.size() - 1);
    const size_t below = size_t(std::floor(position));
    const double fraction = position - double(below);
    std::nth_element(values.begin(), values.begin() + ptrdiff_t(below), values.end());
    const double low = values[below];
    if (fraction == 0 || below + 1 >= values.size()) return low;
    // The next order statistic is the smallest of what nth_element left above `below`.
    const double high = *std::min_element(values.begin() + ptrdiff_t(below) + 1, values.end());
    return low + fraction * (high - low);
}

double median(std::vector<double> values) {
    return percentile(std::move(values), 0.5);
}

double trimmedMean(std::vector<double> values, double trim) {
    if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
    std::sort(values.begin(), values.end());
    const size_t drop
        = std::min(size_t(std::floor(std::clamp(trim, 0.0, 0.5) * double(values.size()))), (values.size() - 1) / 2);
    double sum = 0;
    for (size_t i = drop; i < values.size() - drop; ++i)
        sum += values[i];
    return sum / double(values.size() - 2 * drop);
}

double center(std::vector<double> values, Center c) {
    return c == Center::Median ? median(std::move(values)) : trimmedMean(std::move(values), kCenterTrim);
}

std::string_view centerName(Center c) {
    return c == Center::Median ? "median" : "10%-trimmed mean";
}

Distribution describe(const std::vector<double>& values) {
    Distribution d;
    d.n = values.size();
    if (values.empty()) return d;
    d.median = percentile(values, 0.5);
    d.p10 = percentile(values, 0.1);
    d.p90 = percentile(values, 0.9);
    d.trimmedMean = trimmedMean(values, kCenterTrim);
    return d;
}

std::vector<double> pooled(const std::vector<std::vector<double>>& runs) {
    std::vector<double> all;
    for (const auto& run : runs)
        all.insert(all.end(), run.begin(), run.end());
    return all;
}

} // namespace tuneup::stats
