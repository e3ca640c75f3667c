#pragma once
// `tuneup compare --calibrate RUN1 RUN2 ...`: an A/A test of the user's machine (a CI runner). The runs
// are recordings of the same program with no change between them; every pair is compared as `tuneup
// compare` would, and the result says how far apart runs of the same thing land (the run-to-run noise),
// how many pairs the default threshold would have called a change (false alarms), and the smallest
// --max-regression under which every pair reads "same": the threshold to give the CI gate.

#include "compare/comparison.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tuneup::analysis {

struct CalibrationRun {
    std::string label; // the input as given
    size_t steps = 0; // measured
    double medianMs = 0;
    std::optional<double> blockNoise; // within the run (comparison.h blockNoise)
};

struct CalibrationPair {
    size_t base = 0, now = 0; // indexes into Calibration::runs
    double ratio = 0, low = 0, high = 0; // NEW / BASE median step time and its 95% interval
    Verdict verdict = Verdict::Inconclusive; // at the default threshold
    double threshold = 0; // that default threshold: max(2%, the pair's block noise)
    double sameFrom = 0; // the smallest threshold under which this pair reads "same"
};

struct Calibration {
    std::vector<CalibrationRun> runs;
    std::vector<CalibrationPair> pairs; // every pair i < j, the earlier run as BASE
    std::optional<double> runToRunNoise; // largest ratio of two runs' medians, less 1
    size_t falseAlarms = 0; // pairs the default threshold called regressed or improved
    double suggested = 0; // --max-regression: max(2%, every pair's sameFrom), rounded up to a whole percent
    std::vector<std::string> notes; // runs with few steps, or an environment that differs
};

// At least two runs with steps. Their environments should be one: a difference is noted.
Calibration calibrate(const std::vector<RunProfile>& runs, const CompareOptions& options = {});

void writeCalibrationText(std::ostream& out, const Calibration& c);
void writeCalibrationJson(std::ostream& out, const Calibration& c, const std::string& toolVersion);

} // namespace tuneup::analysis
