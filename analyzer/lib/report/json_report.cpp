#include "report/measured_gain.h"
#include "report/report.h"
#include "report/report_helpers.h"
#include "utf8.h"

#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/prettywriter.h>

namespace tuneup::analysis {

namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::OStreamWrapper>;

// Text from traces may hold invalid UTF-8, which would make the report invalid JSON.
void string(Writer& w, std::string_view s) {
    const std::string valid = validUtf8(s);
    w.String(valid.data(), rapidjson::SizeType(valid.size()));
}
void key(Writer& w, std::string_view s) {
    const std::string valid = validUtf8(s);
    w.Key(valid.data(), rapidjson::SizeType(valid.size()));
}

void breakdown(Writer& w, const StepBreakdown& b) {
    w.StartObject();
    for (const auto& [name, field] : kStepBreakdownFields) {
        key(w, std::string(name) + "_ns");
        w.Int64(b.*field);
    }
    w.EndObject();
}

// What recording or reading this input lost or repaired: [{name, severity, count, description}].
void dataLoss(Writer& w, const std::vector<ImportStat>& losses) {
    key(w, "data_loss");
    w.StartArray();
    for (const ImportStat& stat : losses) {
        w.StartObject();
        key(w, "name");
        string(w, stat.name);
        key(w, "severity");
        string(w, stat.severity == StatSeverity::Error ? "error" : "data_loss");
        key(w, "count");
        w.Int64(stat.value);
        key(w, "description");
        string(w, stat.description);
        w.EndObject();
    }
    w.EndArray();
}

// tuneup advise --bench: what tuneup bench measured for the finding, or null.
void measured(Writer& w, const BenchCandidate* c) {
    key(w, "measured");
    if (!c) {
        w.Null();
        return;
    }
    w.StartObject();
    key(w, "candidate");
    string(w, c->name);
    key(w, "verdict");
    string(w, benchVerdictName(c->verdict));
    const auto number = [&](const char* name, const std::optional<double>& v) {
        key(w, name);
        v ? w.Double(*v) : w.Null();
    };
    number("speedup", c->speedup);
    key(w, "speedup_ci");
    if (c->speedupCi) {
        w.StartArray();
        w.Double(c->speedupCi->first);
        w.Double(c->speedupCi->second);
        w.EndArray();
    } else
        w.Null();
    number("p_value", c->pValue);
    number("estimated_speedup", c->estimatedSpeedup);
    w.EndObject();
}

void finding(Writer& w, const Finding& f, const ReportContext& context) {
    w.StartObject();
    key(w, "rule");
    string(w, f.ruleId);
    key(w, "severity");
    string(w, severityName(f.severity));
    key(w, "kind");
    string(w, findingKindName(f.kind));
    key(w, "title");
    string(w, f.title);
    key(w, "detail");
    string(w, f.detail);
    key(w, "rank");
    if (f.rank >= 0)
        w.Int(f.rank);
    else
        w.Null();
    key(w, "step_share"); // of the median step; null without a time estimate or without steps
    if (f.gain && f.gain->stepShare > 0)
        w.Double(f.gain->stepShare);
    else
        w.Null();
    key(w, "gain");
    if (f.gain) {
        w.StartObject();
        key(w, "per_step_ns");
        w.Int64(f.gain->perStepNs);
        key(w, "step_share");
        w.Double(f.gain->stepShare);
        key(w, "model");
        string(w, f.gain->model);
        key(w, "confidence");
        string(w, f.gain->confidence);
        w.EndObject();
    } else {
        w.Null();
    }
    if (context.bench) measured(w, measuredFor(context, f)); // only with --bench: the layout is unchanged without
    key(w, "sources"); // the user's code behind the evidence, the most events first; then sampled lines
    w.StartArray();
    for (const SourceSite& site : f.sources) {
        w.StartObject();
        key(w, "file");
        string(w, site.file);
        key(w, "line");
        w.Int64(site.line);
        key(w, "function");
        string(w, site.function);
        key(w, "events");
        w.Uint64(site.events);
        key(w, "share");
        w.Double(site.share);
        key(w, "sampled");
        w.Bool(site.sampled);
        key(w, "call");
        string(w, site.call);
        w.EndObject();
    }
    w.EndArray();
    key(w, "evidence");
    w.StartObject();
    key(w, "facts");
    w.StartObject();
    for (const auto& [label, value] : f.evidence.facts) {
        key(w, label);
        string(w, value);
    }
    w.EndObject();
    key(w, "events");
    w.StartArray();
    for (const EventRef& e : f.evidence.events) {
        w.StartObject();
        key(w, "table");
        string(w, eventTableName(e.table));
        key(w, "row");
        w.Int(e.row);
        w.EndObject();
    }
    w.EndArray();
    key(w, "events_total");
    w.Uint64(f.evidence.eventsTotal);
    key(w, "spans");
    w.StartArray();
    for (const TimeSpan& s : f.evidence.spans) {
        w.StartArray();
        w.Int64(s.startNs);
        w.Int64(s.endNs);
        w.EndArray();
    }
    w.EndArray();
    w.EndObject();
    key(w, "fix");
    w.StartObject();
    key(w, "python");
    string(w, f.fixPython);
    key(w, "cpp");
    string(w, f.fixCpp);
    w.EndObject();
    key(w, "doc");
    string(w, docLink(f));
    w.EndObject();
}

} // namespace

