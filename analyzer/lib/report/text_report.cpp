#include "advise/setting_text.h"
#include "report/measured_gain.h"
#include "report/report.h"
#include "report/report_helpers.h"
#include "units.h"
#include "utf8.h"

#include <algorithm>
#include <iomanip>
#include <set>
#include <sstream>

namespace tuneup::analysis {

namespace {

struct Style {
    bool color;
    std::string bold(std::string_view s) const { return wrap("1", s); }
    std::string dim(std::string_view s) const { return wrap("2", s); }
    std::string severity(Severity v, std::string_view s) const {
        return wrap(v == Severity::Error ? "1;31" : v == Severity::Warning ? "1;33" : "1;36", s);
    }
    std::string wrap(std::string_view code, std::string_view s) const {
        return color ? "\033[" + std::string(code) + "m" + std::string(s) + "\033[0m" : std::string(s);
    }
};

std::string share(int64_t part, int64_t whole) {
    return whole > 0 ? formatPercent(double(part) / double(whole)) : "-";
}

void writeBreakdown(std::ostream& out, const RankSummary& rank, const Style& style) {
    const StepBreakdown& b = rank.steps.median;
    const auto& d = rank.steps.detection;
    if (d.steps.empty()) {
        out << "  steps: none found: " << d.detail << "\n";
        return;
    }
    out << "  " << d.steps.size() << " steps (" << stepSourceName(d.source) << "), median step "
        << style.bold(formatDuration(b.stepNs)) << "\n";
    if (!rank.steps.gpuActivity()) {
        out << "  " << kCpuOnly << ": waiting for data " << formatDuration(b.idleDataNs) << " ("
            << share(b.idleDataNs, b.stepNs) << "), other work " << formatDuration(b.idleHostNs) << " ("
            << share(b.idleHostNs, b.stepNs) << ")\n";
        return;
    }
    out << "  GPU " << rank.steps.device << " per step: compute " << formatDuration(b.computeNs) << " ("
        << share(b.computeNs, b.stepNs) << ")";
    if (b.communicationNs)
        out << ", communication " << formatDuration(b.communicationNs) << " (" << share(b.communicationNs, b.stepNs)
            << ")";
    out << ", copies " << formatDuration(b.memcpyNs) << " (" << share(b.memcpyNs, b.stepNs) << ")";
    if (b.memsetNs) out << ", memset " << formatDuration(b.memsetNs);
    out << ", idle " << formatDuration(b.idleNs) << " (" << share(b.idleNs, b.stepNs) << ")\n";
    if (b.idleNs > 0)
        out << "  idle: waiting for data " << formatDuration(b.idleDataNs) << ", after synchronisation "
            << formatDuration(b.idleSyncNs) << ", launch/Python overhead " << formatDuration(b.idleHostNs)
            << (b.idleGraphNs ? ", inside CUDA graph replays " + formatDuration(b.idleGraphNs) : std::string()) << "\n";
}

std::string indent(std::string_view text, std::string_view prefix) {
    std::string out;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = text.find('\n', start);
        out += std::string(prefix)
            + std::string(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start))
            + "\n";
        if (end == std::string_view::npos) break;
        start = end + 1;
    }
    return out;
}

// Every event the recording or the reading lost or repaired, before the findings that rest on the rest.
void writeDataLoss(std::ostream& out, const AdviceReport& report, const Style& style) {
    const std::vector<DataLoss> losses = dataLoss(report);
    if (losses.empty()) return;
    out << "\n"
        << style.severity(Severity::Warning, "Data loss")
        << " (events lost or repaired while recording or reading; the advice rests on the rest):\n";
    for (const DataLoss& d : losses) {
        out << "  " << std::setw(12) << groupedInteger(d.count) << "  " << d.name;
        if (report.ranks.size() > 1) out << " [" << rankList(d.ranks, report.ranks.size()) << "]";
        out << ": " << d.description << "\n";
    }
}

