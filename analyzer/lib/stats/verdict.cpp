#include "stats/verdict.h"

#include <algorithm>
#include <cmath>

namespace tuneup::stats {

std::string_view changeName(Change c) {
    switch (c) {
    case Change::Higher:
        return "higher";
    case Change::Lower:
        return "lower";
    case Change::Same:
        return "same";
    case Change::Inconclusive:
        return "inconclusive";
    }
    return "inconclusive";
}

std::optional<double> runToRunNoise(const std::vector<const Runs*>& sides, Center c) {
    std::optional<double> noise;
    for (const Runs* side : sides) {
        if (!side) continue;
        double lowest = INFINITY, highest = 0;
        size_t measured = 0;
        for (const auto& run : *side)
            if (!run.empty())
                if (const double m = center(run, c); m > 0) {
                    lowest = std::min(lowest, m);
                    highest = std::max(highest, m);
                    ++measured;
                }
        if (measured >= 2) noise = std::max(noise.value_or(0), highest / lowest - 1);
    }
    return noise;
}

std::optional<size_t> samplesToDecide(
    double ratio, double low, double high, double threshold, size_t current, double maxFactor) {
    if (!(ratio > 0) || !(low > 0) || !(high > 0) || current == 0) return std::nullopt;
    const double center = std::log(ratio), edge = std::log1p(threshold);
    const double halfWidth = std::max(center - std::log(low), std::log(high) - center);
    // The interval must shrink until it clears the band's edge nearer to its centre.
    const double room = std::abs(std::abs(center) - edge);
    if (halfWidth <= room) return current; // decided already
    if (!(room > 0)) return std::nullopt; // exactly on the edge: no amount of data decides
    const double factor = (halfWidth / room) * (halfWidth / room);
    if (factor > maxFactor) return std::nullopt;
    return size_t(std::ceil(double(current) * factor));
}

Comparison compareRuns(const Runs& numerator, const Runs& denominator, const ComparisonOptions& options) {
    Comparison c;
    const std::vector<double> top = pooled(numerator), bottom = pooled(denominator);
    c.numerator = describe(top);
    c.denominator = describe(bottom);
    const auto countRuns = [](const Runs& runs) {
        return size_t(std::count_if(runs.begin(), runs.end(), [](const auto& r) { return !r.empty(); }));
    };
    c.runs = std::min(countRuns(numerator), countRuns(denominator));
    c.noise = runToRunNoise({ &numerator, &denominator }, options.bootstrap.center);
    c.threshold = std::max(options.minThreshold, c.noise.value_or(0));
    c.ratio = bootstrapRatio(numerator, denominator, options.bootstrap);
    c.test = mannWhitney(top, bottom);
    if (!c.ratio.valid) {
        c.why = "a side has no step times";
        return c;
    }
    const double upperEdge = 1 + c.threshold, lowerEdge = 1 / upperEdge;
    const bool significant = c.test.pValue < options.alpha;
    if (c.ratio.low > upperEdge && significant)
        c.change = Change::Higher;
    else if (c.ratio.high < lowerEdge && significant)
        c.change = Change::Lower;
    else if (c.ratio.low >= lowerEdge && c.ratio.high <= upperEdge)
        c.change = Change::Same;
    else {
        c.change = Change::Inconclusive;
        c.why = c.ratio.low > upperEdge || c.ratio.high < lowerEdge
            ? "the interval clears the threshold but the rank test does not (p >= 0.05)"
            : "the interval straddles the threshold";
        c.runsToDecide = samplesToDecide(c.ratio.ratio, c.ratio.low, c.ratio.high, c.threshold, c.runs);
    }
    return c;
}

} // namespace tuneup::stats
