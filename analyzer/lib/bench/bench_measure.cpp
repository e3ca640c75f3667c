#include "bench/bench_measure.h"

#include "stats/descriptive.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tuneup::analysis {

namespace {

constexpr double kMinWarmupExcess = 0.10; // a warm-up step is at least 10% slower than steady state
constexpr double kMadScale = 1.4826; // MAD to a normal's standard deviation
constexpr double kMinOneTimeCostSteps = 2; // a one-time cost is claimed from two steps' worth on

std::string ratio(double x) {
    char text[32];
    snprintf(text, sizeof text, x >= 10 ? "%.1fx" : "%.2fx", x);
    return text;
}

std::string percent(double share) {
    char text[32];
    snprintf(text, sizeof text, share >= 0.1 ? "%.0f%%" : "%.1f%%", share * 100);
    return text;
}

// The steps each run measures, from `first` on, at most `steps` of them.
std::vector<std::vector<double>> measuredSteps(const std::vector<ArmRun>& runs, size_t first, size_t steps) {
    std::vector<std::vector<double>> out;
    for (const ArmRun& run : runs) {
        std::vector<double> kept;
        for (size_t i = first; i < run.stepMs.size() && kept.size() < steps; ++i)
            kept.push_back(run.stepMs[i]);
        out.push_back(std::move(kept));
    }
    return out;
}

ArmMeasure measureArm(const std::vector<ArmRun>& runs, const MeasureOptions& options,
    std::vector<std::vector<double>>& measured, double& warmupExtraMs) {
    ArmMeasure arm;
    std::vector<double> detected, extras;
    for (const ArmRun& run : runs) {
        const Warmup w = detectWarmup(run.stepMs);
        detected.push_back(double(w.steps));
        extras.push_back(w.extraMs);
    }
    arm.warmup = detected.empty() ? 0 : size_t(std::ceil(stats::median(detected)));
    warmupExtraMs = extras.empty() ? 0 : stats::median(extras);
    arm.firstMeasured = std::max(options.warmup, arm.warmup);
    measured = measuredSteps(runs, arm.firstMeasured, options.steps);
    for (const auto& m : measured) {
        arm.measured.push_back(m.size());
        arm.centerMs.push_back(m.empty() ? 0 : stats::center(m, options.comparison.bootstrap.center));
    }
    return arm;
}

// Mean loss over a run's measured steps (one loss per step when the program made one backward per
// step; else its last `count` losses), then over the runs.
std::optional<double> meanLoss(const std::vector<ArmRun>& runs, size_t first, const std::vector<size_t>& measured) {
    double sum = 0;
    size_t n = 0;
    for (size_t r = 0; r < runs.size(); ++r) {
        const std::vector<double>& losses = runs[r].losses;
        const size_t count = measured[r];
        if (losses.empty() || count == 0) continue;
        const size_t begin = first + count <= losses.size() ? first : losses.size() - std::min(losses.size(), count);
        double runSum = 0;
        size_t runN = 0;
        for (size_t i = begin; i < losses.size() && runN < count; ++i)
            if (std::isfinite(losses[i])) runSum += losses[i], ++runN;
        if (runN) sum += runSum / double(runN), ++n;
    }
    return n ? std::optional<double>(sum / double(n)) : std::nullopt;
}

BenchStepStats stepStats(const stats::Distribution& d) {
    return { d.trimmedMean, d.median, d.p10, d.p90, d.n };
}

} // namespace

RunSteps runSteps(const RankAnalysis& rank, bool stoppedByBench) {
    RunSteps out;
    const StepDetection& detection = rank.steps.detection;
    out.source = std::string(stepSourceName(detection.source));
    size_t count = detection.steps.size();
    if (count > 0 && (stoppedByBench || lastStepRunsToTheEnd(detection.source))) {
        --count;
        out.lastDropped = true;
    }
    for (size_t i = 0; i < count; ++i)
        out.stepMs.push_back(double(detection.steps[i].durationNs()) / 1e6);
    return out;
}

Warmup detectWarmup(const std::vector<double>& stepMs) {
    Warmup w;
    const size_t n = stepMs.size();
    if (n < 4) return w; // too few to tell a warm-up from the steady state
    const std::vector<double> secondHalf(stepMs.begin() + ptrdiff_t(n / 2), stepMs.end());
    w.steadyMs = stats::median(secondHalf);
    std::vector<double> deviations;
    deviations.reserve(secondHalf.size());
    for (double t : secondHalf)
        deviations.push_back(std::abs(t - w.steadyMs));
    const double spread = kMadScale * stats::median(deviations);
    const double slowestLater = *std::max_element(secondHalf.begin(), secondHalf.end());
    const double limit = std::max(w.steadyMs + std::max(kMinWarmupExcess * w.steadyMs, 4 * spread), slowestLater);
    // The leading stretch of slow steps; one step under the limit between two slow ones is still warm-up.
    size_t end = 0;
    for (size_t i = 0; i < n / 2; ++i) {
        if (stepMs[i] > limit)
            end = i + 1;
        else if (i > end) // a second step under the limit: the warm-up is over
            break;
    }
    w.steps = end;
    for (size_t i = 0; i < end; ++i)
        w.extraMs += std::max(0.0, stepMs[i] - w.steadyMs);
    return w;
}

