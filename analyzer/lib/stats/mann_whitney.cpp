#include "stats/mann_whitney.h"

#include <algorithm>
#include <cmath>

namespace tuneup::stats {

namespace {

struct TieGroup {
    size_t size = 0; // values in the group
    size_t inFirst = 0; // of them from the first sample
    size_t twiceMidRank = 0; // mid-ranks are multiples of 1/2
};

// The pooled values sorted into groups of equal values, with their mid-ranks.
std::vector<TieGroup> tieGroups(const std::vector<double>& x, const std::vector<double>& y) {
    struct Value {
        double v;
        bool first;
    };
    std::vector<Value> all;
    all.reserve(x.size() + y.size());
    for (double v : x)
        all.push_back({ v, true });
    for (double v : y)
        all.push_back({ v, false });
    std::sort(all.begin(), all.end(), [](const Value& a, const Value& b) { return a.v < b.v; });
    std::vector<TieGroup> groups;
    for (size_t i = 0; i < all.size();) {
        size_t j = i;
        TieGroup g;
        while (j < all.size() && all[j].v == all[i].v)
            g.inFirst += all[j++].first ? 1 : 0;
        g.size = j - i;
        g.twiceMidRank = (i + 1) + j; // ranks i+1 .. j
        groups.push_back(g);
        i = j;
    }
    return groups;
}

// Exact permutation p-value: ways[k][w] counts the splits that put k values of the groups seen so far
// in the first sample with twice their rank sum w; choosing c of a group of t is C(t, c) ways. Doubles:
// the counts exceed 2^64 from about 35 + 35 values, and only their ratios matter.
double exactPValue(const std::vector<TieGroup>& groups, size_t n1, size_t twiceObservedRankSum) {
    size_t maxW = 0;
    for (const TieGroup& g : groups)
        maxW += g.twiceMidRank * g.size;
    const size_t width = maxW + 1;
    std::vector<double> ways(1, 1.0), next; // nothing seen: one way, k = 0, w = 0
    ways.resize((n1 + 1) * width, 0.0);
    size_t seen = 0;
    for (const TieGroup& g : groups) {
        next.assign(ways.size(), 0.0);
        double choose = 1; // C(g.size, c)
        for (size_t c = 0; c <= g.size && c <= n1; ++c) {
            if (c > 0) choose = choose * double(g.size - c + 1) / double(c);
            const size_t shift = c * g.twiceMidRank;
            for (size_t k = 0; k + c <= n1 && k <= seen; ++k)
                for (size_t w = 0; w + shift < width; ++w)
                    if (const double n = ways[k * width + w]; n != 0) next[(k + c) * width + w + shift] += n * choose;
        }
        ways.swap(next);
        seen += g.size;
    }
    // Twice the mean rank sum: n1 (N + 1).
    const double twiceMean = double(n1) * double(seen + 1);
    const double observed = std::abs(double(twiceObservedRankSum) - twiceMean);
    double extreme = 0, total = 0;
    for (size_t w = 0; w < width; ++w) {
        const double n = ways[n1 * width + w];
        total += n;
        if (std::abs(double(w) - twiceMean) >= observed - 0.25) extreme += n; // half-units: exact comparisons
    }
    return total > 0 ? std::min(1.0, extreme / total) : 1.0;
}

} // namespace

MannWhitney mannWhitney(const std::vector<double>& x, const std::vector<double>& y, MannWhitneyMethod method) {
    MannWhitney result;
    result.n1 = x.size();
    result.n2 = y.size();
    if (x.empty() || y.empty()) return result;

    const std::vector<TieGroup> groups = tieGroups(x, y);
    size_t twiceRankSum = 0;
    double tieTerm = 0;
    for (const TieGroup& g : groups) {
        twiceRankSum += g.inFirst * g.twiceMidRank;
        const double t = double(g.size);
        tieTerm += t * t * t - t;
    }
    const double n1 = double(x.size()), n2 = double(y.size()), n = n1 + n2;
    result.u = double(twiceRankSum) / 2 - n1 * (n1 + 1) / 2;
    if (groups.size() == 1) return result; // every value tied: no evidence of a difference

    const bool exact = method == MannWhitneyMethod::Exact
        || (method == MannWhitneyMethod::Auto && x.size() + y.size() <= kMannWhitneyExactMax);
    if (exact) {
        result.pValue = exactPValue(groups, x.size(), twiceRankSum);
        result.exact = true;
        return result;
    }
    const double mean = n1 * n2 / 2;
    const double variance = n1 * n2 / 12 * ((n + 1) - tieTerm / (n * (n - 1)));
    const double deviation = std::max(0.0, std::abs(result.u - mean) - 0.5); // continuity correction
    result.z = (result.u >= mean ? 1 : -1) * deviation / std::sqrt(variance);
    result.pValue = std::min(1.0, std::erfc(std::abs(result.z) / std::sqrt(2.0)));
    return result;
}

} // namespace tuneup::stats
