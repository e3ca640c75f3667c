#pragma once
// Whether one side is faster, slower, the same, or whether the data cannot tell yet — and how many more
// runs (or steps) would tell. Part of the statistics `tuneup bench` (issue 14) and `tuneup compare`
// (issue 15) share (descriptive.h); both call compareRuns so that they decide alike.
//
// The rule, on the ratio r = center(numerator) / center(denominator) (medians unless
// ComparisonOptions::bootstrap.center says 10%-trimmed means) and its bootstrap 95% interval:
//   threshold  t = max(2%, the run-to-run noise measured in the runs themselves: runToRunNoise)
//   the band   [1 / (1 + t), 1 + t]: differences this small are not worth reporting, or are noise
//   Higher     the whole interval lies above the band, and the Mann-Whitney p-value is below 0.05
//   Lower      the whole interval lies below the band, and p < 0.05
//   Same       the whole interval lies inside the band
//   Inconclusive  otherwise: the interval straddles an edge of the band (more data would decide)
// Noise is never reported as a change: a change must clear both the noise and the interval's width.
// With four runs a side an A/A comparison never claimed a change in the tests' simulations (15%
// run-to-run noise included); with two or three, about 1% of them do, as a 95% interval allows.

#include "stats/bootstrap.h"
#include "stats/descriptive.h"
#include "stats/mann_whitney.h"

#include <optional>
#include <string_view>

namespace tuneup::stats {

enum class Change { Higher, Lower, Same, Inconclusive };
std::string_view changeName(Change c); // "higher"

// The run-to-run noise: how far apart runs of the same command land, as a fraction: the largest
// ratio of one run's centre to another's of the same side, less 1 (runs at 100, 104 and 97 ms: 7.2%).
// A difference between the sides smaller than this is what running the same thing again gives.
// nullopt when no side has two runs with values. compare, which has one recording per side, passes
// blocks of consecutive steps as runs.
std::optional<double> runToRunNoise(const std::vector<const Runs*>& sides, Center c = Center::Median);

struct ComparisonOptions {
    double minThreshold = 0.02; // the floor of the threshold: 2%
    double alpha = 0.05; // the Mann-Whitney p-value a change must be below
    BootstrapOptions bootstrap;
};

struct Comparison {
    Change change = Change::Inconclusive;
    RatioEstimate ratio; // numerator over denominator, with its interval
    MannWhitney test; // numerator's pooled values against the denominator's
    Distribution numerator, denominator; // pooled
    std::optional<double> noise; // measured run-to-run noise (runToRunNoise), when there were runs to measure
    double threshold = 0; // max(minThreshold, noise)
    size_t runs = 0; // the smaller side's number of non-empty runs
    // Inconclusive: about how many runs per side (of the smaller side's) the interval would need to
    // decide, from its width shrinking as 1/sqrt(runs); nullopt when even 100 times the runs would not
    // (the difference is about as large as the threshold).
    std::optional<size_t> runsToDecide;
    std::string_view why; // one phrase for Inconclusive ("the interval straddles the threshold")
};

Comparison compareRuns(const Runs& numerator, const Runs& denominator, const ComparisonOptions& options = {});

// How many samples (runs or steps, whatever `current` counts) an interval [low, high] around `ratio`,
// got from `current` of them, would need to lie wholly on one side of the band's nearer edge, its
// width shrinking as 1 / sqrt(n). nullopt when that takes more than `maxFactor` times `current`.
std::optional<size_t> samplesToDecide(
    double ratio, double low, double high, double threshold, size_t current, double maxFactor = 100);

} // namespace tuneup::stats
