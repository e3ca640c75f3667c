// `tuneup compare --format json` (docs/compare.md#json). Numbers not measured are null, never 0.

#include "compare/compare_report.h"

#include <cmath>
#include <rapidjson/encodings.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

namespace tuneup::analysis {

namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::OStreamWrapper>;

// Text from traces may hold bytes that are not UTF-8: such a string is written with '?' for each byte
// outside ASCII, so that the file stays valid JSON.
void str(Writer& w, std::string_view s) {
    rapidjson::MemoryStream bytes(s.data(), s.size());
    rapidjson::StringBuffer ignored;
    bool valid = true;
    while (valid && bytes.Tell() < s.size())
        valid = rapidjson::UTF8<>::Validate(bytes, ignored);
    std::string ascii(s);
    if (!valid)
        for (char& c : ascii)
            if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    w.String(ascii.data(), rapidjson::SizeType(ascii.size()));
}

void number(Writer& w, double v) {
    if (std::isfinite(v))
        w.Double(v);
    else
        w.Null();
}

void positive(Writer& w, double v) { // a ratio or time that was not measured is 0 in the result
    if (v > 0)
        number(w, v);
    else
        w.Null();
}

void key(Writer& w, const char* k) {
    w.Key(k);
}

void findings(Writer& w, const std::vector<FindingRef>& list) {
    w.StartArray();
    for (const FindingRef& f : list) {
        w.StartObject();
        key(w, "rule");
        str(w, f.ruleId);
        key(w, "severity");
        str(w, severityName(f.severity));
        key(w, "title");
        str(w, f.title);
        key(w, "gain_per_step_ms");
        if (f.gainPerStepNs)
            number(w, double(f.gainPerStepNs) / 1e6);
        else
            w.Null();
        w.EndObject();
    }
    w.EndArray();
}

void environment(Writer& w, const Environment& env) {
    w.StartObject();
    for (const EnvironmentFact& f : env) {
        key(w, f.key.c_str());
        str(w, f.value);
    }
    w.EndObject();
}

void side(Writer& w, const RunProfile& p) {
    w.StartObject();
    key(w, "inputs");
    w.StartArray();
    for (const std::string& s : p.inputs)
        str(w, s);
    w.EndArray();
    key(w, "files");
    w.StartArray();
    for (const std::string& s : p.files)
        str(w, s);
    w.EndArray();
    key(w, "ranks");
    w.Uint64(p.ranks);
    key(w, "step_source");
    str(w, p.stepSource);
    key(w, "steps_found");
    w.Uint64(p.stepsFound);
    key(w, "warmup_steps");
    w.Uint64(p.warmupSteps);
    key(w, "step_ms");
    w.StartArray();
    for (double v : p.stepMs)
        number(w, v);
    w.EndArray();
    key(w, "settings");
    w.StartObject();
    for (const auto& [k, v] : p.settings) {
        key(w, k.c_str());
        str(w, v);
    }
    w.EndObject();
    w.EndObject();
}

} // namespace

