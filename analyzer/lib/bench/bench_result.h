#pragma once
// What `tuneup bench` measured (issue 14; docs/bench.md): for each candidate — an in-process fix, or
// a command the user gives — the speed-up over the baseline's runs with its interval, p-value and
// verdict, the step times of both sides, every run, the warm-up and its one-time cost, the finding it
// answers and the loss delta of a precision what-if. Written as versioned JSON (bench_json.cpp), read
// back by `tuneup advise --bench` to show measured gains beside the estimates, and as a table.

#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tuneup::analysis {

// Version of the bench JSON's layout (docs/bench.md); bumped on incompatible changes.
inline constexpr int kBenchSchemaVersion = 1;

struct BenchStepStats {
    double meanMs = 0; // the 10%-trimmed mean (a tenth dropped each side): what the speed-up compares
    double medianMs = 0, p10Ms = 0, p90Ms = 0;
    size_t n = 0; // steps measured, over all runs used
};

struct BenchRun {
    std::string arm; // "baseline" or "candidate"
    int order = 0; // its place in the whole bench, from 1: runs interleave (ABBA...)
    int exitCode = 0;
    size_t steps = 0; // steps the recording holds (the last, cut by the stop, left out)
    size_t measured = 0; // of them, after the warm-up
    double stepMs = 0; // the 10%-trimmed mean of its measured steps
    double seconds = 0; // wall time of the run
    bool used = false; // in the statistics
    std::string note; // why not used, or what happened ("stopped after 26 optimizer steps")
};

// What became of one fix in the program: applied, or not and why.
struct BenchFixOutcome {
    std::string fix; // "dataloader-workers"
    std::string status; // "applied", "not-applied", "unused" (the program never reached it)
    std::string detail; // "DataLoader(num_workers=4)", "no GPU: ..."
};

enum class BenchVerdict { Faster, Slower, Same, Inconclusive, Failed, NotApplied };
std::string_view benchVerdictName(BenchVerdict v); // "faster", "not-applied"
std::optional<BenchVerdict> parseBenchVerdict(std::string_view name);

struct BenchCandidate {
    std::string name; // "anomaly-off", "dataloader-workers=4,persistent-workers", or the command
    std::string kind; // "fix" or "command"
    std::vector<std::string> fixes; // kind fix: the fixes applied together
    std::vector<std::string> command; // kind command: the candidate command
    BenchVerdict verdict = BenchVerdict::Inconclusive;
    std::string why; // one sentence for inconclusive, failed and not-applied; else empty
    // baseline / candidate time per step (10%-trimmed means of the measured steps; > 1: the candidate is
    // faster)
    std::optional<double> speedup;
    std::optional<std::pair<double, double>> speedupCi; // bootstrap 95% interval
    std::optional<double> pValue; // Mann-Whitney U, two-sided, over the measured steps
    double threshold = 0; // the verdict's band: max(2%, run-to-run noise)
    std::optional<double> noise; // measured run-to-run noise
    std::optional<size_t> runsToDecide; // inconclusive: about how many runs a side would decide
    BenchStepStats baselineStepMs, candidateStepMs;
    std::vector<BenchRun> runs; // the baseline's and this candidate's, in the order they ran
    size_t warmupSteps = 0; // the candidate's, detected (at least --warmup)
    std::optional<double> oneTimeCostMs; // its warm-up's extra cost beyond the baseline's
    std::optional<double> breakEvenSteps; // steps after which the one-time cost is paid back
    std::optional<std::string> finding; // the rule id whose fix this is, when the baseline raised it
    std::optional<double> estimatedSpeedup; // from that finding's estimated gain: 1 / (1 - step share)
    std::optional<double> lossDelta; // precision what-ifs: candidate's mean loss - baseline's
    std::vector<BenchFixOutcome> applied;
};

// A finding of the baseline that no candidate measured, and why (a fix that needs code).
struct BenchSkippedFinding {
    std::string rule;
    std::string why;
};

struct BenchResult {
    int schemaVersion = kBenchSchemaVersion;
    std::string toolVersion;
    std::vector<std::string> command; // the baseline
    std::vector<std::pair<std::string, std::string>> environment; // host, cpus, os, python, torch, device...
    std::string mode; // "automatic", "fixes", "candidate"
    size_t steps = 0, warmup = 0, runs = 0; // as asked (--steps, --warmup, --runs)
    double maxTimeSeconds = 0;
    double elapsedSeconds = 0;
    std::vector<BenchCandidate> candidates;
    std::vector<BenchSkippedFinding> notBenched;
    std::vector<std::string> notes;

    const BenchCandidate* forFinding(std::string_view rule) const; // the first candidate answering it
};

class BenchFileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

void writeBenchJson(std::ostream& out, const BenchResult& result);
// Throws BenchFileError saying which file, where and what is wrong.
BenchResult readBenchJson(const std::string& path);

// For people: the table (a verdict per candidate, speed-up with its interval, step times, the estimate
// beside), then a line per candidate for what needs saying. `color`: ANSI colours for a terminal.
void writeBenchText(std::ostream& out, const BenchResult& result, bool color);
void writeBenchMarkdown(std::ostream& out, const BenchResult& result);

} // namespace tuneup::analysis
