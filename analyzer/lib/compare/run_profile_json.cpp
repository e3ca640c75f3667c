#include "compare/run_profile_json.h"

#include "compare/compare_report.h"
#include "utf8.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <stdexcept>

namespace tuneup::analysis {

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void str(Writer& w, std::string_view s) {
    const std::string clean = validUtf8(s);
    w.String(clean.data(), rapidjson::SizeType(clean.size()));
}

void strings(Writer& w, const std::vector<std::string>& list) {
    w.StartArray();
    for (const std::string& s : list)
        str(w, s);
    w.EndArray();
}

void pairs(Writer& w, const std::vector<std::pair<std::string, std::string>>& list) {
    w.StartArray();
    for (const auto& [k, v] : list) {
        w.StartArray();
        str(w, k);
        str(w, v);
        w.EndArray();
    }
    w.EndArray();
}

// Reading: every member checked, so that a damaged summary is an error, not a crash or a zero.
const rapidjson::Value& member(const rapidjson::Value& v, const char* name) {
    if (!v.IsObject() || !v.HasMember(name)) throw std::runtime_error(std::string("no \"") + name + "\"");
    return v[name];
}
int64_t integer(const rapidjson::Value& v, const char* name) {
    const rapidjson::Value& m = member(v, name);
    if (!m.IsInt64()) throw std::runtime_error(std::string("\"") + name + "\" is not an integer");
    return m.GetInt64();
}
std::string text(const rapidjson::Value& v) {
    if (!v.IsString()) throw std::runtime_error("a string was expected");
    return std::string(v.GetString(), v.GetStringLength());
}
const rapidjson::Value& array(const rapidjson::Value& v, const char* name) {
    const rapidjson::Value& m = member(v, name);
    if (!m.IsArray()) throw std::runtime_error(std::string("\"") + name + "\" is not an array");
    return m;
}
std::vector<std::pair<std::string, std::string>> readPairs(const rapidjson::Value& v, const char* name) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& p : array(v, name).GetArray()) {
        if (!p.IsArray() || p.Size() != 2) throw std::runtime_error(std::string("\"") + name + "\" holds a bad pair");
        out.emplace_back(text(p[0]), text(p[1]));
    }
    return out;
}

} // namespace

std::string runProfileToJson(const RunProfile& p) {
    rapidjson::StringBuffer buffer;
    Writer w(buffer);
    w.StartObject();
    w.Key("inputs");
    strings(w, p.inputs);
    w.Key("files");
    strings(w, p.files);
    w.Key("ranks");
    w.Uint64(p.ranks);
    w.Key("step_source");
    str(w, p.stepSource);
    w.Key("steps_found");
    w.Uint64(p.stepsFound);
    w.Key("warmup_steps");
    w.Uint64(p.warmupSteps);
    w.Key("step_ms");
    w.StartArray();
    for (double v : p.stepMs)
        w.Double(v);
    w.EndArray();
    w.Key("per_step_ns");
    w.StartObject();
    for (const auto& [name, field] : kStepBreakdownFields) {
        w.Key(name.data(), rapidjson::SizeType(name.size()));
        w.Int64(p.perStep.*field);
    }
    w.EndObject();
    w.Key("has_gpu_work");
    w.Bool(p.hasGpuWork);
    w.Key("kernel_steps");
    w.Uint64(p.kernelSteps);
    w.Key("kernels");
    w.StartArray();
    for (const KernelStat& k : p.kernels) {
        w.StartObject();
        w.Key("name");
        str(w, k.name);
        w.Key("class");
        str(w, kernelClassName(k.kernelClass));
        w.Key("calls");
        w.Int64(k.calls);
        w.Key("total_ns");
        w.Int64(k.totalNs);
        w.EndObject();
    }
    w.EndArray();
    w.Key("findings");
    w.StartArray();
    for (const FindingRef& f : p.findings) {
        w.StartObject();
        w.Key("rule");
        str(w, f.ruleId);
        w.Key("severity");
        str(w, severityName(f.severity));
        w.Key("title");
        str(w, f.title);
        w.Key("gain_per_step_ns");
        w.Int64(f.gainPerStepNs);
        w.EndObject();
    }
    w.EndArray();
    w.Key("settings");
    pairs(w, p.settings);
    w.Key("environment");
    std::vector<std::pair<std::string, std::string>> env;
    for (const EnvironmentFact& f : p.environment)
        env.emplace_back(f.key, f.value);
    pairs(w, env);
    w.Key("notes");
    strings(w, p.notes);
    w.EndObject();
    return buffer.GetString();
}

RunProfile runProfileFromJson(std::string_view json) {
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseFullPrecisionFlag>(json.data(), json.size()); // step times come back exactly
    if (doc.HasParseError()) throw std::runtime_error("the summary is not JSON");
    RunProfile p;
    for (const auto& s : array(doc, "inputs").GetArray())
        p.inputs.push_back(text(s));
    for (const auto& s : array(doc, "files").GetArray())
        p.files.push_back(text(s));
    p.ranks = size_t(integer(doc, "ranks"));
    p.stepSource = text(member(doc, "step_source"));
    p.stepsFound = size_t(integer(doc, "steps_found"));
    p.warmupSteps = size_t(integer(doc, "warmup_steps"));
    for (const auto& v : array(doc, "step_ms").GetArray()) {
        if (!v.IsNumber() || !(v.GetDouble() >= 0)) throw std::runtime_error("\"step_ms\" holds a bad time");
        p.stepMs.push_back(v.GetDouble());
    }
    const rapidjson::Value& perStep = member(doc, "per_step_ns");
    for (const auto& [name, field] : kStepBreakdownFields) {
        // Summaries before the idle inside CUDA graph replays had a part of its own lack "idle_graph".
        if (field == &StepBreakdown::idleGraphNs && !perStep.HasMember("idle_graph")) continue;
        p.perStep.*field = integer(perStep, std::string(name).c_str());
    }
    if (!member(doc, "has_gpu_work").IsBool()) throw std::runtime_error("\"has_gpu_work\" is not true or false");
    p.hasGpuWork = doc["has_gpu_work"].GetBool();
    p.kernelSteps = size_t(integer(doc, "kernel_steps"));
    for (const auto& k : array(doc, "kernels").GetArray()) {
        KernelStat stat;
        stat.name = text(member(k, "name"));
        const std::string cls = text(member(k, "class"));
        stat.kernelClass = KernelClass::Other;
        for (int c = 0; c <= int(KernelClass::Other); ++c)
            if (kernelClassName(KernelClass(c)) == cls) stat.kernelClass = KernelClass(c);
        stat.calls = integer(k, "calls");
        stat.totalNs = integer(k, "total_ns");
        p.kernels.push_back(std::move(stat));
    }
    for (const auto& f : array(doc, "findings").GetArray()) {
        FindingRef ref;
        ref.ruleId = text(member(f, "rule"));
        ref.severity = parseSeverity(text(member(f, "severity"))).value_or(Severity::Info);
        ref.title = text(member(f, "title"));
        ref.gainPerStepNs = integer(f, "gain_per_step_ns");
        p.findings.push_back(std::move(ref));
    }
    p.settings = readPairs(doc, "settings");
    for (auto& [k, v] : readPairs(doc, "environment"))
        p.environment.push_back({ std::move(k), std::move(v) });
    for (const auto& s : array(doc, "notes").GetArray())
        p.notes.push_back(text(s));
    return p;
}

} // namespace tuneup::analysis
