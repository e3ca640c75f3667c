#pragma once
// The ratio of two sides' centres (medians, or 10%-trimmed means: descriptive.h) with a bootstrap confidence
// interval, for step times that come in runs.
// Part of the statistics `tuneup bench` and `tuneup compare` share (descriptive.h).
//
// Steps of one run are not independent of each other: a run on a busier machine, or with a different
// memory layout, is slower in all its steps. So the resampling is in two levels — runs with
// replacement, then steps with replacement within each drawn run — and the interval is as wide as the
// run-to-run differences make it, not only the step-to-step ones. With one run per side (compare's
// two recordings) it is the ordinary bootstrap of the steps.
//
// With a handful of runs the spread of the bootstrap ratios understates the run-to-run variance twice
// over: resampling R runs sees (R - 1) / R of their variance, and the variance itself is estimated from
// few runs (a t, not a normal, distribution). So when the sides have runs to measure that variance
// with, the interval's half-widths (on a log scale, around the estimate) are widened by
// t(df) / z * sqrt(R / (R - 1)), df = the runs less one per side, R = the fewer runs of a side: x1.73
// for 3 runs a side, x1.44 for 4, x1.17 for 8. Without this, an A/A benchmark of 3 runs a side claims a
// change in 4% of cases instead of under 1% (stats_verdict_test).

#include "stats/descriptive.h"

#include <cstdint>
#include <vector>

namespace tuneup::stats {

using Runs = std::vector<std::vector<double>>; // per run, its values (step times)

struct BootstrapOptions {
    int iterations = 4000;
    double confidence = 0.95;
    uint64_t seed = 0x7475'6e65'7570; // fixed: the same data give the same interval
    Center center = Center::Median;
};

struct RatioEstimate {
    double ratio = 0; // center(numerator) / center(denominator), over the pooled values
    double low = 0, high = 0; // percentile interval of the bootstrap ratios
    double confidence = 0;
    double widening = 1; // the small-sample factor applied to the interval (1: none)
    bool valid = false; // false when a side has no values, or a centre is not positive
};

// center(numerator) / center(denominator): for bench's speed-up the baseline's runs over the
// candidate's, for compare's ratio the new run's over the base's. Empty runs are skipped.
RatioEstimate bootstrapRatio(const Runs& numerator, const Runs& denominator, const BootstrapOptions& options = {});

} // namespace tuneup::stats
