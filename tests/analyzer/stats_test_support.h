#pragma once
// Samples for the statistics tests: step times of runs drawn from known distributions with fixed
// seeds (stats/random.h gives the same numbers everywhere), so every expected value is pinned.

#include "stats/bootstrap.h"
#include "stats/random.h"

#include <cmath>

namespace tuneup::stats::testing {

struct RunShape {
    size_t runs = 4, steps = 20;
    double medianMs = 100;
    double runNoise = 0.03; // sd of the log of a run's level: run-to-run differences
    double stepNoise = 0.05; // sd of the log of a step around its run's level
    double outlierShare = 0; // steps made this many times slower (another process took the core)
    double outlierFactor = 3;
};

// Log-normal step times: median `medianMs` over runs and steps.
inline Runs drawRuns(Random& random, const RunShape& shape) {
    Runs runs(shape.runs);
    for (auto& run : runs) {
        const double level = shape.medianMs * std::exp(shape.runNoise * random.normal());
        for (size_t s = 0; s < shape.steps; ++s) {
            double t = level * std::exp(shape.stepNoise * random.normal());
            if (random.uniform() < shape.outlierShare) t *= shape.outlierFactor;
            run.push_back(t);
        }
    }
    return runs;
}

} // namespace tuneup::stats::testing
