// `tuneup bench`: measure each fix's gain on the user's own run (docs/bench.md). The session
// (bench_session.h) runs the interleaved runs; this file takes the options, checks them, and writes the
// table or the JSON.

#include "bench/bench_result.h"
#include "bench_args.h"
#include "bench_fixes.h"
#include "bench_session.h"
#include "output_file.h"
#include "subcommand.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sys/stat.h>
#include <unistd.h>

namespace tuneup::cli {

int runBenchMicro(const std::string& recording, const std::string& format, const std::string& output);

namespace {

namespace fs = std::filesystem;

struct BenchOptions {
    std::vector<std::string> fixes; // each --fix: one candidate
    std::string candidate; // --candidate 'CMD ARGS'
    int steps = 20, warmup = 5, runs = 4;
    std::string maxTime = "10m";
    std::string format = "text";
    std::string output;
    std::string runsDir;
    std::string stepRange;
    std::string micro; // --micro RUN
    bool listFixes = false;
    std::vector<std::string> command;
};

int usage(const std::string& message) {
    fprintf(stderr, "tuneup bench: %s\n", message.c_str());
    return kUsageError;
}

int listFixes() {
    for (const BenchFix& f : benchFixes()) {
        std::cout << f.name << (f.value.empty() ? "" : "=" + std::string(f.value)) << "\n    " << f.changes
                  << "\n    applies to: " << (f.python ? "Python programs" : "") << (f.python && f.libtorch ? ", " : "")
                  << (f.libtorch ? "LibTorch C++ programs" : "")
                  << (f.precision ? "; changes the arithmetic: the losses are compared" : "") << "\n";
    }
    return 0;
}

int runBench(BenchOptions& options) {
    if (options.listFixes) return listFixes();
    if (!options.micro.empty()) {
        if (!options.command.empty())
            return usage("--micro RUN times the recorded work of RUN on this GPU: give no command with it");
        return runBenchMicro(options.micro, options.format, options.output);
    }
    if (options.command.empty())
        return usage("no command to bench; give it after --, e.g. tuneup bench -- python train.py");
    if (options.format != "text" && options.format != "json" && options.format != "markdown" && options.format != "md")
        return usage("unknown --format '" + options.format + "' (known: text, json, markdown)");
    if (options.steps < 2)
        return usage("--steps " + std::to_string(options.steps) + ": measure at least 2 steps a run");
    if (options.warmup < 0) return usage("--warmup cannot be negative");
    if (options.runs < 1) return usage("--runs " + std::to_string(options.runs) + ": at least 1 run a side");
    const std::optional<double> maxTime = parseDuration(options.maxTime);
    if (!maxTime)
        return usage("--max-time '" + options.maxTime + "' is not a duration: e.g. 90s, 10m, 1h30m, or seconds");

    BenchSettings settings;
    settings.command = options.command;
    settings.steps = size_t(options.steps);
    settings.warmup = size_t(options.warmup);
    settings.runs = size_t(options.runs);
    settings.maxTimeSeconds = *maxTime;
    settings.stepRange = options.stepRange;
    settings.toolVersion = TUNEUP_VERSION;
    settings.progressOnTerminal = isatty(STDERR_FILENO);
    for (const std::string& fix : options.fixes) {
        std::string error;
        std::vector<FixSpec> fixes = parseFixList(fix, error);
        if (fixes.empty()) return usage(error);
        settings.fixCandidates.push_back(std::move(fixes));
    }
    if (!options.candidate.empty()) {
        std::string error;
        settings.candidateCommand = splitCommandLine(options.candidate, error);
        if (!error.empty()) return usage(error);
        if (settings.candidateCommand.empty()) return usage("--candidate is empty: give the command to compare");
    }

    // The runs' files: in --runs-dir, kept; else in a temporary folder, removed at the end.
    std::unique_ptr<std::string, void (*)(std::string*)> temporary(nullptr, [](std::string* dir) {
        std::error_code ec;
        fs::remove_all(*dir, ec);
        delete dir;
    });
    if (options.runsDir.empty()) {
        const char* tmp = getenv("TMPDIR");
        std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tuneup-bench.XXXXXX";
        if (!mkdtemp(pattern.data()))
            return usage("cannot make a folder for the runs (" + pattern + ": " + strerror(errno)
                + "); set TMPDIR or give --runs-dir DIR");
        temporary.reset(new std::string(pattern));
        settings.runsDir = pattern;
    } else {
        std::error_code ec;
        fs::create_directories(options.runsDir, ec);
        if (ec || !fs::is_directory(options.runsDir) || access(options.runsDir.c_str(), W_OK) != 0)
            return usage("--runs-dir " + options.runsDir + " is not a folder tuneup can write in"
                + (ec ? " (" + ec.message() + ")" : ""));
        settings.runsDir = fs::absolute(options.runsDir).lexically_normal().string();
    }

    const BenchOutcome outcome = runBenchSession(settings);
    if (!outcome.fatal.empty()) {
        fprintf(stderr, "tuneup bench: %s\n", outcome.fatal.c_str());
        if (temporary) fprintf(stderr, "(run it again with --runs-dir DIR to keep the runs' files)\n");
        return outcome.fatal.find("could not start") != std::string::npos ? kUsageError : 1;
    }
    const std::string error = writeOutput(options.output, [&](std::ostream& out) {
        if (options.format == "json")
            writeBenchJson(out, outcome.result);
        else if (options.format == "text")
            writeBenchText(out, outcome.result, options.output.empty() && isatty(STDOUT_FILENO));
        else
            writeBenchMarkdown(out, outcome.result);
    });
    if (!error.empty()) return usage(error);
    if (!options.output.empty() && options.output != "-")
        fprintf(stderr, "tuneup: bench written to %s\n", options.output.c_str());
    if (!temporary) fprintf(stderr, "tuneup: the runs' recordings and logs are in %s\n", settings.runsDir.c_str());
    return outcome.runFailed ? 1 : 0;
}

// The usage line names the command bench runs, which CLI11 cannot know.
class BenchFormatter : public CLI::Formatter {
public:
    std::string make_usage(const CLI::App*, std::string name) const override {
        return "Usage: " + name + " [OPTIONS] -- CMD ARGS...\n       " + name + " --micro RUN\n";
    }
};

} // namespace

std::function<int()> addBenchCommand(CLI::App& app, const std::vector<std::string>& afterDashes) {
    auto options = std::make_shared<BenchOptions>();
    CLI::App* bench = app.add_subcommand("bench",
        "Measure what each fix gains on your own run: the baseline and each fix (applied in the process, no code "
        "change) or candidate command run interleaved, steps timed from the recordings, speed-up with a 95% "
        "confidence interval and a verdict");
    bench->formatter(std::make_shared<BenchFormatter>());
    bench->add_option("--fix", options->fixes,
        "a fix to measure, NAME[=VALUE]; several in one --fix (comma-separated) are applied together; repeat "
        "--fix for more candidates (tuneup bench --list-fixes); without --fix and --candidate: every finding's "
        "fix");
    bench->add_option("--candidate", options->candidate,
        "your own edited command to compare with the baseline, in quotes: --candidate 'python train.py --workers 8'");
    bench->add_option("--steps", options->steps, "steps measured per run after the warm-up")->capture_default_str();
    bench
        ->add_option("--warmup", options->warmup,
            "steps never measured at the start of each run (more when the "
            "recordings show a longer warm-up)")
        ->capture_default_str();
    bench->add_option("--runs", options->runs, "runs of each side (baseline and each candidate), interleaved")
        ->capture_default_str();
    bench->add_option("--max-time", options->maxTime, "stop starting runs after this long: 90s, 10m, 1h")
        ->capture_default_str();
    bench->add_option("--format", options->format, "text, json or markdown")->capture_default_str();
    bench->add_option("-o,--output", options->output, "write the result to this file instead of stdout");
    bench->add_option("--runs-dir", options->runsDir,
        "keep every run's recording, log and report in this folder (default: a temporary folder, removed)");
    bench->add_option("--step-range", options->stepRange,
        "the range that marks one training step (default: as tuneup advise finds them); in LibTorch programs "
        "also what bench counts to stop a run (default \"step\")");
    bench->add_option("--micro", options->micro,
        "on a GPU: time the recorded GEMMs, convolutions and copies of this recording against their fixed twins");
    bench->add_flag("--list-fixes", options->listFixes, "list the fixes and exactly what each changes");
    bench->footer("Examples:\n"
                  "  tuneup bench -- python train.py --epochs 1            # every finding's fix, measured\n"
                  "  tuneup bench --fix dataloader-workers=8 --fix anomaly-off -- python train.py\n"
                  "  tuneup bench --candidate 'python train_fixed.py' -- python train.py\n"
                  "  tuneup bench --format json -o bench.json --runs-dir runs -- ./train_app\n"
                  "  tuneup advise runs/baseline.run1.db --bench bench.json   # measured beside the estimates\n\n"
                  "Exit codes:\n"
                  "  0     the bench ran (whatever its verdicts)\n"
                  "  1     a run failed: the baseline, or a candidate that crashed or changed the number of steps\n"
                  "  2     a usage or input error: nothing was measured");
    return [options, afterDashes] {
        options->command = afterDashes;
        return runBench(*options);
    };
}

} // namespace tuneup::cli
