#include "export_command.h"

#include "advise/advisor.h"
#include "all_rules.h"
#include "export/chrome_trace_writer.h"
#include "import/importer.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace tuneup::cli {

using namespace analysis;
namespace fs = std::filesystem;

namespace {

constexpr int kBadInput = 1;
constexpr int kUsageError = 2;

// run.db -> run.perfetto.json; trace.pt.trace.json.gz -> trace.pt.trace.perfetto.json
std::string defaultOutput(const std::string& input) {
    std::string name = fs::path(input).filename().string();
    for (const char* suffix : { ".gz", ".json", ".db", ".sqlite" })
        if (name.size() > std::string_view(suffix).size() && name.ends_with(suffix))
            name.resize(name.size() - std::string_view(suffix).size());
    return name + ".perfetto.json";
}

} // namespace

int runExport(const ExportOptions& options) {
    if (options.format != "perfetto" && options.format != "chrome") {
        fprintf(stderr,
            "tuneup export: unknown --format '%s' (known: perfetto, chrome — the same Chrome trace "
            "JSON; `tuneup import` writes tuneup files)\n",
            options.format.c_str());
        return kUsageError;
    }
    const std::string output = options.output.empty() ? defaultOutput(options.input) : options.output;
    const bool toStdout = output == "-";
    std::error_code ec;
    if (!toStdout && fs::exists(output, ec) && !options.force) {
        fprintf(stderr, "tuneup export: %s exists; use --force to replace it\n", output.c_str());
        return kUsageError;
    }

    std::vector<TraceModel> models;
    try {
        models.push_back(importTrace(options.input));
    } catch (const std::exception& e) {
        fprintf(stderr, "tuneup export: %s\n", e.what());
        return kBadInput;
    }
    analysis::AdviseOptions adviseOptions;
    adviseOptions.stepRange = options.stepRange;
    const auto rules = options.findings ? rules::builtinRules() : std::vector<std::unique_ptr<Rule>>();
    const AdviceReport report = advise(models, rules, adviseOptions);
    std::vector<Finding> findings;
    for (const Finding* f : report.ranked())
        findings.push_back(*f);
    ChromeTraceMarks marks;
    marks.steps = &report.ranks.front().steps.detection;
    marks.findings = &findings;

    // Written beside the output and renamed when complete: a failed export never leaves half a file.
    const std::string partial = output + ".partial";
    try {
        if (toStdout) {
            writeChromeTrace(std::cout, models.front(), marks);
            return 0;
        }
        {
            std::ofstream file(partial, std::ios::binary | std::ios::trunc);
            if (!file) throw std::runtime_error("cannot write " + partial);
            writeChromeTrace(file, models.front(), marks);
        }
        fs::rename(partial, output);
    } catch (const std::exception& e) {
        fs::remove(partial, ec);
        fprintf(stderr, "tuneup export: %s: %s\n", output.c_str(), e.what());
        return kUsageError;
    }
    fprintf(stderr,
        "tuneup: %zu events, %zu steps and %zu findings written to %s (open it in ui.perfetto.dev or "
        "chrome://tracing)\n",
        models.front().eventCount(), marks.steps->steps.size(), findings.size(), output.c_str());
    return 0;
}

} // namespace tuneup::cli
