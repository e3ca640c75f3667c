#pragma once
// From the step times of a benchmark's runs to a candidate's measurement (docs/bench.md#method): the
// steps of each run's recording, the warm-up each run shows, the measured steps after it, and through
// the statistics bench and compare share (stats/verdict.h) the speed-up, its interval, the verdict, the
// warm-up's one-time cost with its break-even, and the loss delta of a precision what-if.

#include "advise/rank_analysis.h"
#include "bench/bench_result.h"
#include "stats/verdict.h"

#include <string>
#include <vector>

namespace tuneup::analysis {

// The step times (ms) of one recorded run's main process, in order. The last step is left out when its
// end is no step boundary: steps found from the optimizer's ranges run from one call to the next, so the
// last one runs to the end of the recording, and a run that bench stopped is cut in its last step.
struct RunSteps {
    std::vector<double> stepMs;
    std::string source; // how the steps were found ("optimizer ranges ...")
    bool lastDropped = false;
};
RunSteps runSteps(const RankAnalysis& rank, bool stoppedByBench);

// Warm-up: the leading steps slower than any step of the run's second half, and than its steady state
// (the median of that half) by more than max(10%, four robust standard deviations), one faster step in
// between allowed (autotuning, compilation, allocator and cache warm-up); at most the first half of the
// run. On a loaded machine a step anywhere may be slow: only a step slower than all the later ones
// tells a warm-up from that noise.
struct Warmup {
    size_t steps = 0;
    double steadyMs = 0;
    double extraMs = 0; // what the warm-up steps took beyond steadyMs each
};
Warmup detectWarmup(const std::vector<double>& stepMs);

// A run whose recording can be used: its steps and, when the program reported them, its losses (one per
// backward on a scalar).
struct ArmRun {
    std::vector<double> stepMs;
    std::vector<double> losses;
};

struct MeasureOptions {
    size_t warmup = 5; // --warmup: steps never measured
    size_t steps = 20; // --steps: steps measured per run after the warm-up
    bool withLoss = false; // compare the losses (precision what-ifs)
    // The centre compared is the 10%-trimmed mean (stats/descriptive.h): the steps of a DataLoader
    // whose workers barely keep up alternate between two times, and their median is either by chance.
    stats::ComparisonOptions comparison = [] {
        stats::ComparisonOptions o;
        o.bootstrap.center = stats::Center::TrimmedMean;
        return o;
    }();
};

// What measureCandidate made of each side's runs, parallel to the runs given.
struct ArmMeasure {
    size_t warmup = 0; // detected (median over runs)
    size_t firstMeasured = 0; // max(--warmup, detected): the first step measured
    std::vector<size_t> measured; // steps measured per run
    std::vector<double> centerMs; // their centre (10%-trimmed mean) per run
};

// Fills the candidate's statistics and verdict from the usable runs of both sides (`out` keeps its name,
// kind, fixes, runs and finding). Without runs on a side the verdict is Failed and `why` says which.
void measureCandidate(const std::vector<ArmRun>& baseline, const std::vector<ArmRun>& candidate,
    const MeasureOptions& options, BenchCandidate& out, ArmMeasure* baselineMeasure = nullptr,
    ArmMeasure* candidateMeasure = nullptr);

} // namespace tuneup::analysis
