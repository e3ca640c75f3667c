// `tuneup advise --format junit`: one test case per rule, so that a CI job can gate on findings alone
// and show them where it shows test results. A rule fails when it raised a finding at or above
// --fail-on (as the exit code does: without --fail-on nothing fails); rules that were not evaluated
// or do not apply are skipped, with why; clean rules pass.

#include "report/report.h"
#include "report/report_helpers.h"
#include "report/xml_text.h"
#include "units.h"

#include <map>

namespace tuneup::analysis {

namespace {

// A rule over the job's ranks: its findings, else why it has none.
struct RuleCase {
    std::string id;
    RuleStatus status = RuleStatus::NotEvaluated;
    std::string reason;
    std::vector<const FindingGroup*> findings;
};

// Raised beats clean beats not applicable beats not evaluated: a per-rank rule is as far as any rank got.
int rankOfStatus(RuleStatus s) {
    switch (s) {
    case RuleStatus::Raised:
        return 3;
    case RuleStatus::Clean:
        return 2;
    case RuleStatus::NotApplicable:
        return 1;
    case RuleStatus::NotEvaluated:
        return 0;
    }
    return 0;
}

} // namespace

void writeJunitReport(std::ostream& out, const AdviceReport& report, const ReportContext& context) {
    std::vector<RuleCase> cases;
    std::map<std::string, size_t> byId;
    for (const RuleOutcome& o : report.outcomes) {
        auto [it, fresh] = byId.try_emplace(o.ruleId, cases.size());
        if (fresh) cases.push_back({ o.ruleId, o.status, o.reason, {} });
        RuleCase& c = cases[it->second];
        if (rankOfStatus(o.status) > rankOfStatus(c.status)) {
            c.status = o.status;
            c.reason = o.reason;
        }
    }
    const std::vector<FindingGroup> groups = groupedFindings(report);
    for (const FindingGroup& g : groups)
        if (auto it = byId.find(g.finding->ruleId); it != byId.end()) cases[it->second].findings.push_back(&g);

    size_t failures = 0, skipped = 0;
    const auto fails = [&](const RuleCase& c) {
        if (!context.failOn) return false;
        for (const FindingGroup* g : c.findings)
            if (g->finding->severity >= *context.failOn) return true;
        return false;
    };
    for (const RuleCase& c : cases) {
        failures += fails(c);
        skipped += c.status == RuleStatus::NotEvaluated || c.status == RuleStatus::NotApplicable;
    }
    std::string inputs;
    for (const std::string& input : context.inputs)
        inputs += (inputs.empty() ? "" : " ") + input;
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out << "<testsuites name=\"tuneup advise\" tests=\"" << cases.size() << "\" failures=\"" << failures
        << "\" errors=\"0\" skipped=\"" << skipped << "\">\n";
    out << "  <testsuite name=\"tuneup advise " << xmlText(inputs) << "\" tests=\"" << cases.size() << "\" failures=\""
        << failures << "\" errors=\"0\" skipped=\"" << skipped << "\">\n";
    for (const RuleCase& c : cases) {
        out << "    <testcase classname=\"tuneup.advise\" name=\"" << xmlText(c.id) << "\">\n";
        std::string body;
        for (const FindingGroup* g : c.findings) {
            const Finding& f = *g->finding;
            body += std::string(severityName(f.severity)) + ": " + f.title;
            if (!g->ranks.empty()) body += " (" + rankList(g->ranks, report.ranks.size()) + ")";
            if (f.gain && f.gain->perStepNs > 0)
                body += "; estimated gain " + formatDuration(f.gain->perStepNs) + " per step";
            body += " (" + stepShareText(f) + ")";
            body += "\n    doc: " + docLink(f) + "\n";
        }
        if (fails(c)) {
            const Finding& first = *c.findings.front()->finding;
            out << "      <failure message=\"" << xmlText(first.title) << "\" type=\"" << severityName(first.severity)
                << "\">" << xmlText(body) << "</failure>\n";
        } else if (c.status == RuleStatus::NotEvaluated || c.status == RuleStatus::NotApplicable)
            out << "      <skipped message=\"" << xmlText(std::string(ruleStatusName(c.status)) + ": " + c.reason)
                << "\"/>\n";
        if (!body.empty() && !fails(c)) // a failure carries the findings already
            out << "      <system-out>" << xmlText(body) << "</system-out>\n";
        else if (c.status == RuleStatus::Clean && !c.reason.empty())
            out << "      <system-out>" << xmlText("clean: " + c.reason) << "</system-out>\n";
        out << "    </testcase>\n";
    }
    // What recording or reading lost is said in every report; here beside the cases, as the suite's output.
    if (const std::vector<DataLoss> losses = dataLoss(report); !losses.empty()) {
        std::string text
            = "Data loss (events lost or repaired while recording or reading; the advice rests on the rest):\n";
        for (const DataLoss& d : losses) {
            text += "  " + groupedInteger(d.count) + "  " + d.name;
            if (report.ranks.size() > 1) text += " [" + rankList(d.ranks, report.ranks.size()) + "]";
            text += ": " + d.description + "\n";
        }
        out << "    <system-out>" << xmlText(text) << "</system-out>\n";
    }
    out << "  </testsuite>\n</testsuites>\n";
}

} // namespace tuneup::analysis
