#include "stats/bootstrap.h"

#include "stats/descriptive.h"
#include "stats/distributions.h"
#include "stats/random.h"

#include <algorithm>
#include <cmath>

namespace tuneup::stats {

namespace {

Runs nonEmpty(const Runs& runs) {
    Runs kept;
    for (const auto& run : runs)
        if (!run.empty()) kept.push_back(run);
    return kept;
}

// One bootstrap replicate of a side's centre: draw as many runs as it has, with replacement, and from
// each drawn run as many steps as it has, with replacement.
double resampledCenter(const Runs& runs, Center c, Random& random, std::vector<double>& scratch) {
    scratch.clear();
    for (size_t r = 0; r < runs.size(); ++r) {
        const auto& run = runs[random.below(runs.size())];
        for (size_t s = 0; s < run.size(); ++s)
            scratch.push_back(run[random.below(run.size())]);
    }
    if (c == Center::TrimmedMean) return trimmedMean(scratch, kCenterTrim);
    const size_t middle = scratch.size() / 2;
    std::nth_element(scratch.begin(), scratch.begin() + ptrdiff_t(middle), scratch.end());
    if (scratch.size() % 2) return scratch[middle];
    const double upper = scratch[middle];
    const double lower = *std::max_element(scratch.begin(), scratch.begin() + ptrdiff_t(middle));
    return (lower + upper) / 2;
}

// t(df) / z * sqrt(R / (R - 1)) when some side has two runs or more (bootstrap.h), else 1.
double smallSampleWidening(const Runs& a, const Runs& b, double confidence) {
    double df = 0;
    size_t fewest = 0;
    for (const Runs* side : { &a, &b })
        if (side->size() >= 2) {
            df += double(side->size() - 1);
            fewest = fewest ? std::min(fewest, side->size()) : side->size();
        }
    if (!fewest) return 1;
    const double p = 1 - (1 - confidence) / 2;
    return studentTQuantile(p, df) / normalQuantile(p) * std::sqrt(double(fewest) / double(fewest - 1));
}

} // namespace

RatioEstimate bootstrapRatio(const Runs& numerator, const Runs& denominator, const BootstrapOptions& options) {
    RatioEstimate estimate;
    estimate.confidence = options.confidence;
    const Runs top = nonEmpty(numerator), bottom = nonEmpty(denominator);
    if (top.empty() || bottom.empty()) return estimate;
    const double topCenter = center(pooled(top), options.center), bottomCenter = center(pooled(bottom), options.center);
    if (!(topCenter > 0) || !(bottomCenter > 0)) return estimate;
    estimate.ratio = topCenter / bottomCenter;

    Random random(options.seed);
    std::vector<double> logRatios, scratch;
    const int iterations = std::max(options.iterations, 100);
    logRatios.reserve(size_t(iterations));
    for (int i = 0; i < iterations; ++i) {
        const double t = resampledCenter(top, options.center, random, scratch);
        const double b = resampledCenter(bottom, options.center, random, scratch);
        // Step times are positive; a zero could come only from a degenerate input, and sorts first.
        logRatios.push_back(t > 0 && b > 0 ? std::log(t / b) : -INFINITY);
    }
    const double tail = (1 - options.confidence) / 2;
    const double center = std::log(estimate.ratio);
    estimate.widening = smallSampleWidening(top, bottom, options.confidence);
    // The estimate stays inside its interval even when the bootstrap ratios are skewed past it.
    estimate.low = std::exp(center - estimate.widening * std::max(0.0, center - percentile(logRatios, tail)));
    estimate.high = std::exp(center + estimate.widening * std::max(0.0, percentile(logRatios, 1 - tail) - center));
    estimate.valid = true;
    return estimate;
}

} // namespace tuneup::stats