void writeJsonReport(std::ostream& out, const AdviceReport& report, const ReportContext& context) {
    rapidjson::OStreamWrapper stream(out);
    Writer w(stream);
    w.SetIndent(' ', 2);
    w.StartObject();
    key(w, "schema_version");
    w.Int(kJsonReportSchemaVersion);
    key(w, "tool");
    w.StartObject();
    key(w, "name");
    string(w, "tuneup");
    key(w, "version");
    string(w, context.toolVersion);
    w.EndObject();
    key(w, "inputs");
    w.StartArray();
    for (size_t i = 0; i < report.ranks.size(); ++i) {
        const RankSummary& r = report.ranks[i];
        w.StartObject();
        key(w, "path");
        string(w, i < context.inputs.size() ? context.inputs[i] : r.path);
        key(w, "format");
        string(w, sourceFormatName(r.format));
        key(w, "rank");
        w.Int(r.rank);
        key(w, "events");
        w.Uint64(r.eventCount);
        key(w, "steps");
        w.StartObject();
        key(w, "source");
        string(w, stepSourceName(r.steps.detection.source));
        key(w, "count");
        w.Uint64(r.steps.detection.steps.size());
        key(w, "detail");
        string(w, r.steps.detection.detail);
        w.EndObject();
        key(w, "gpu");
        w.Int(r.steps.device);
        key(w, "median_step");
        breakdown(w, r.steps.median);
        key(w, "recorded_settings"); // the torch probes' flags and the Python bootstrap's facts
        w.StartObject();
        for (const auto& [name, value] : r.settings) {
            key(w, name);
            string(w, value);
        }
        w.EndObject();
        if (!r.losses.empty()) dataLoss(w, r.losses); // only when something was lost: most traces lose nothing
        w.EndObject();
    }
    w.EndArray();
    key(w, "median_step_ns");
    w.Int64(report.medianStepNs());
    if (report.floor) {
        key(w, "materiality_floor");
        w.StartObject();
        key(w, "all");
        w.Bool(report.floor->showAll);
        key(w, "min_step_share");
        w.Double(report.floor->minStepShare);
        key(w, "min_per_step_ns");
        w.Int64(report.floor->minPerStepNs);
        key(w, "findings_below");
        w.Uint64(report.findingsBelowFloor);
        w.EndObject();
    }
    key(w, "findings");
    w.StartArray();
    for (const Finding* f : report.ranked())
        finding(w, *f, context);
    w.EndArray();
    // Rules that raised nothing, and why: clean (what was checked), not evaluated (what they need),
    // not applicable.
    key(w, "rules_without_findings");
    w.StartArray();
    for (const RuleOutcome& o : report.outcomes) {
        if (o.status == RuleStatus::Raised) continue;
        w.StartObject();
        key(w, "rule");
        string(w, o.ruleId);
        key(w, "status");
        string(w, ruleStatusName(o.status));
        key(w, "reason");
        string(w, o.reason);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    out << "\n";
}

} // namespace tuneup::analysis
