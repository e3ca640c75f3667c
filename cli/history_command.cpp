// `tuneup history add RUN --label LABEL [--db FILE]` keeps a run's summary (never its events);
// `tuneup history show [--db FILE]` prints the trend per environment. `tuneup compare --against-history`
// compares a new run with the last runs kept (docs/compare.md#history).

#include "all_rules.h"
#include "compare/history.h"
#include "job/job.h"
#include "output_file.h"
#include "subcommand.h"

#include <cstdio>
#include <memory>

namespace tuneup::cli {

using namespace analysis;

namespace {

constexpr const char* kDefaultHistory = "history.db";

struct HistoryArgs {
    std::string db = kDefaultHistory;
    std::string run, label, stepRange;
    std::string format = "text";
    std::string output; // show -o
};

int runAdd(const HistoryArgs& args) {
    std::unique_ptr<Job> job;
    try {
        JobOptions options;
        options.builtinRules = rules::builtinRules;
        options.stepRange = args.stepRange;
        options.streamFromRanks = 64;
        job = openJob({ args.run }, options);
    } catch (const std::exception& e) {
        fprintf(stderr, "tuneup history add: %s: %s\n", args.run.c_str(), e.what());
        return kUsageError;
    }
    const RunProfile profile = profileJob(*job, { args.run });
    if (profile.stepMs.empty()) {
        fprintf(stderr,
            "tuneup history add: %s: no training steps found: nothing to keep (name the step range with "
            "--step-range NAME)\n",
            args.run.c_str());
        return kUsageError;
    }
    try {
        const int64_t id = addToHistory(args.db, profile, args.label);
        fprintf(stderr, "tuneup history: run %lld (%s, %zu steps) added to %s\n", static_cast<long long>(id),
            args.label.c_str(), profile.stepMs.size(), args.db.c_str());
    } catch (const HistoryError& e) {
        fprintf(stderr, "tuneup history add: %s\n", e.what());
        return kUsageError;
    }
    return 0;
}

int runShow(const HistoryArgs& args) {
    if (args.format != "text" && args.format != "json" && args.format != "html") {
        fprintf(stderr, "tuneup history show: unknown --format '%s' (known: text, json, html)\n", args.format.c_str());
        return kUsageError;
    }
    std::vector<HistoryEntry> history;
    try {
        history = readHistory(args.db);
    } catch (const HistoryError& e) {
        fprintf(stderr, "tuneup history show: %s\n", e.what());
        return kUsageError;
    }
    const std::string error = writeOutput(args.output, [&](std::ostream& out) {
        if (args.format == "json")
            writeHistoryJson(out, history);
        else if (args.format == "html")
            writeHistoryHtml(out, history);
        else
            writeHistoryText(out, history);
    });
    if (!error.empty()) {
        fprintf(stderr, "tuneup history show: %s\n", error.c_str());
        return kUsageError;
    }
    return 0;
}

} // namespace

std::function<int()> addHistoryCommand(CLI::App& app, const std::vector<std::string>&) {
    auto args = std::make_shared<HistoryArgs>();
    CLI::App* history = app.add_subcommand("history",
        "Keep runs' summaries (not their events) in a SQLite file, show their trend, and compare a new run with "
        "them (tuneup compare --against-history)");
    history->require_subcommand(1);
    CLI::App* add = history->add_subcommand("add", "Add a run's summary to the history");
    add->add_option("run", args->run, "the run: any form tuneup advise reads (run.db, a trace, a folder)")->required();
    add->add_option("--label", args->label, "what this run is: a commit, a version, a date")->required();
    add->add_option("--db", args->db, "the history file (made when it does not exist)")->capture_default_str();
    add->add_option("--step-range", args->stepRange, "name of the range that marks one training step");
    CLI::App* show = history->add_subcommand("show", "Print each environment's runs and their trend");
    show->add_option("--db", args->db, "the history file")->capture_default_str();
    show->add_option("--format", args->format, "text, json or html (a page with each environment's trend chart)")
        ->capture_default_str();
    show->add_option("-o,--output", args->output, "write it to this file instead of stdout");
    history->footer("Examples:\n"
                    "  tuneup history add run.db --label \"$(git rev-parse --short HEAD)\" --db perf-history.db\n"
                    "  tuneup history show --db perf-history.db\n"
                    "  tuneup history show --db perf-history.db --format html -o trend.html\n"
                    "  tuneup compare --against-history perf-history.db run.db --last 5\n\n"
                    "Exit codes: 0 done; 2 a usage or input error (the run cannot be read or has no steps, the "
                    "file is not a tuneup history)");
    return [args, add] { return add->parsed() ? runAdd(*args) : runShow(*args); };
}

} // namespace tuneup::cli
