#include "models/compare_data.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <unordered_map>

namespace tuneup::gui {

using namespace analysis;

StepStats stepStats(const StepAnalysis* steps) {
    StepStats s;
    if (!steps || steps->detection.steps.empty()) return s;
    std::vector<int64_t> d;
    for (const Step& step : steps->detection.steps)
        d.push_back(step.durationNs());
    std::sort(d.begin(), d.end());
    s.count = d.size();
    auto at = [&d](double q) { return d[std::min(d.size() - 1, size_t(std::lround(q * double(d.size() - 1))))]; };
    s.medianNs = steps->medianStepNs() > 0 ? steps->medianStepNs() : at(0.5);
    s.meanNs = std::accumulate(d.begin(), d.end(), int64_t(0)) / int64_t(d.size());
    s.p10Ns = at(0.1);
    s.p90Ns = at(0.9);
    s.minNs = d.front();
    s.maxNs = d.back();
    s.median = steps->median;
    return s;
}

Comparison compareSessions(const Session& a, const Session& b) {
    Comparison c;
    c.aLabel = a.title();
    c.bLabel = b.title();
    c.a = stepStats(a.steps());
    c.b = stepStats(b.steps());
    c.perStep = c.a.count > 0 && c.b.count > 0;
    // Steps over the job: a job of 8 ranks ran 8 × its steps' kernels.
    auto steps = [](const Session& s) {
        int64_t n = 0;
        for (const RankSummary& r : s.report().ranks)
            n += int64_t(r.steps.detection.steps.size());
        return std::max<int64_t>(n, 1);
    };
    const int64_t aSteps = c.perStep ? steps(a) : 1, bSteps = c.perStep ? steps(b) : 1;

    std::unordered_map<std::string, size_t> index;
    auto row = [&](const KernelRow& k) -> KernelDelta& {
        auto [it, added] = index.try_emplace(k.name, c.kernels.size());
        if (added) {
            KernelDelta d;
            d.name = k.name;
            d.shortName = k.shortName;
            d.kernelClass = k.kernelClass;
            c.kernels.push_back(std::move(d));
        }
        return c.kernels[it->second];
    };
    for (const KernelRow& k : a.kernels) {
        KernelDelta& d = row(k);
        d.aNs = k.totalNs / aSteps;
        d.aCount = (k.count + aSteps / 2) / aSteps;
    }
    for (const KernelRow& k : b.kernels) {
        KernelDelta& d = row(k);
        d.bNs = k.totalNs / bSteps;
        d.bCount = (k.count + bSteps / 2) / bSteps;
    }
    std::stable_sort(c.kernels.begin(), c.kernels.end(),
        [](const KernelDelta& x, const KernelDelta& y) { return std::llabs(x.deltaNs()) > std::llabs(y.deltaNs()); });
    return c;
}

} // namespace tuneup::gui
