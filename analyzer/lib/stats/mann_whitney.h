#pragma once
// The Mann-Whitney U test (Wilcoxon rank-sum): do two samples come from the same distribution, or does
// one tend to be larger? Part of the statistics `tuneup bench` and `tuneup compare` share
// (descriptive.h). It needs no normality, and a few very slow steps (a page fault, another process)
// move it little.
//
// Two-sided p-value: the share of all ways of splitting the pooled values into two samples of these
// sizes whose U lies at least as far from its mean as the observed one. Exact — counted over the tie
// groups, so heavy ties (a coarse clock) are exact too — up to kMannWhitneyExactMax values; beyond, the
// normal approximation with the tie-corrected variance and a continuity correction.

#include <cstddef>
#include <vector>

namespace tuneup::stats {

struct MannWhitney {
    double u = 0; // U of the first sample: the number of pairs (x, y) with x > y, ties counting 1/2
    double z = 0; // the normal score (0 when exact)
    double pValue = 1; // two-sided
    bool exact = false;
    size_t n1 = 0, n2 = 0;
};

// Samples up to this total size get the exact p-value.
inline constexpr size_t kMannWhitneyExactMax = 60;

enum class MannWhitneyMethod { Auto, Exact, Normal };

// p-value 1 when a sample is empty or every value is tied. Exact costs about n1 * n^3 / 2 operations:
// Auto keeps it to small samples.
MannWhitney mannWhitney(
    const std::vector<double>& x, const std::vector<double>& y, MannWhitneyMethod method = MannWhitneyMethod::Auto);

} // namespace tuneup::stats