void writeCompareJson(std::ostream& os, const CompareResult& r, const CompareReportContext& context) {
    rapidjson::OStreamWrapper stream(os);
    Writer w(stream);
    w.SetIndent(' ', 2);
    w.StartObject();
    key(w, "schema_version");
    w.Int(kCompareSchemaVersion);
    key(w, "tool_version");
    str(w, context.toolVersion);
    key(w, "verdict");
    str(w, verdictName(r.verdict));
    key(w, "step_verdict");
    str(w, verdictName(r.stepVerdict));
    key(w, "summary");
    str(w, verdictSentence(r));

    const StepTimeComparison& s = r.stepTime;
    key(w, "step_time");
    w.StartObject();
    key(w, "base_ms");
    positive(w, s.baseMs);
    key(w, "new_ms");
    positive(w, s.newMs);
    key(w, "ratio");
    positive(w, s.ratio);
    key(w, "ratio_ci");
    if (s.low > 0) {
        w.StartArray();
        number(w, s.low);
        number(w, s.high);
        w.EndArray();
    } else
        w.Null();
    key(w, "confidence");
    number(w, s.confidence);
    key(w, "threshold");
    number(w, s.threshold);
    key(w, "threshold_from");
    str(w, s.thresholdFrom);
    key(w, "noise");
    if (s.noise)
        number(w, *s.noise);
    else
        w.Null();
    key(w, "p_value");
    number(w, s.pValue);
    key(w, "base_steps");
    w.Uint64(s.baseSteps);
    key(w, "new_steps");
    w.Uint64(s.newSteps);
    key(w, "steps_to_decide");
    if (s.stepsToDecide)
        w.Uint64(*s.stepsToDecide);
    else
        w.Null();
    key(w, "why");
    str(w, s.why);
    key(w, "identical");
    w.Bool(s.identical);
    w.EndObject();

    key(w, "breakdown");
    w.StartArray();
    if (r.breakdownRecorded)
        for (const BreakdownDelta& b : r.breakdown) {
            w.StartObject();
            key(w, "part");
            str(w, b.key);
            key(w, "label");
            str(w, b.label);
            key(w, "base_ms");
            number(w, double(b.baseNs) / 1e6);
            key(w, "new_ms");
            number(w, double(b.newNs) / 1e6);
            key(w, "delta_ms");
            number(w, double(b.newNs - b.baseNs) / 1e6);
            w.EndObject();
        }
    w.EndArray();

    key(w, "kernel_classes");
    w.StartArray();
    for (const KernelClassDelta& c : r.kernelClasses) {
        w.StartObject();
        key(w, "class");
        str(w, kernelClassName(c.kernelClass));
        key(w, "base_per_step_us");
        number(w, double(c.baseNs) / 1e3);
        key(w, "new_per_step_us");
        number(w, double(c.newNs) / 1e3);
        key(w, "base_calls_per_step");
        number(w, c.baseCalls);
        key(w, "new_calls_per_step");
        number(w, c.newCalls);
        w.EndObject();
    }
    w.EndArray();

    key(w, "kernels");
    w.StartArray();
    for (const KernelDelta& k : r.kernels) {
        w.StartObject();
        key(w, "name");
        str(w, k.name);
        key(w, "class");
        str(w, kernelClassName(k.kernelClass));
        key(w, "base_calls");
        w.Int64(k.baseCalls);
        key(w, "new_calls");
        w.Int64(k.newCalls);
        key(w, "base_per_call_us");
        if (k.baseCalls)
            number(w, k.basePerCallUs);
        else
            w.Null();
        key(w, "new_per_call_us");
        if (k.newCalls)
            number(w, k.newPerCallUs);
        else
            w.Null();
        key(w, "per_call_ratio");
        if (k.perCallRatio)
            number(w, *k.perCallRatio);
        else
            w.Null();
        key(w, "verdict");
        str(w, kernelChangeName(k.change));
        key(w, "p_value");
        if (k.pValue)
            number(w, *k.pValue);
        else
            w.Null();
        key(w, "base_per_step_us");
        number(w, k.basePerStepUs);
        key(w, "new_per_step_us");
        number(w, k.newPerStepUs);
        key(w, "base_calls_per_step");
        number(w, k.baseCallsPerStep);
        key(w, "new_calls_per_step");
        number(w, k.newCallsPerStep);
        w.EndObject();
    }
    w.EndArray();
    key(w, "kernel_names");
    w.Uint64(r.kernelNames);
    key(w, "kernels_whole_trace");
    w.Bool(r.kernelsWholeTrace);

    key(w, "findings");
    w.StartObject();
    key(w, "appeared");
    findings(w, r.appeared);
    key(w, "resolved");
    findings(w, r.resolved);
    key(w, "persisting");
    findings(w, r.persisting);
    w.EndObject();

    key(w, "environment");
    w.StartObject();
    key(w, "comparable");
    w.Bool(r.environment.changed.empty());
    key(w, "base");
    environment(w, r.baseEnvironment);
    key(w, "new");
    environment(w, r.newEnvironment);
    key(w, "changed");
    w.StartArray();
    for (const EnvironmentChange& c : r.environment.changed) {
        w.StartObject();
        key(w, "key");
        str(w, c.key);
        key(w, "base");
        str(w, c.base);
        key(w, "new");
        str(w, c.now);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();

    key(w, "settings_changed");
    w.StartArray();
    for (const SettingChange& c : r.settings) {
        w.StartObject();
        key(w, "key");
        str(w, c.key);
        key(w, "base");
        if (c.base.empty())
            w.Null();
        else
            str(w, c.base);
        key(w, "new");
        if (c.now.empty())
            w.Null();
        else
            str(w, c.now);
        w.EndObject();
    }
    w.EndArray();

    key(w, "causes");
    w.StartArray();
    for (const std::string& c : r.causes)
        str(w, c);
    w.EndArray();
    key(w, "notes");
    w.StartArray();
    for (const std::string& n : r.notes)
        str(w, n);
    w.EndArray();
    key(w, "base");
    side(w, *r.base);
    key(w, "new");
    side(w, *r.now);
    w.EndObject();
    os << "\n";
}

} // namespace tuneup::analysis
