#pragma once
// `tuneup compare` (docs/compare.md): did NEW get slower or faster than BASE, by how much, how sure,
// and where it moved. The verdict is on the time per step, through the statistics `tuneup bench`
// shares (stats/verdict.h): the ratio of median step times NEW / BASE with a bootstrap 95% interval,
// against a threshold that is the larger of 2% and the noise measured in the runs themselves (the
// spread of the medians of blocks of consecutive steps), or the user's --max-regression.
//   regressed     the interval lies above 1 + threshold (and the rank test agrees, p < 0.05)
//   improved      the interval lies below 1 / (1 + threshold) (idem)
//   same          the interval lies inside the band
//   inconclusive  it straddles an edge: about how many steps per run would decide is said
//   (both sides holding the very same step times — a run against itself — are the same, by definition)
//   incomparable  the environment changed (GPU, driver, CUDA, ...) and --allow-env-change was not given
// Then where it moved: the breakdown per step side by side, kernels by class and by name (per call
// and per step), findings that appeared or were resolved, settings the program changed.

#include "compare/run_profile.h"
#include "stats/verdict.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tuneup::analysis {

enum class Verdict { Regressed, Improved, Same, Inconclusive, Incomparable };
std::string_view verdictName(Verdict v); // "regressed"

struct CompareOptions {
    std::optional<double> maxRegression; // --max-regression as a fraction (0.05); default max(2%, noise)
    bool allowEnvChange = false; // --allow-env-change: a changed environment is reported, not a verdict
    stats::BootstrapOptions bootstrap; // medians, 4000 resamples, a fixed seed
};

// Fewer measured steps than this on a side are said plainly in every report.
inline constexpr size_t kFewSteps = 5;
// Fewer than this on a side and no verdict but inconclusive is given.
inline constexpr size_t kMinSteps = 3;
// The kernels kept by the comparison: the largest movers per step.
inline constexpr size_t kMaxKernelDeltas = 100;

struct StepTimeComparison {
    double baseMs = 0, newMs = 0; // median measured step
    double ratio = 0, low = 0, high = 0; // NEW / BASE and its interval; 0 when it could not be computed
    double confidence = 0.95;
    double pValue = 1; // Mann-Whitney, two-sided
    double threshold = 0; // the band's half-width, as a fraction
    std::string thresholdFrom; // "2% floor", "run noise", "--max-regression"
    std::optional<double> noise; // measured in the runs (block medians)
    size_t baseSteps = 0, newSteps = 0; // measured
    std::optional<size_t> stepsToDecide; // inconclusive: measured steps per run that would decide
    std::string why; // inconclusive: why
    bool identical = false; // both sides hold the very same step times: the same by definition
};

struct BreakdownDelta {
    std::string key, label; // "idle-data", "Idle: waiting for data"
    int64_t baseNs = 0, newNs = 0; // per step
};

struct KernelClassDelta {
    KernelClass kernelClass = KernelClass::Other;
    int64_t baseNs = 0, newNs = 0; // per step
    double baseCalls = 0, newCalls = 0; // per step
};

enum class KernelChange { Slower, Faster, Same, Added, Removed };
std::string_view kernelChangeName(KernelChange c); // "slower"

struct KernelDelta {
    std::string name;
    KernelClass kernelClass = KernelClass::Other;
    int64_t baseCalls = 0, newCalls = 0;
    double basePerCallUs = 0, newPerCallUs = 0; // mean; 0 on the side without it
    std::optional<double> perCallRatio; // NEW / BASE; none when a side has no call
    double basePerStepUs = 0, newPerStepUs = 0; // its time per step
    double baseCallsPerStep = 0, newCallsPerStep = 0;
    KernelChange change = KernelChange::Same; // per call, against the step verdict's threshold
    std::optional<double> pValue; // Mann-Whitney over the calls' durations, when the events were read
};

struct SettingChange {
    std::string key, base, now; // "" on a side that does not record it
};

struct CompareResult {
    Verdict verdict = Verdict::Inconclusive;
    // The step-time verdict alone, as if the environment had not changed (what --allow-env-change gives).
    Verdict stepVerdict = Verdict::Inconclusive;
    StepTimeComparison stepTime;
    bool breakdownRecorded = false; // a side had GPU work: the breakdown means something
    std::vector<BreakdownDelta> breakdown; // per step, in kBreakdownParts order
    std::vector<KernelClassDelta> kernelClasses; // by |delta per step|, largest first
    std::vector<KernelDelta> kernels; // top movers by |delta per step|, at most kMaxKernelDeltas
    size_t kernelNames = 0; // distinct kernel names on either side
    bool kernelsWholeTrace = false; // a side's kernels came from summaries (whole trace)
    std::vector<FindingRef> appeared, resolved, persisting;
    Environment baseEnvironment, newEnvironment;
    EnvironmentDiff environment;
    std::vector<SettingChange> settings; // recorded settings that differ
    // What moved the step time, largest first, in words: "dataloader-stall resolved (...)".
    std::vector<std::string> causes;
    std::vector<std::string> notes; // few steps, warm-up left out, unaligned windows, ...
    const RunProfile* base = nullptr; // the sides, for the reports (they outlive the result)
    const RunProfile* now = nullptr;
};

CompareResult compareProfiles(const RunProfile& base, const RunProfile& now, const CompareOptions& options = {});

// The run-to-run noise of one recording: the largest ratio of the medians of its blocks of consecutive
// steps (four blocks of at least kMinSteps), less 1; none with fewer than 2 * kMinSteps steps.
std::optional<double> blockNoise(const std::vector<double>& stepMs);

} // namespace tuneup::analysis
