// The Markdown report: for a CI job summary or a pull-request comment (GitHub-flavoured tables).

#include "report/measured_gain.h"
#include "report/report_helpers.h"
#include "utf8.h"

#include <algorithm>

namespace tuneup::analysis {

namespace {

// A paragraph: like markdownText() but keeps line breaks (as Markdown hard breaks).
std::string paragraph(std::string_view s) {
    std::string out;
    size_t start = 0;
    while (start <= s.size()) {
        const size_t end = std::min(s.find('\n', start), s.size());
        out += markdownText(s.substr(start, end - start));
        if (end == s.size()) break;
        out += "  \n";
        start = end + 1;
    }
    return out;
}

size_t longestRun(std::string_view s, char c) {
    size_t longest = 0, run = 0;
    for (char x : s) {
        run = x == c ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    return longest;
}

// `code`, with a fence longer than any backtick run inside.
std::string code(std::string_view s) {
    const std::string fence(longestRun(s, '`') + 1, '`');
    const bool pad = !s.empty() && (s.front() == '`' || s.back() == '`');
    std::string flat = validUtf8(s);
    std::replace(flat.begin(), flat.end(), '\n', ' ');
    return fence + (pad ? " " : "") + flat + (pad ? " " : "") + fence;
}

std::string codeBlock(std::string_view s, std::string_view language) {
    const std::string fence(std::max<size_t>(3, longestRun(s, '`') + 1), '`');
    std::string body = validUtf8(s);
    if (!body.empty() && body.back() != '\n') body += '\n';
    return fence + std::string(language) + "\n" + body + fence + "\n";
}

std::string share(int64_t part, int64_t whole) {
    return whole > 0 ? formatPercent(double(part) / double(whole)) : "-";
}

std::string severityLabel(Severity s) {
    switch (s) {
    case Severity::Error:
        return "🔴 error";
    case Severity::Warning:
        return "🟠 warning";
    case Severity::Info:
        return "🔵 info";
    }
    return "info";
}

std::string gainText(const Finding& f) {
    if (!f.gain || f.gain->perStepNs <= 0) return "-";
    return formatDuration(f.gain->perStepNs);
}

void writeBreakdownTable(std::ostream& out, const AdviceReport& report, const std::vector<size_t>& shown,
    const std::vector<BreakdownPart>& parts) {
    if (shown.empty()) return;
    out << "| Median step |";
    for (size_t i : shown)
        out << " " << (report.ranks.size() > 1 ? "rank " + std::to_string(report.ranks[i].rank) : "time") << " |";
    out << "\n|---|";
    for (size_t k = 0; k < shown.size(); ++k)
        out << "---:|";
    out << "\n| **Step** |";
    for (size_t i : shown)
        out << " **" << formatDuration(report.ranks[i].steps.median.stepNs) << "** |";
    out << "\n";
    for (const BreakdownPart& part : parts) {
        bool any = false;
        for (size_t i : shown)
            any = any || report.ranks[i].steps.median.*part.field > 0;
        if (!any && part.omittedWhenZero()) continue; // absent in most runs: no row of zeros
        out << "| " << part.label << " |";
        for (size_t i : shown) {
            const StepBreakdown& b = report.ranks[i].steps.median;
            out << " " << formatDuration(b.*part.field) << " (" << share(b.*part.field, b.stepNs) << ") |";
        }
        out << "\n";
    }
    out << "\n";
}

void writeInputs(std::ostream& out, const AdviceReport& report, const ReportContext& context) {
    out << "## Steps\n\n";
    const std::vector<size_t> described = ranksDescribed(report);
    if (described.size() < report.ranks.size())
        out << report.ranks.size() << " ranks, median step **" << formatDuration(report.medianStepNs())
            << "**; the fastest, the median and the slowest rank:\n\n";
    for (size_t i : described) {
        const RankSummary& r = report.ranks[i];
        const StepDetection& d = r.steps.detection;
        out << "- " << code(inputLabel(report, context, i));
        if (report.ranks.size() > 1) out << " (rank " << r.rank << ")";
        out << ": " << sourceFormatName(r.format) << ", " << r.eventCount << " events; ";
        if (d.steps.empty())
            out << "no steps found (" << markdownText(d.detail) << ")";
        else
            out << d.steps.size() << " steps from " << markdownText(stepSourceName(d.source)) << ", median **"
                << formatDuration(r.steps.median.stepNs) << "**";
        out << (r.steps.gpuActivity() ? ", GPU " + std::to_string(r.steps.device) : "; " + markdownText(kCpuOnly))
            << "\n";
    }
    out << "\n";

    // One column per rank that has a breakdown: the table stays readable for 8 ranks. Ranks without GPU
    // activity get a table of their own, of host time.
    std::vector<size_t> gpu, cpuOnly;
    for (size_t i : described)
        if (!report.ranks[i].steps.detection.steps.empty())
            (report.ranks[i].steps.gpuActivity() ? gpu : cpuOnly).push_back(i);
    if (gpu.empty() && cpuOnly.empty()) {
        out << "No step breakdown: it needs steps.\n\n";
        return;
    }
    writeBreakdownTable(out, report, gpu, kBreakdownParts);
    if (!cpuOnly.empty()) {
        out << markdownText(kCpuOnly) << ": where the median step goes on the host.\n\n";
        writeBreakdownTable(out, report, cpuOnly, kHostBreakdownParts);
    }
}

void writeFinding(std::ostream& out, size_t index, const FindingGroup& group, const AdviceReport& report,
    const ReportContext& context) {
    const Finding& f = *group.finding;
    out << "### " << index << ". " << code(f.ruleId)
        << (group.ranks.empty() ? "" : " (" + rankList(group.ranks, report.ranks.size()) + ")") << ": "
        << markdownText(f.title) << "\n\n";
    if (group.ranks.size() > 1)
        out << "Shown for rank " << f.rank
            << (f.gain && f.gain->perStepNs > 0 ? ", where it costs most.\n\n" : ", the first.\n\n");
    out << "**" << severityLabel(f.severity) << "**";
    if (f.gain && f.gain->perStepNs > 0) {
        out << " · estimated gain **" << formatDuration(f.gain->perStepNs) << " per step** (" << stepShareText(f)
            << ")";
        if (!f.gain->confidence.empty()) out << ", confidence " << markdownText(f.gain->confidence);
    } else {
        out << " · " << stepShareText(f);
    }
    out << "\n\n";
    if (const std::string measured = measuredGainText(context, f); !measured.empty())
        out << "Measured: " << markdownText(measured) << "\n\n";
    if (!f.detail.empty()) out << paragraph(f.detail) << "\n\n";
    if (!f.sources.empty()) {
        out << "**Where in the code**\n\n";
        for (const SourceSite& site : f.sources)
            out << "- " << markdownText(sourceSiteText(site)) << "\n";
        out << "\n";
    }
    const Evidence& e = f.evidence;
    if (!e.facts.empty() || e.eventsTotal || !e.spans.empty() || (f.gain && !f.gain->model.empty())) {
        out << "**Evidence**\n\n";
        for (const auto& [label, value] : e.facts)
            out << "- " << markdownText(label) << ": " << markdownText(value) << "\n";
        const size_t events = std::max(e.eventsTotal, e.events.size());
        if (events) {
            out << "- events: " << events;
            if (!e.events.empty()) out << " (in " << eventTableName(e.events.front().table) << ")";
            out << "\n";
        }
        if (!e.spans.empty()) {
            const int64_t origin = traceStartNs(report, f);
            out << "- time ranges (from the start of the trace):";
            for (size_t k = 0; k < e.spans.size() && k < 5; ++k)
                out << (k ? "," : "") << " " << relativeSpan(e.spans[k], origin);
            if (e.spans.size() > 5) out << ", … (" << e.spans.size() << " in all)";
            out << "\n";
        }
        if (f.gain && !f.gain->model.empty()) out << "- gain model: " << markdownText(f.gain->model) << "\n";
        out << "\n";
    }
    if (!f.fixPython.empty()) out << "**Fix (Python)**\n\n" << codeBlock(f.fixPython, "python") << "\n";
    if (!f.fixCpp.empty()) out << "**Fix (C++)**\n\n" << codeBlock(f.fixCpp, "cpp") << "\n";
    const std::string doc = docLink(f);
    out << "Documentation: [" << markdownText(doc) << "](<" << doc << ">)\n\n";
}

void writeRules(std::ostream& out, const AdviceReport& report) {
    const auto notEvaluated = rulesWithout(report, RuleStatus::NotEvaluated);
    const auto notApplicable = rulesWithout(report, RuleStatus::NotApplicable);
    const auto clean = rulesWithout(report, RuleStatus::Clean);
    if (!notEvaluated.empty()) {
        out << "## Not evaluated\n\nThe trace lacks what these rules need:\n\n";
        for (const RuleOutcome* o : notEvaluated)
            out << "- " << code(o->ruleId) << ": " << markdownText(o->reason) << "\n";
        out << "\n";
    }
    if (!notApplicable.empty()) {
        out << "## Not applicable\n\n";
        for (const RuleOutcome* o : notApplicable)
            out << "- " << code(o->ruleId) << ": " << markdownText(o->reason) << "\n";
        out << "\n";
    }
    if (!clean.empty()) {
        out << "## Checked, nothing found\n\n";
        for (const RuleOutcome* o : clean)
            out << "- " << code(o->ruleId) << (o->reason.empty() ? "" : ": " + markdownText(o->reason)) << "\n";
        out << "\n";
    }
}

void writeDataLoss(std::ostream& out, const AdviceReport& report) {
    const std::vector<DataLoss> losses = dataLoss(report);
    if (losses.empty()) return;
    out << "## Data loss\n\nEvents lost or repaired while recording or reading; the advice rests on the rest.\n\n"
        << "| Events | What | " << (report.ranks.size() > 1 ? "Ranks | " : "") << "Why |\n|---:|---|"
        << (report.ranks.size() > 1 ? "---|" : "") << "---|\n";
    for (const DataLoss& d : losses) {
        out << "| " << groupedInteger(d.count) << " | " << code(d.name) << " | ";
        if (report.ranks.size() > 1) out << rankList(d.ranks, report.ranks.size()) << " | ";
        out << markdownText(d.description) << " |\n";
    }
    out << "\n";
}

} // namespace

void writeMarkdownReport(std::ostream& out, const AdviceReport& report, const ReportContext& context) {
    const auto findings = groupedFindings(report);
    out << "# tuneup advice\n\n";
    out << findings.size() << (findings.size() == 1 ? " finding" : " findings") << " in " << report.ranks.size()
        << (report.ranks.size() == 1 ? " trace" : " traces");
    if (report.medianStepNs() > 0) out << ", median step " << formatDuration(report.medianStepNs());
    out << ".\n\n";
    writeInputs(out, report, context);
    writeDataLoss(out, report);

    out << "## Findings\n\n";
    if (findings.empty()) {
        out << "No findings.\n\n";
        if (const std::string note = floorNote(report); !note.empty()) out << markdownText(note) << ".\n\n";
    } else {
        out << "Ranked by estimated gain per step.\n\n| # | Severity | Rule | Gain/step | Share | Finding |\n"
               "|---:|---|---|---:|---:|---|\n";
        for (size_t i = 0; i < findings.size(); ++i) {
            const Finding& f = *findings[i].finding;
            out << "| " << i + 1 << " | " << severityLabel(f.severity) << " | " << code(f.ruleId)
                << (findings[i].ranks.empty() ? "" : " " + rankList(findings[i].ranks, report.ranks.size())) << " | "
                << gainText(f) << " | " << markdownText(stepShareText(f)) << " | " << markdownText(f.title) << " |\n";
        }
        out << "\n";
        if (const std::string note = floorNote(report); !note.empty()) out << markdownText(note) << ".\n\n";
        // Details for the first ones; a rule file can return hundreds of rows.
        constexpr size_t kDetailed = 50;
        for (size_t i = 0; i < findings.size() && i < kDetailed; ++i)
            writeFinding(out, i + 1, findings[i], report, context);
        if (findings.size() > kDetailed)
            out << "… " << findings.size() - kDetailed << " more findings, listed in the table above; "
                << "`--format json` has them all.\n\n";
    }
    writeRules(out, report);
    out << "---\n*tuneup " << markdownText(context.toolVersion)
        << "* · `tuneup advise … --format html -o report.html` gives charts of the steps and the busiest kernels.\n";
}

} // namespace tuneup::analysis
