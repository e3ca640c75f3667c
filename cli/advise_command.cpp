#include "advise_command.h"

#include "advise/sql_rule.h"
#include "all_rules.h"
#include "import/import_many.h"
#include "report/report.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace tuneup::cli {

using namespace analysis;

namespace {

constexpr int kBadInput = 1;
constexpr int kUsageError = 2;
constexpr int kFindingsAtFailLevel = 3;

// A progress line on a terminal for inputs big enough to take a while; nothing otherwise.
class Progress {
public:
    explicit Progress(const std::vector<std::string>& paths)
        : m_paths(paths) {
        uint64_t total = 0;
        for (const std::string& path : paths) {
            struct stat st { };
            if (stat(path.c_str(), &st) == 0) total += uint64_t(st.st_size);
        }
        m_enabled = isatty(STDERR_FILENO) && total > (32u << 20);
    }
    ~Progress() {
        if (m_shown) fprintf(stderr, "\r\033[K");
    }
    void operator()(size_t filesDone, uint64_t bytes) {
        if (!m_enabled) return;
        m_shown = true;
        if (m_paths.size() == 1)
            fprintf(stderr, "\rtuneup: reading %s: %.0f MB", m_paths.front().c_str(), double(bytes) / 1e6);
        else
            fprintf(stderr, "\rtuneup: reading %zu files (%zu done): %.0f MB", m_paths.size(), filesDone,
                double(bytes) / 1e6);
    }

private:
    const std::vector<std::string>& m_paths;
    bool m_enabled = false, m_shown = false;
};

// The built-in rules, then the user's from `userRules` (if not empty). Prints why and returns
// nothing when a user rule cannot be loaded.
std::optional<std::vector<std::unique_ptr<Rule>>> loadRules(const std::string& userRules, const char* command) {
    auto rules = rules::builtinRules();
    if (userRules.empty()) return rules;
    try {
        for (auto& rule : loadSqlRules(userRules, rules))
            rules.push_back(std::move(rule));
    } catch (const std::exception& e) {
        fprintf(stderr, "tuneup %s: %s\n", command, e.what());
        return std::nullopt;
    }
    return rules;
}

// What a helper process's file is, from the role the agent wrote; empty for a training process (main,
// rank) and for files of other formats. Children and other processes that ran GPU work train (ranks
// started by mp.spawn without RANK set write run.pidN.db): only those without are helpers (launchers).
std::string helperRole(const TraceModel& model) {
    const std::string role = model.info.metadataValue("role");
    if (role == "dataloader-worker") return "DataLoader worker";
    if (model.hasGpuActivity()) return {};
    if (role == "forked-child") return "forked child without GPU work";
    if (role == "other") return "process without GPU work";
    return {};
}

// Files of helper processes (DataLoader workers, other children, launchers) are not ranks: analysed
// beside the training process they would read as idle GPUs and stragglers. They are set aside, with a
// note, unless nothing else was given.
void setHelperProcessesAside(std::vector<TraceModel>& models, std::vector<std::string>& files) {
    std::vector<std::string> roles;
    for (const TraceModel& m : models)
        roles.push_back(helperRole(m));
    if (std::all_of(roles.begin(), roles.end(), [](const std::string& r) { return !r.empty(); })) return;
    std::string aside;
    size_t kept = 0;
    for (size_t i = 0; i < models.size(); ++i) {
        if (!roles[i].empty()) {
            aside += (aside.empty() ? "" : ", ") + files[i] + " (" + roles[i] + ")";
            continue;
        }
        if (kept != i) {
            models[kept] = std::move(models[i]);
            files[kept] = std::move(files[i]);
        }
        ++kept;
    }
    models.resize(kept);
    files.resize(kept);
    if (!aside.empty())
        fprintf(stderr,
            "tuneup advise: not training processes, so not analysed as ranks: %s (tuneup-gui shows them "
            "beside their main process)\n",
            aside.c_str());
}

} // namespace

int runAdvise(const AdviseOptions& options) {
    const auto format = parseReportFormat(options.format);
    if (!format) {
        fprintf(stderr, "tuneup advise: unknown --format '%s' (known: text, json, markdown, html)\n",
            options.format.c_str());
        return kUsageError;
    }
    std::optional<Severity> failOn;
    if (!options.failOn.empty() && !(failOn = parseSeverity(options.failOn))) {
        fprintf(
            stderr, "tuneup advise: unknown --fail-on '%s' (known: info, warning, error)\n", options.failOn.c_str());
        return kUsageError;
    }

    const auto rules = loadRules(options.userRules, "advise");
    if (!rules) return kBadInput;

    std::vector<TraceModel> models;
    std::vector<std::string> files = options.files;
    try {
        Progress progress(options.files);
        ImportManyOptions importOptions;
        importOptions.progress = [&progress](size_t done, uint64_t bytes) { progress(done, bytes); };
        models = importTraces(options.files, importOptions);
    } catch (const std::exception& e) {
        fprintf(stderr, "tuneup advise: %s\n", e.what());
        return kBadInput;
    }
    setHelperProcessesAside(models, files);

    analysis::AdviseOptions engineOptions;
    engineOptions.stepRange = options.stepRange;
    const AdviceReport report = advise(models, *rules, engineOptions);

    ReportContext context;
    context.inputs = files;
    context.toolVersion = TUNEUP_VERSION;
    context.docsDir = TUNEUP_RULES_DOC_DIR;
    std::ofstream file;
    if (!options.output.empty()) {
        file.open(options.output);
        if (!file) {
            fprintf(stderr, "tuneup advise: cannot write %s\n", options.output.c_str());
            return kUsageError;
        }
    }
    std::ostream& out = options.output.empty() ? std::cout : file;
    context.color = options.output.empty() && *format == ReportFormat::Text && isatty(STDOUT_FILENO);
    switch (*format) {
    case ReportFormat::Text:
        writeTextReport(out, report, context);
        break;
    case ReportFormat::Json:
        writeJsonReport(out, report, context);
        break;
    case ReportFormat::Markdown:
        writeMarkdownReport(out, report, context);
        break;
    case ReportFormat::Html:
        writeHtmlReport(out, report, context);
        break;
    }
    out.flush();
    if (!out) {
        fprintf(stderr, "tuneup advise: writing %s failed (disk full?)\n",
            options.output.empty() ? "the report" : options.output.c_str());
        return kUsageError;
    }
    if (!options.output.empty()) fprintf(stderr, "tuneup: report written to %s\n", options.output.c_str());
    if (failOn)
        for (const Finding* f : report.ranked())
            if (f->severity >= *failOn) return kFindingsAtFailLevel;
    return 0;
}

int runRules(const std::string& userRules) {
    const auto rules = loadRules(userRules, "rules");
    if (!rules) return kBadInput;
    for (const auto& rule : *rules) {
        const RuleInfo& r = rule->info();
        std::cout << r.id << "\n    " << r.summary << "\n    needs: ";
        for (size_t i = 0; i < r.needs.size(); ++i)
            std::cout << (i ? "; " : "") << inputName(r.needs[i]);
        if (const auto* sql = dynamic_cast<const SqlRule*>(rule.get()))
            std::cout << "\n    user rule: " << sql->path() << "\n";
        else
            std::cout << "\n    doc: " << TUNEUP_RULES_DOC_DIR << "/" << r.id << ".md\n";
    }
    return 0;
}

} // namespace tuneup::cli
