// `tuneup compare BASE NEW`: did NEW get slower than BASE, how sure, and where it moved; a CI gate
// through its exit code (docs/compare.md). Both sides are opened through the job core (openJob), the
// comparison is analyzer/lib/compare's.

#include "all_rules.h"
#include "compare/calibration.h"
#include "compare/compare_jobs.h"
#include "compare/compare_report.h"
#include "compare/history.h"
#include "job/job.h"
#include "job_progress.h"
#include "output_file.h"
#include "subcommand.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <unistd.h>

namespace tuneup::cli {

using namespace analysis;

namespace {

// compare's own exit codes (docs/compare.md#exit-codes): 1 is a regression here, not a bad file.
constexpr int kNoRegression = 0;
constexpr int kRegressed = 1;
constexpr int kInputError = 2;
constexpr int kInconclusive = 3;
constexpr int kIncomparable = 4;

struct CompareArgs {
    std::vector<std::string> runs; // BASE NEW
    std::string maxRegression; // "5%", "5"
    std::string format = "text";
    std::string output;
    std::string stepRange;
    bool allowEnvChange = false;
    bool failOnInconclusive = false;
    bool calibrate = false; // --calibrate RUN1 RUN2 ...: an A/A test of the machine
    std::string againstHistory; // --against-history FILE: BASE is the last runs kept there
    size_t last = 5; // --last K: how many of them
};

// "5%", "5" or "2.5%" -> 0.05, 0.05, 0.025; nullopt (and a message) when it is not a percentage.
std::optional<double> parsePercent(const std::string& text) {
    std::string number = text;
    if (!number.empty() && number.back() == '%') number.pop_back();
    char* end = nullptr;
    errno = 0;
    const double value = std::strtod(number.c_str(), &end);
    if (number.empty() || errno || end != number.c_str() + number.size() || !std::isfinite(value) || value <= 0
        || value >= 1000) {
        fprintf(stderr,
            "tuneup compare: --max-regression '%s' is not a percentage above 0 and below 1000 (e.g. 5%% or 5)\n",
            text.c_str());
        return std::nullopt;
    }
    return value / 100;
}

// One side, opened through the job core. nullptr (and a message) when it cannot be read.
std::unique_ptr<Job> openSide(const char* side, const std::string& path, const std::string& stepRange) {
    try {
        JobOptions options;
        options.builtinRules = rules::builtinRules;
        options.stepRange = stepRange;
        options.streamFromRanks = kStreamFromRanks;
        JobProgressLine progress;
        options.progress = [&progress](const JobProgress& p) { progress.update(p); };
        std::unique_ptr<Job> job = openJob({ path }, options);
        for (const std::string& note : job->notes)
            fprintf(stderr, "tuneup compare: %s: %s\n", side, note.c_str());
        return job;
    } catch (const std::exception& e) {
        fprintf(stderr, "tuneup compare: %s %s: %s\n", side, path.c_str(), e.what());
        return nullptr;
    }
}

// A side whose traces hold no training steps cannot be compared per step: said, with what to do.
bool hasSteps(const char* side, const std::string& path, const RunProfile& p) {
    const std::string why = missingStepsReason(side, path, p);
    if (why.empty()) return true;
    fprintf(stderr, "tuneup compare: %s\n", why.c_str());
    return false;
}

// --calibrate: every pair of runs of the same program compared; the noise and the threshold to use.
int runCalibrate(const CompareArgs& args) {
    if (args.runs.size() < 2) {
        fprintf(stderr,
            "tuneup compare --calibrate: give two or more runs of the same program (got %zu): tuneup compare "
            "--calibrate run1.db run2.db run3.db\n",
            args.runs.size());
        return kInputError;
    }
    if (args.format != "text" && args.format != "json") {
        fprintf(stderr, "tuneup compare --calibrate: --format '%s' is not one it writes (text or json)\n",
            args.format.c_str());
        return kInputError;
    }
    std::vector<RunProfile> runs;
    for (size_t i = 0; i < args.runs.size(); ++i) {
        const std::string side = "run " + std::to_string(i + 1);
        const std::unique_ptr<Job> job = openSide(side.c_str(), args.runs[i], args.stepRange);
        if (!job) return kInputError;
        runs.push_back(profileJob(*job, { args.runs[i] }));
        if (!hasSteps(side.c_str(), args.runs[i], runs.back())) return kInputError;
    }
    const Calibration calibration = calibrate(runs);
    const std::string error = writeOutput(args.output, [&](std::ostream& out) {
        if (args.format == "json")
            writeCalibrationJson(out, calibration, TUNEUP_VERSION);
        else
            writeCalibrationText(out, calibration);
    });
    if (!error.empty()) {
        fprintf(stderr, "tuneup compare: %s\n", error.c_str());
        return kInputError;
    }
    return 0;
}

// The report, and the exit code of its verdict.
int report(const CompareArgs& args, const CompareFormat& format, const CompareResult& result);

// --against-history FILE NEW: BASE is the last --last runs the history keeps of NEW's environment.
int runAgainstHistory(const CompareArgs& args, const CompareFormat& format, const CompareOptions& options) {
    if (args.runs.size() != 1) {
        fprintf(stderr,
            "tuneup compare --against-history: give one run, NEW (got %zu): tuneup compare --against-history "
            "%s new.db\n",
            args.runs.size(), args.againstHistory.c_str());
        return kInputError;
    }
    if (args.last == 0) {
        fprintf(stderr, "tuneup compare: --last must be 1 or more\n");
        return kInputError;
    }
    const std::unique_ptr<Job> newJob = openSide("NEW", args.runs[0], args.stepRange);
    if (!newJob) return kInputError;
    const RunProfile now = profileJob(*newJob, { args.runs[0] });
    if (!hasSteps("NEW", args.runs[0], now)) return kInputError;
    RunProfile base;
    try {
        base = historyBaseline(
            readHistory(args.againstHistory), environmentFingerprint(now.environment), args.last, args.againstHistory);
    } catch (const HistoryError& e) {
        fprintf(stderr, "tuneup compare --against-history: %s\n", e.what());
        return kInputError;
    }
    return report(args, format, compareProfiles(base, now, options));
}

int runCompare(const CompareArgs& args) {
    if (args.calibrate) return runCalibrate(args);
    if (!args.againstHistory.empty() && args.runs.size() != 1) {
        fprintf(stderr,
            "tuneup compare --against-history: give one run, NEW (got %zu): tuneup compare --against-history "
            "%s new.db\n",
            args.runs.size(), args.againstHistory.c_str());
        return kInputError;
    }
    if (args.againstHistory.empty() && args.runs.size() != 2) {
        fprintf(stderr, "tuneup compare: give two runs, BASE and NEW (got %zu): tuneup compare base.db new.db\n",
            args.runs.size());
        return kInputError;
    }
    const CompareFormat* format = findCompareFormat(args.format);
    if (!format) {
        fprintf(stderr, "tuneup compare: unknown --format '%s' (known: %s)\n", args.format.c_str(),
            compareFormatNames().c_str());
        return kInputError;
    }
    CompareOptions options;
    options.allowEnvChange = args.allowEnvChange;
    if (!args.maxRegression.empty() && !(options.maxRegression = parsePercent(args.maxRegression))) return kInputError;

    if (!args.againstHistory.empty()) return runAgainstHistory(args, *format, options);
    const std::unique_ptr<Job> baseJob = openSide("BASE", args.runs[0], args.stepRange);
    if (!baseJob) return kInputError;
    const std::unique_ptr<Job> newJob = openSide("NEW", args.runs[1], args.stepRange);
    if (!newJob) return kInputError;
    // The comparison the GUI's compare dialog shows too (compare_jobs.h).
    std::unique_ptr<JobComparison> comparison;
    try {
        comparison = compareJobs(*baseJob, { args.runs[0] }, *newJob, { args.runs[1] }, options);
    } catch (const CompareInputError& e) {
        fprintf(stderr, "tuneup compare: %s\n", e.what());
        return kInputError;
    }
    return report(args, *format, comparison->result());
}

int report(const CompareArgs& args, const CompareFormat& format, const CompareResult& result) {
    CompareReportContext context;
    context.toolVersion = TUNEUP_VERSION;
    context.color = args.output.empty() && format.forTerminal && isatty(STDOUT_FILENO);
    const std::string error = writeOutput(args.output, [&](std::ostream& out) { format.write(out, result, context); });
    if (!error.empty()) {
        fprintf(stderr, "tuneup compare: %s\n", error.c_str());
        return kInputError;
    }
    if (!args.output.empty() && args.output != "-")
        fprintf(stderr, "tuneup compare: %s; report written to %s\n", std::string(verdictName(result.verdict)).c_str(),
            args.output.c_str());
    switch (result.verdict) {
    case Verdict::Regressed:
        return kRegressed;
    case Verdict::Incomparable:
        return kIncomparable;
    case Verdict::Inconclusive:
        return args.failOnInconclusive ? kInconclusive : kNoRegression;
    case Verdict::Same:
    case Verdict::Improved:
        return kNoRegression;
    }
    return kNoRegression;
}

} // namespace

std::function<int()> addCompareCommand(CLI::App& app, const std::vector<std::string>&) {
    auto args = std::make_shared<CompareArgs>();
    CLI::App* compare = app.add_subcommand("compare",
        "Compare two runs: did NEW get slower than BASE (ratio of median step times with its 95% interval, against "
        "the larger of 2% and the runs' own noise), and where the time moved; a CI gate through its exit code");
    compare->add_option("runs", args->runs,
        "BASE NEW (with --calibrate: RUN1 RUN2 ...): each a run in any format tuneup reads (run.db and its rank files, "
        "a folder of rank files, a glob "
        "in quotes, a Kineto trace, an Nsight Systems export, a job summary)");
    compare->add_option("--max-regression", args->maxRegression,
        "the threshold, a percentage (5% or 5): step times within it count as the same (default: the larger of 2% "
        "and the noise measured in the runs)");
    compare->add_option("--format", args->format, "text, json, markdown, junit or csv")->capture_default_str();
    compare->add_option("-o,--output", args->output, "write the report to this file instead of stdout");
    compare->add_flag("--allow-env-change", args->allowEnvChange,
        "compare runs whose environment differs (GPU, driver, CUDA, cuDNN, world size): reported, not exit 4");
    compare->add_flag("--fail-on-inconclusive", args->failOnInconclusive,
        "exit 3 when the runs cannot tell (too few or too noisy steps) instead of 0");
    compare->add_flag("--calibrate", args->calibrate,
        "an A/A test of this machine: give two or more recordings of the same program (RUN1 RUN2 ...); says how far "
        "apart they land and the --max-regression under which all read the same");
    compare->add_option("--against-history", args->againstHistory,
        "compare NEW with the last runs of its environment kept in this history file (tuneup history add): give "
        "NEW alone");
    compare->add_option("--last", args->last, "with --against-history: how many of the last runs")
        ->capture_default_str();
    compare->add_option("--step-range", args->stepRange,
        "name of the range that marks one training step (as tuneup advise --step-range)");
    compare->footer("Examples:\n"
                    "  tuneup compare base.db new.db\n"
                    "  tuneup compare baseline/run.db run.db --max-regression 5% --format markdown -o summary.md\n"
                    "  tuneup compare base.pt.trace.json.gz new.pt.trace.json.gz --format junit -o compare.xml\n"
                    "  tuneup compare base/ new/ --format json -o compare.json --fail-on-inconclusive\n"
                    "  tuneup compare --calibrate aa1.db aa2.db aa3.db aa4.db     # the noise of this machine\n"
                    "  tuneup compare --against-history perf-history.db run.db --last 5\n\n"
                    "Exit codes:\n"
                    "  0  no regression (same, improved, or inconclusive without --fail-on-inconclusive)\n"
                    "  1  regressed: NEW's step time is above BASE's by more than the threshold, with 95% confidence\n"
                    "  2  a usage or input error (bad option, unreadable run, no steps, output not written)\n"
                    "  3  inconclusive, with --fail-on-inconclusive\n"
                    "  4  incomparable: the environment changed (without --allow-env-change)\n"
                    "Method, statistics, formats and the JSON: docs/compare.md");
    return [args] { return runCompare(*args); };
}

} // namespace tuneup::cli
