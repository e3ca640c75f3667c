#include "views/finding_page.h"

#include "app/rule_docs.h"
#include "models/findings_model.h"
#include "report/report_helpers.h"
#include "timeline/time_mapping.h"

namespace tuneup::gui {

using namespace analysis;

namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}
QString q(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}
QString duration(int64_t ns) {
    return q(formatDuration(ns));
}

// Markdown special characters in text that is not code.
QString escaped(QString text) {
    for (const char* c : { "\\", "*", "_", "`", "#", "<", ">", "[", "]", "|" })
        text.replace(QLatin1String(c), QStringLiteral("\\") + QLatin1String(c));
    return text;
}

// A fenced code block that survives fences inside the code.
QString codeBlock(const std::string& code, const char* language) {
    QString fence = QStringLiteral("```");
    while (q(code).contains(fence))
        fence += QLatin1Char('`');
    return fence + QLatin1String(language) + "\n" + q(code) + (code.ends_with('\n') ? "" : "\n") + fence + "\n\n";
}

// The scheme of the links to source sites: no real one, so that a click can never leave the page.
constexpr QLatin1String kSourceScheme("tuneup-source");

} // namespace

QUrl sourceLink(size_t index) {
    QUrl url;
    url.setScheme(kSourceScheme);
    url.setPath(QString::number(index));
    return url;
}

std::optional<size_t> sourceLinkIndex(const QUrl& url) {
    if (url.scheme() != kSourceScheme) return std::nullopt;
    bool ok = false;
    const qulonglong index = url.path().toULongLong(&ok);
    return ok ? std::optional(size_t(index)) : std::nullopt;
}

QString findingMarkdown(const Finding& finding, const Session& session) {
    QString md;
    md += QStringLiteral("## %1\n\n").arg(escaped(q(finding.title)));
    md += QStringLiteral("**%1** · rule `%2`").arg(q(severityName(finding.severity)), q(finding.ruleId));
    if (finding.rank >= 0 && session.rankCount() > 1) md += QStringLiteral(" · rank %1").arg(finding.rank);
    md += "\n\n";
    if (finding.gain && finding.gain->perStepNs > 0) {
        md += QStringLiteral("**Expected gain:** %1 per step").arg(gainText(finding));
        if (!finding.gain->confidence.empty()) md += QStringLiteral(", %1 confidence").arg(q(finding.gain->confidence));
        md += "\n";
        if (!finding.gain->model.empty()) md += QStringLiteral("(%1)").arg(escaped(q(finding.gain->model)));
        md += "\n\n";
    }
    if (!finding.detail.empty()) md += escaped(q(finding.detail)) + "\n\n";

    // The reports' wording (sourceSiteText), each a link that opens the file at the line.
    if (!finding.sources.empty()) {
        md += QStringLiteral("### Where in the code\n\n");
        for (size_t i = 0; i < finding.sources.size(); ++i)
            md += QStringLiteral("- [%1](%2)\n")
                      .arg(escaped(q(sourceSiteText(finding.sources[i]))), sourceLink(i).toString());
        md += "\n";
    }

    const Evidence& e = finding.evidence;
    if (!e.facts.empty() || !e.events.empty() || !e.spans.empty()) {
        md += QStringLiteral("### Evidence\n\n");
        for (const auto& [label, value] : e.facts)
            md += QStringLiteral("- %1: %2\n").arg(escaped(q(label)), escaped(q(value)));
        if (!e.events.empty()) {
            md += QStringLiteral("- %1 events highlighted on the timeline").arg(e.events.size());
            if (e.eventsTotal > e.events.size()) md += QStringLiteral(" (of %1)").arg(e.eventsTotal);
            md += "\n";
        }
        if (!e.spans.empty())
            md += QStringLiteral("- %1 time spans shaded on the timeline (Z zooms to them all)\n").arg(e.spans.size());
        md += "\n";
    }
    if (!finding.fixPython.empty() || !finding.fixCpp.empty()) {
        md += QStringLiteral("### Fix\n\n");
        if (!finding.fixPython.empty()) md += QStringLiteral("Python:\n\n") + codeBlock(finding.fixPython, "python");
        if (!finding.fixCpp.empty()) md += QStringLiteral("C++ (LibTorch):\n\n") + codeBlock(finding.fixCpp, "cpp");
    }
    const QString doc = ruleDoc(finding);
    if (!doc.isEmpty()) md += QStringLiteral("---\n\n") + doc;
    return md;
}

QString overviewMarkdown(const Session& session) {
    QString md;
    md += QStringLiteral("## %1\n\n").arg(escaped(q(session.title())));
    const AdviceReport& report = session.report();
    for (size_t r = 0; r < report.ranks.size(); ++r) {
        const RankSummary& rank = report.ranks[r];
        const StepAnalysis& steps = rank.steps;
        if (report.ranks.size() > 1) md += QStringLiteral("**%1**: ").arg(escaped(q(session.labels[r])));
        if (steps.detection.steps.empty()) {
            md += QStringLiteral("no training steps found (%1).\n\n").arg(escaped(q(steps.detection.detail)));
            continue;
        }
        md += QStringLiteral("%1 steps (%2), median step **%3**.\n\n")
                  .arg(steps.detection.steps.size())
                  .arg(escaped(q(stepSourceName(steps.detection.source))))
                  .arg(duration(steps.medianStepNs()));
        if (r == 0) {
            if (!steps.gpuActivity()) md += q(kCpuOnly) + QStringLiteral(": the step's time on the host.\n\n");
            md += QStringLiteral("| where the median step goes | time | share |\n|---|---:|---:|\n");
            for (const BreakdownPart& part : breakdownParts(steps)) {
                const int64_t ns = steps.median.*part.field;
                if (ns <= 0) continue;
                md += QStringLiteral("| %1 | %2 | %3% |\n")
                          .arg(q(part.label), duration(ns))
                          .arg(steps.median.stepNs ? 100.0 * double(ns) / double(steps.median.stepNs) : 0.0, 0, 'f', 0);
            }
            md += "\n";
        }
    }
    const auto ranked = report.ranked();
    md += ranked.empty() ? QStringLiteral("No findings: nothing the rules look for slows this run down.\n\n")
                         : QStringLiteral("%1 findings, largest gain first: choose one to see its evidence on the "
                                          "timeline, its fix and its documentation.\n\n")
                               .arg(ranked.size());
    const auto notEvaluated = rulesWithout(report, RuleStatus::NotEvaluated);
    if (!notEvaluated.empty()) {
        md += QStringLiteral("### Not checked\n\n");
        for (const RuleOutcome* o : notEvaluated)
            md += QStringLiteral("- `%1`: %2\n").arg(q(o->ruleId), escaped(q(o->reason)));
        md += "\n";
    }
    const auto clean = rulesWithout(report, RuleStatus::Clean);
    if (!clean.empty()) {
        md += QStringLiteral("### Checked, nothing found\n\n");
        for (const RuleOutcome* o : clean)
            md += QStringLiteral("- `%1`: %2\n").arg(q(o->ruleId), escaped(q(o->reason)));
        md += "\n";
    }
    const auto notApplicable = rulesWithout(report, RuleStatus::NotApplicable);
    if (!notApplicable.empty()) {
        md += QStringLiteral("### Not applicable\n\n");
        for (const RuleOutcome* o : notApplicable)
            md += QStringLiteral("- `%1`: %2\n").arg(q(o->ruleId), escaped(q(o->reason)));
    }
    return md;
}

} // namespace tuneup::gui