void writeTextReportRaw(std::ostream& out, const AdviceReport& report, const ReportContext& context) {
    const Style style { context.color };
    const std::vector<size_t> described = ranksDescribed(report);
    if (described.size() < report.ranks.size()) {
        out << style.bold(std::to_string(report.ranks.size()) + " ranks") << ", median step "
            << formatDuration(report.medianStepNs()) << "; the fastest, the median and the slowest rank:\n";
    }
    for (size_t i : described) {
        const RankSummary& rank = report.ranks[i];
        out << style.bold(inputLabel(report, context, i));
        if (report.ranks.size() > 1) out << " (rank " << rank.rank << ")";
        out << " — " << sourceFormatName(rank.format) << ", " << rank.eventCount << " events\n";
        writeBreakdown(out, rank, style);
        if (!rank.settings.empty()) {
            out << "  recorded settings:";
            for (size_t k = 0; k < rank.settings.size(); ++k) {
                const SettingText s = readableSetting(rank.settings[k].first, rank.settings[k].second);
                out << (k ? ", " : " ") << s.name << " " << s.value;
            }
            out << "\n";
        }
    }

    writeDataLoss(out, report, style);

    const auto groups = groupedFindings(report);
    out << "\n" << style.bold(groups.empty() ? "No findings." : "Findings, by estimated gain per step:") << "\n";
    constexpr size_t kDetailed = 3; // the rest on one line each, to fit a screen
    for (size_t i = 0; i < groups.size(); ++i) {
        const Finding& f = *groups[i].finding;
        std::ostringstream gain;
        if (f.gain && f.gain->perStepNs > 0) gain << "-" << formatDuration(f.gain->perStepNs) << "/step, ";
        gain << stepShareText(f);
        const std::string ranks
            = groups[i].ranks.empty() ? "" : " [" + rankList(groups[i].ranks, report.ranks.size()) + "]";
        out << " " << i + 1 << ". " << style.severity(f.severity, std::string(severityName(f.severity))) << " "
            << style.bold(f.ruleId) << ranks << "  " << gain.str() << "\n    " << f.title << "\n";
        if (i >= kDetailed) continue;
        if (groups[i].ranks.size() > 1)
            out << "    " << style.dim("shown:") << " rank " << f.rank
                << (f.gain && f.gain->perStepNs > 0 ? ", where it costs most" : ", the first") << "\n";
        if (!f.evidence.facts.empty()) {
            out << "    " << style.dim("evidence:");
            for (size_t k = 0; k < f.evidence.facts.size() && k < 4; ++k)
                out << (k ? "; " : " ") << f.evidence.facts[k].first << " " << f.evidence.facts[k].second;
            out << "\n";
        }
        // The lines behind the evidence, then where the main thread's Python was meanwhile (sampled): two each.
        for (const bool sampled : { false, true }) {
            size_t shown = 0;
            for (const SourceSite& site : f.sources) {
                if (site.sampled != sampled || shown == 2) continue;
                out << (shown++ ? "; " : "    " + style.dim(sampled ? "meanwhile:" : "where:") + " ")
                    << sourceSiteText(site);
            }
            if (shown) out << "\n";
        }
        if (f.gain && !f.gain->model.empty())
            out << "    " << style.dim("gain:") << " " << f.gain->model << " (confidence " << f.gain->confidence
                << ")\n";
        if (const std::string measured = measuredGainText(context, f); !measured.empty())
            out << "    " << style.dim("measured:") << " " << measured << "\n";
        if (!f.fixPython.empty()) out << "    " << style.dim("fix:") << "\n" << indent(f.fixPython, "      ");
    }

    if (const std::string note = floorNote(report); !note.empty()) out << style.dim(note + ".") << "\n";

    // Per-rank rules repeat their outcome for every rank: list each rule once. Rules that could not run
    // for the same reason share a line ("needs GPU kernel activity: a, b, c"), so the list stays short.
    std::string clean;
    std::vector<std::pair<std::string, std::string>> notEvaluatedByReason, notApplicableByReason;
    std::set<std::pair<std::string, RuleStatus>> listed;
    for (const RuleOutcome& o : report.outcomes) {
        if (o.status == RuleStatus::Raised || !listed.emplace(o.ruleId, o.status).second) continue;
        if (o.status == RuleStatus::Clean) {
            clean += (clean.empty() ? "" : ", ") + o.ruleId;
            continue;
        }
        auto& byReason = o.status == RuleStatus::NotEvaluated ? notEvaluatedByReason : notApplicableByReason;
        auto it = std::find_if(byReason.begin(), byReason.end(), [&](const auto& r) { return r.first == o.reason; });
        if (it == byReason.end())
            byReason.emplace_back(o.reason, o.ruleId);
        else
            it->second += ", " + o.ruleId;
    }
    auto lines = [](const std::vector<std::pair<std::string, std::string>>& byReason) {
        std::string text;
        for (const auto& [reason, rules] : byReason)
            text += "    " + rules + ": " + reason + "\n";
        return text;
    };
    const std::string notEvaluated = lines(notEvaluatedByReason), notApplicable = lines(notApplicableByReason);
    if (!notEvaluated.empty())
        out << "\n" << style.bold("Not evaluated") << " (the trace lacks what they need):\n" << notEvaluated;
    if (!notApplicable.empty()) out << style.bold("Not applicable") << ":\n" << notApplicable;
    if (!clean.empty()) out << style.bold("Checked, nothing found") << ": " << clean << "\n";
    const std::string first = context.inputs.empty() ? "run.db" : context.inputs.front();
    out << "\n"
        << style.dim("More: tuneup advise " + first + " --format html -o report.html (evidence, charts, C++ fixes)")
        << "\n";
}

} // namespace

// Names from traces may hold invalid UTF-8 (a damaged file, Latin-1): the report, a screen's worth, is
// made whole and then written with U+FFFD in their place, as every other format is.
void writeTextReport(std::ostream& out, const AdviceReport& report, const ReportContext& context) {
    std::ostringstream text;
    writeTextReportRaw(text, report, context);
    out << validUtf8(text.str());
}

} // namespace tuneup::analysis
