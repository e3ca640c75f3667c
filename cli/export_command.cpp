// `tuneup export FILE --format perfetto [-o OUT]`: a trace of any readable format as Chrome trace JSON
// for Perfetto UI and chrome://tracing, with its steps and the advisor's findings marked.

#include "all_rules.h"
#include "export/chrome_trace_writer.h"
#include "job/job.h"
#include "job_progress.h"
#include "output_file.h"
#include "subcommand.h"

#include <cstdio>
#include <filesystem>

namespace tuneup::cli {

using namespace analysis;
namespace fs = std::filesystem;

namespace {

struct ExportOptions {
    std::string input;
    std::string format = "perfetto"; // perfetto (= chrome)
    std::string output; // default: the input's name + .perfetto.json, in the current folder
    bool force = false;
    bool findings = true; // run the rules and mark their findings
    std::string stepRange;
};

// run.db -> run.perfetto.json; trace.pt.trace.json.gz -> trace.pt.trace.perfetto.json
std::string defaultOutput(const std::string& input) {
    if (input == "-") return "stdin.perfetto.json"; // standard input has no name of its own
    std::string name = fs::path(input).filename().string();
    for (const char* suffix : { ".gz", ".json", ".db", ".sqlite" })
        if (name.size() > std::string_view(suffix).size() && name.ends_with(suffix))
            name.resize(name.size() - std::string_view(suffix).size());
    return name + ".perfetto.json";
}

int runExport(const ExportOptions& options) {
    if (options.format != "perfetto" && options.format != "chrome") {
        fprintf(stderr,
            "tuneup export: unknown --format '%s' (known: perfetto, chrome — the same Chrome trace "
            "JSON; `tuneup import` writes tuneup files)\n",
            options.format.c_str());
        return kUsageError;
    }
    const std::string output = options.output.empty() ? defaultOutput(options.input) : options.output;
    std::error_code ec;
    if (output != "-" && fs::exists(output, ec) && !options.force) {
        fprintf(stderr, "tuneup export: %s exists; use --force to replace it\n", output.c_str());
        return kUsageError;
    }

    std::unique_ptr<Job> job;
    try {
        JobOptions jobOptions;
        jobOptions.builtinRules = rules::builtinRules;
        jobOptions.advise = options.findings;
        jobOptions.stepRange = options.stepRange;
        JobProgressLine progress;
        jobOptions.progress = [&progress](const JobProgress& p) { progress.update(p); };
        jobOptions.acceptSummaries = false;
        job = openJob({ options.input }, jobOptions);
        if (job->models.size() != 1)
            throw std::runtime_error(options.input + ": export writes one trace at a time; it names "
                + std::to_string(job->models.size()) + " (export each file on its own)");
    } catch (const std::exception& e) {
        fprintf(stderr, "tuneup export: %s\n", e.what());
        return kBadInput;
    }
    std::vector<Finding> findings;
    for (const Finding* f : job->report.ranked())
        findings.push_back(*f);
    ChromeTraceMarks marks;
    marks.steps = &job->analyses.front().steps.detection;
    marks.findings = &findings;
    const std::string error
        = writeOutput(output, [&](std::ostream& out) { writeChromeTrace(out, job->models.front(), marks); });
    if (!error.empty()) {
        fprintf(stderr, "tuneup export: %s\n", error.c_str());
        return kUsageError;
    }
    if (output != "-")
        fprintf(stderr,
            "tuneup: %zu events, %zu steps and %zu findings written to %s (open it in ui.perfetto.dev or "
            "chrome://tracing)\n",
            job->models.front().eventCount(), marks.steps->steps.size(), findings.size(), output.c_str());
    return 0;
}

} // namespace

std::function<int()> addExportCommand(CLI::App& app, const std::vector<std::string>&) {
    auto options = std::make_shared<ExportOptions>();
    CLI::App* command = app.add_subcommand("export",
        "Write a trace of any readable format as Chrome trace JSON for Perfetto UI (ui.perfetto.dev) and "
        "chrome://tracing, with its steps and the advisor's findings marked");
    command->add_option("file", options->input, "a trace file: run.db, trace.pt.trace.json[.gz]")->required();
    command->add_option("--format", options->format, "perfetto (Chrome trace JSON)")->capture_default_str();
    command->add_option("-o,--output", options->output,
        "where to write it (default: FILE's name + .perfetto.json in the current folder; - for stdout)");
    command->add_flag("-f,--force", options->force, "Replace an existing output");
    command->add_flag("!--no-findings", options->findings, "Do not run the rules (no findings track)");
    command->add_option("--step-range", options->stepRange, "name of the range that marks one step");
    command->footer("Examples:\n"
                    "  tuneup export run.db                          # -> run.perfetto.json\n"
                    "  tuneup export run.rank3.db --format perfetto -o rank3.json\n\n"
        + std::string(kExitCodes));
    return [options] { return runExport(*options); };
}

} // namespace tuneup::cli
