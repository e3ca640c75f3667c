#pragma once
// Two runs side by side: their step times (median, mean, spread), the median step's breakdown, and
// the kernels whose time per step changed. Kernel time is compared per step so that runs of different
// lengths compare fairly (over the whole trace when either run has no steps). No Qt.

#include "app/session.h"

#include <string>
#include <vector>

namespace tuneup::gui {

struct StepStats {
    size_t count = 0;
    int64_t medianNs = 0, meanNs = 0, p10Ns = 0, p90Ns = 0, minNs = 0, maxNs = 0;
    analysis::StepBreakdown median; // the median step's breakdown
};
StepStats stepStats(const analysis::StepAnalysis* steps);

struct KernelDelta {
    std::string name, shortName;
    analysis::KernelClass kernelClass = analysis::KernelClass::Other;
    int64_t aNs = 0, bNs = 0; // per step (or in all when not per step)
    int64_t aCount = 0, bCount = 0; // per step likewise (rounded)
    int64_t deltaNs() const { return bNs - aNs; }
    double ratio() const { return aNs > 0 ? double(bNs) / double(aNs) : 0.0; } // 0 when new in b
};

struct Comparison {
    std::string aLabel, bLabel;
    StepStats a, b;
    bool perStep = false; // kernel times per step (both runs have steps), else over the whole trace
    std::vector<KernelDelta> kernels; // largest |delta| first
};

Comparison compareSessions(const Session& a, const Session& b);

} // namespace tuneup::gui