void measureCandidate(const std::vector<ArmRun>& baseline, const std::vector<ArmRun>& candidate,
    const MeasureOptions& options, BenchCandidate& out, ArmMeasure* baselineMeasure, ArmMeasure* candidateMeasure) {
    std::vector<std::vector<double>> base, cand;
    double baseExtra = 0, candExtra = 0;
    const ArmMeasure b = measureArm(baseline, options, base, baseExtra);
    const ArmMeasure c = measureArm(candidate, options, cand, candExtra);
    if (baselineMeasure) *baselineMeasure = b;
    if (candidateMeasure) *candidateMeasure = c;
    out.warmupSteps = c.warmup;

    const bool baseSteps = std::any_of(base.begin(), base.end(), [](const auto& r) { return !r.empty(); });
    const bool candSteps = std::any_of(cand.begin(), cand.end(), [](const auto& r) { return !r.empty(); });
    if (!baseSteps || !candSteps) {
        out.verdict = BenchVerdict::Failed;
        out.why = !baseSteps ? "no baseline run left steps to measure after the warm-up"
                             : "no run of the candidate left steps to measure after the warm-up";
        return;
    }
    // Speed-up = baseline / candidate: the baseline's runs are the numerator.
    const stats::Comparison cmp = stats::compareRuns(base, cand, options.comparison);
    out.baselineStepMs = stepStats(cmp.numerator);
    out.candidateStepMs = stepStats(cmp.denominator);
    out.threshold = cmp.threshold;
    out.noise = cmp.noise;
    out.pValue = cmp.test.pValue;
    if (cmp.ratio.valid) {
        out.speedup = cmp.ratio.ratio;
        out.speedupCi = std::make_pair(cmp.ratio.low, cmp.ratio.high);
    }
    switch (cmp.change) {
    case stats::Change::Higher:
        out.verdict = BenchVerdict::Faster;
        break;
    case stats::Change::Lower:
        out.verdict = BenchVerdict::Slower;
        break;
    case stats::Change::Same:
        out.verdict = BenchVerdict::Same;
        // Same within a wide band says little: say how wide, and that it is this machine's noise.
        if (cmp.noise && *cmp.noise > options.comparison.minThreshold)
            out.why = "the interval " + ratio(cmp.ratio.low) + "-" + ratio(cmp.ratio.high) + " lies within "
                + percent(cmp.threshold) + ", how far apart the runs of one command landed here";
        break;
    case stats::Change::Inconclusive:
        out.verdict = BenchVerdict::Inconclusive;
        out.runsToDecide = cmp.runsToDecide;
        if (cmp.ratio.valid) {
            out.why = "the interval " + ratio(cmp.ratio.low) + "-" + ratio(cmp.ratio.high) + " "
                + (cmp.ratio.low > 1 + cmp.threshold || cmp.ratio.high < 1 / (1 + cmp.threshold)
                        ? "clears the threshold of " + percent(cmp.threshold) + " but the rank test does not"
                        : "straddles the threshold of " + percent(cmp.threshold));
            out.why += cmp.runsToDecide ? "; about " + std::to_string(*cmp.runsToDecide) + " runs a side would decide"
                                        : "; the difference is about as large as the threshold: more runs will "
                                          "hardly decide it";
        } else
            out.why = std::string(cmp.why);
        break;
    }

    // The candidate's warm-up beyond the baseline's (autotuning, compilation) is its one-time cost; it
    // is paid back by the time saved per step. Less than two of its steps is within what a loaded
    // machine does to any step: not claimed.
    double cost = std::max(0.0, candExtra - baseExtra);
    if (cost < kMinOneTimeCostSteps * out.candidateStepMs.meanMs) cost = 0;
    out.oneTimeCostMs = cost;
    if (out.speedup && *out.speedup > 1 && out.verdict == BenchVerdict::Faster) {
        const double saved = out.baselineStepMs.meanMs - out.candidateStepMs.meanMs;
        out.breakEvenSteps = cost > 0 && saved > 0 ? cost / saved : 0;
    }
    if (options.withLoss) {
        const auto baseLoss = meanLoss(baseline, b.firstMeasured, b.measured);
        const auto candLoss = meanLoss(candidate, c.firstMeasured, c.measured);
        if (baseLoss && candLoss) out.lossDelta = *candLoss - *baseLoss;
    }
}

} // namespace tuneup::analysis
