// `tuneup advise`: read a job's traces, run the rules, report; `tuneup rules`: list the rules, or print
// one's documentation.

#include "advise/sql_rule.h"
#include "all_rules.h"
#include "job/job.h"
#include "job/summary_file.h"
#include "job_progress.h"
#include "output_file.h"
#include "report/report.h"
#include "report/rule_docs.h"
#include "subcommand.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <unistd.h>

namespace tuneup::cli {

using namespace analysis;

namespace {

constexpr int kFindingsAtFailLevel = 3;

struct AdviseOptions {
    std::vector<std::string> files;
    std::string format = "text";
    std::string output; // -o: a file instead of stdout
    std::string failOn; // info, warning, error: exit 3 when a finding is that severe or worse
    std::string stepRange; // --step-range NAME
    std::string userRules; // --rules: a .sql file or a folder of them
    std::string summaryOut; // --summary-out: the job's summary, for merging with other machines'
    std::string bench; // --bench: tuneup bench's JSON, for the measured gains beside the estimates
    MaterialityFloor floor; // --min-gain (a percent here, a share there), --min-gain-ms, --all
};

int runAdvise(const AdviseOptions& options) {
    const ReportFormat* format = findReportFormat(options.format);
    if (!format) {
        fprintf(stderr, "tuneup advise: unknown --format '%s' (known: %s)\n", options.format.c_str(),
            reportFormatNames().c_str());
        return kUsageError;
    }
    std::optional<Severity> failOn;
    if (!options.failOn.empty() && !(failOn = parseSeverity(options.failOn))) {
        fprintf(
            stderr, "tuneup advise: unknown --fail-on '%s' (known: info, warning, error)\n", options.failOn.c_str());
        return kUsageError;
    }

    std::optional<BenchResult> bench;
    if (!options.bench.empty()) {
        try {
            bench = readBenchJson(options.bench);
        } catch (const BenchFileError& e) {
            fprintf(stderr, "tuneup advise: --bench %s\n", e.what());
            return kBadInput;
        }
    }

    std::unique_ptr<Job> job;
    try {
        JobOptions jobOptions;
        jobOptions.builtinRules = rules::builtinRules;
        jobOptions.userRules = options.userRules;
        jobOptions.stepRange = options.stepRange;
        jobOptions.streamFromRanks = kStreamFromRanks;
        jobOptions.materiality = options.floor;
        JobProgressLine progress;
        jobOptions.progress = [&progress](const JobProgress& p) { progress.update(p); };
        job = openJob(options.files, jobOptions);
    } catch (const std::exception& e) {
        fprintf(stderr, "tuneup advise: %s\n", e.what());
        return kBadInput;
    }
    for (const std::string& note : job->notes)
        fprintf(stderr, "tuneup advise: %s\n", note.c_str());

    if (!options.summaryOut.empty()) {
        const std::string error = writeOutput(
            options.summaryOut, [&](std::ostream& out) { writeJobSummary(out, job->report, TUNEUP_VERSION); });
        if (!error.empty()) {
            fprintf(stderr, "tuneup advise: %s\n", error.c_str());
            return kUsageError;
        }
        fprintf(stderr, "tuneup: summary of %zu ranks written to %s (merge: tuneup advise %s ...)\n",
            job->report.ranks.size(), options.summaryOut.c_str(), options.summaryOut.c_str());
    }

    ReportContext context;
    for (const JobFile& f : job->ranks)
        context.inputs.push_back(f.path);
    for (const RankSummary& r : job->report.ranks)
        if (context.inputs.size() < job->report.ranks.size()) context.inputs.push_back(r.path);
    context.toolVersion = TUNEUP_VERSION;
    context.bench = bench ? &*bench : nullptr;
    context.failOn = failOn;
    context.color = options.output.empty() && format->forTerminal && isatty(STDOUT_FILENO);
    const std::string error
        = writeOutput(options.output, [&](std::ostream& out) { format->write(out, job->report, context); });
    if (!error.empty()) {
        fprintf(stderr, "tuneup advise: %s\n", error.c_str());
        return kUsageError;
    }
    if (!options.output.empty() && options.output != "-")
        fprintf(stderr, "tuneup: report written to %s\n", options.output.c_str());
    if (failOn)
        for (const Finding* f : job->report.ranked())
            if (f->severity >= *failOn) return kFindingsAtFailLevel;
    return 0;
}

struct RulesOptions {
    std::string userRules; // --rules
    std::string doc; // --doc ID
};

// `tuneup rules --doc ID`: the rule's documentation as built in (report/rule_docs.h), so that an installed
// tuneup explains its rules without its sources; a user rule's is its own .sql file.
int printRuleDoc(const RuleSet& rules, const std::string& id) {
    for (const auto& rule : rules)
        if (rule->info().id == id) {
            if (const auto* sql = dynamic_cast<const SqlRule*>(rule.get())) {
                fprintf(stderr, "tuneup rules: %s is a user rule: its documentation is %s\n", id.c_str(),
                    sql->path().c_str());
                return kBadInput;
            }
            const std::string_view doc = builtinRuleDoc(id);
            if (doc.empty()) {
                fprintf(stderr, "tuneup rules: %s has no documentation built in\n", id.c_str());
                return kBadInput;
            }
            const std::string error = writeOutput("", [&](std::ostream& out) { out << doc; });
            if (!error.empty()) {
                fprintf(stderr, "tuneup rules: %s\n", error.c_str());
                return kUsageError;
            }
            return 0;
        }
    fprintf(stderr, "tuneup rules: no rule %s (tuneup rules lists them)\n", id.c_str());
    return kBadInput;
}

int runRules(const RulesOptions& options) {
    RuleSet rules = rules::builtinRules();
    try {
        if (!options.userRules.empty())
            for (auto& rule : loadSqlRules(options.userRules, rules))
                rules.push_back(std::move(rule));
    } catch (const std::exception& e) {
        fprintf(stderr, "tuneup rules: %s\n", e.what());
        return kBadInput;
    }
    if (!options.doc.empty()) return printRuleDoc(rules, options.doc);
    const std::string error = writeOutput("", [&](std::ostream& out) {
        for (const auto& rule : rules) {
            const RuleInfo& r = rule->info();
            out << r.id << "\n    " << r.summary << "\n    needs: ";
            for (size_t i = 0; i < r.needs.size(); ++i)
                out << (i ? "; " : "") << inputName(r.needs[i]);
            if (!r.reads.empty()) out << (r.needs.empty() ? "" : "; ") << r.reads;
            if (const auto* sql = dynamic_cast<const SqlRule*>(rule.get()))
                out << "\n    user rule: " << sql->path() << "\n";
            else // as the reports name it: no path of the machine tuneup was built on (--doc prints it)
                out << "\n    doc: rules/" << r.id << ".md\n";
        }
    });
    if (!error.empty()) {
        fprintf(stderr, "tuneup rules: %s\n", error.c_str());
        return kUsageError;
    }
    return 0;
}

} // namespace

std::function<int()> addAdviseCommand(CLI::App& app, const std::vector<std::string>&) {
    auto options = std::make_shared<AdviseOptions>();
    CLI::App* advise = app.add_subcommand("advise",
        "Find what slows the training down and what to change: runs the rules over traces (tuneup recordings, "
        "PyTorch profiler / Kineto JSON, Nsight Systems SQLite exports); several files are one job, one per rank");
    advise
        ->add_option("files", options->files,
            "trace files, folders of them or globs: run.db, run.rank*.db, trace.pt.trace.json[.gz], report.sqlite, "
            "job summaries (node*.json)")
        ->required();
    advise
        ->add_option("--format", options->format,
            "text (fits a screen), json, markdown, html or junit (one test case per rule; failures by --fail-on)")
        ->capture_default_str();
    advise->add_option("-o,--output", options->output, "write the report to this file instead of stdout");
    advise->add_option(
        "--fail-on", options->failOn, "exit 3 when a finding is this severe or worse: info, warning or error (for CI)");
    advise->add_option("--step-range", options->stepRange,
        "name of the range that marks one training step (default: ProfilerStep#N, tuneup.step, step or "
        "iteration N, the optimizer's or a framework's ranges, else the repeating kernel pattern, else the whole "
        "window as one span: docs/steps.md)");
    advise->add_option("--rules", options->userRules,
        "also run your own SQL rules: a .sql file or a folder of them (see docs/user-rules.md)");
    advise->add_option("--summary-out", options->summaryOut,
        "also write the job's summary (per-rank steps, breakdowns and findings, no events) to this file: the "
        "summaries of several machines merge with `tuneup advise node*.json` (docs/multi-node.md)");
    advise
        ->add_option_function<double>(
            "--min-gain", [options](double percent) { options->floor.minStepShare = percent / 100; },
            "materiality floor: a finding about time is raised only when its gain is at least this percent of the "
            "median step (default 0.5) or at least --min-gain-ms; findings of a debug API left on, and those "
            "without a time estimate, are raised whatever their size")
        ->check(CLI::Range(0.0, 100.0));
    advise
        ->add_option_function<double>(
            "--min-gain-ms", [options](double ms) { options->floor.minPerStepNs = int64_t(ms * 1e6); },
            "materiality floor: ... or at least this many milliseconds per step (default 1; per window when no "
            "steps are found); findings under both limits are not raised")
        ->check(CLI::Range(0.0, 1e6));
    advise->add_flag("--all", options->floor.showAll, "show every finding, however small (no materiality floor)");
    advise->add_option("--bench", options->bench,
        "show the gains `tuneup bench --format json -o FILE` measured beside the estimates (docs/bench.md)");
    advise->footer("Examples:\n"
                   "  tuneup advise run.db\n"
                   "  tuneup advise worker0.pt.trace.json.gz --format html -o report.html\n"
                   "  tuneup advise report.sqlite          # nsys export --type sqlite report.nsys-rep\n"
                   "  tuneup advise run.rank*.db --format json -o advice.json --fail-on warning\n"
                   "  tuneup advise traces/ --summary-out node3.json   # then: tuneup advise node*.json\n"
                   "  tuneup advise run.db --rules my-rules/\n\n"
        + std::string(kExitCodes));
    return [options] { return runAdvise(*options); };
}

std::function<int()> addRulesCommand(CLI::App& app, const std::vector<std::string>&) {
    auto options = std::make_shared<RulesOptions>();
    CLI::App* rules = app.add_subcommand("rules", "List the advisor's rules: id, what each detects, what it needs");
    rules->add_option(
        "--rules", options->userRules, "also list (and check) your own SQL rules: a .sql file or a folder");
    rules->add_option("--doc", options->doc, "print the documentation of rule ID (rules/ID.md, built in)")
        ->option_text("ID");
    return [options] { return runRules(*options); };
}

} // namespace tuneup::cli
