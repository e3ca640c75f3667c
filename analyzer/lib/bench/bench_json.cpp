// The bench JSON (docs/bench.md#json): written by `tuneup bench --format json`, read by `tuneup advise
// --bench`. Numbers that were not measured are null, never 0.

#include "bench/bench_result.h"
#include "units.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <rapidjson/document.h>
#include <rapidjson/encodings.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <sstream>

namespace tuneup::analysis {

namespace {

constexpr std::string_view kVerdictNames[] = { "faster", "slower", "same", "inconclusive", "failed", "not-applied" };

// ---- writing --------------------------------------------------------------------------------------

using Writer = rapidjson::PrettyWriter<rapidjson::OStreamWrapper>;

// Commands and program messages may hold bytes that are not UTF-8, which would make the file invalid
// JSON: such a string is written with '?' for each byte outside ASCII.
void str(Writer& w, std::string_view s) {
    rapidjson::MemoryStream bytes(s.data(), s.size());
    rapidjson::StringBuffer ignored;
    bool valid = true;
    while (valid && bytes.Tell() < s.size())
        valid = rapidjson::UTF8<>::Validate(bytes, ignored);
    if (valid) {
        w.String(s.data(), rapidjson::SizeType(s.size()));
        return;
    }
    std::string ascii(s);
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

void optionalNumber(Writer& w, const std::optional<double>& v) {
    if (v)
        number(w, *v);
    else
        w.Null();
}

void strings(Writer& w, const std::vector<std::string>& items) {
    w.StartArray();
    for (const std::string& s : items)
        str(w, s);
    w.EndArray();
}

void stepStats(Writer& w, const BenchStepStats& s) {
    w.StartObject();
    w.Key("mean"), number(w, s.meanMs);
    w.Key("median"), number(w, s.medianMs);
    w.Key("p10"), number(w, s.p10Ms);
    w.Key("p90"), number(w, s.p90Ms);
    w.Key("n"), w.Uint64(s.n);
    w.EndObject();
}

void run(Writer& w, const BenchRun& r) {
    w.StartObject();
    w.Key("arm"), str(w, r.arm);
    w.Key("order"), w.Int(r.order);
    w.Key("exit_code"), w.Int(r.exitCode);
    w.Key("steps"), w.Uint64(r.steps);
    w.Key("measured"), w.Uint64(r.measured);
    w.Key("step_ms"), number(w, r.stepMs);
    w.Key("seconds"), number(w, r.seconds);
    w.Key("used"), w.Bool(r.used);
    w.Key("note"), str(w, r.note);
    w.EndObject();
}

void candidate(Writer& w, const BenchCandidate& c) {
    w.StartObject();
    w.Key("name"), str(w, c.name);
    w.Key("kind"), str(w, c.kind);
    w.Key("fixes"), strings(w, c.fixes);
    w.Key("command");
    if (c.kind == "command")
        strings(w, c.command);
    else
        w.Null();
    w.Key("verdict"), str(w, benchVerdictName(c.verdict));
    w.Key("why"), str(w, c.why);
    w.Key("speedup"), optionalNumber(w, c.speedup);
    w.Key("speedup_ci");
    if (c.speedupCi) {
        w.StartArray();
        number(w, c.speedupCi->first);
        number(w, c.speedupCi->second);
        w.EndArray();
    } else
        w.Null();
    w.Key("p_value"), optionalNumber(w, c.pValue);
    w.Key("threshold"), number(w, c.threshold);
    w.Key("noise"), optionalNumber(w, c.noise);
    w.Key("runs_to_decide");
    if (c.runsToDecide)
        w.Uint64(*c.runsToDecide);
    else
        w.Null();
    w.Key("baseline_step_ms"), stepStats(w, c.baselineStepMs);
    w.Key("candidate_step_ms"), stepStats(w, c.candidateStepMs);
    w.Key("runs");
    w.StartArray();
    for (const BenchRun& r : c.runs)
        run(w, r);
    w.EndArray();
    w.Key("warmup_steps"), w.Uint64(c.warmupSteps);
    w.Key("one_time_cost_ms"), optionalNumber(w, c.oneTimeCostMs);
    w.Key("break_even_steps"), optionalNumber(w, c.breakEvenSteps);
    w.Key("finding");
    if (c.finding)
        str(w, *c.finding);
    else
        w.Null();
    w.Key("estimated_speedup"), optionalNumber(w, c.estimatedSpeedup);
    w.Key("loss_delta"), optionalNumber(w, c.lossDelta);
    w.Key("applied");
    w.StartArray();
    for (const BenchFixOutcome& a : c.applied) {
        w.StartObject();
        w.Key("fix"), str(w, a.fix);
        w.Key("status"), str(w, a.status);
        w.Key("detail"), str(w, a.detail);
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
}

// ---- reading --------------------------------------------------------------------------------------

constexpr size_t kMaxBenchBytes = size_t(64) << 20;

using Value = rapidjson::Value;

// Reads members with the path of what it reads in every error: "bench.json: candidates[2].speedup: ...".
class Reader {
public:
    explicit Reader(std::string path)
        : m_path(std::move(path)) { }

    [[noreturn]] void fail(const std::string& where, const std::string& problem) const {
        throw BenchFileError(m_path + ": " + where + ": " + problem
            + " (a bench file is what `tuneup bench --format json -o FILE` writes; docs/bench.md)");
    }
    const Value& member(const Value& object, const char* name, const std::string& where) const {
        if (!object.IsObject()) fail(where, "not an object");
        const auto it = object.FindMember(name);
        if (it == object.MemberEnd()) fail(join(where, name), "missing");
        return it->value;
    }
    const Value* optional(const Value& object, const char* name) const {
        const auto it = object.FindMember(name);
        return it == object.MemberEnd() || it->value.IsNull() ? nullptr : &it->value;
    }
    std::string string(const Value& v, const std::string& where) const {
        if (!v.IsString()) fail(where, "not a string");
        return std::string(v.GetString(), v.GetStringLength());
    }
    double real(const Value& v, const std::string& where) const {
        if (!v.IsNumber()) fail(where, "not a number");
        return v.GetDouble();
    }
    std::optional<double> maybeReal(const Value& object, const char* name, const std::string& where) const {
        const Value* v = optional(object, name);
        return v ? std::optional<double>(real(*v, join(where, name))) : std::nullopt;
    }
    uint64_t count(const Value& v, const std::string& where) const {
        if (!v.IsUint64()) fail(where, "not a count (a whole number, 0 or more)");
        return v.GetUint64();
    }
    const Value& array(const Value& v, const std::string& where) const {
        if (!v.IsArray()) fail(where, "not an array");
        return v;
    }
    std::vector<std::string> strings(const Value& v, const std::string& where) const {
        std::vector<std::string> out;
        const Value& items = array(v, where);
        for (rapidjson::SizeType i = 0; i < items.Size(); ++i)
            out.push_back(string(items[i], where + "[" + std::to_string(i) + "]"));
        return out;
    }
    static std::string join(const std::string& where, const char* name) {
        return where.empty() ? name : where + "." + name;
    }

    BenchStepStats stepStats(const Value& v, const std::string& where) const {
        BenchStepStats s;
        if (const Value* mean = optional(v, "mean")) s.meanMs = real(*mean, join(where, "mean"));
        s.medianMs = real(member(v, "median", where), join(where, "median"));
        s.p10Ms = real(member(v, "p10", where), join(where, "p10"));
        s.p90Ms = real(member(v, "p90", where), join(where, "p90"));
        s.n = count(member(v, "n", where), join(where, "n"));
        return s;
    }

    BenchCandidate candidate(const Value& v, const std::string& where) const {
        BenchCandidate c;
        c.name = string(member(v, "name", where), join(where, "name"));
        c.kind = string(member(v, "kind", where), join(where, "kind"));
        if (c.kind != "fix" && c.kind != "command") fail(join(where, "kind"), "'" + c.kind + "' is not fix or command");
        if (const Value* f = optional(v, "fixes")) c.fixes = strings(*f, join(where, "fixes"));
        if (const Value* cmd = optional(v, "command")) c.command = strings(*cmd, join(where, "command"));
        const std::string verdict = string(member(v, "verdict", where), join(where, "verdict"));
        const auto parsed = parseBenchVerdict(verdict);
        if (!parsed) fail(join(where, "verdict"), "unknown verdict '" + verdict + "'");
        c.verdict = *parsed;
        if (const Value* why = optional(v, "why")) c.why = string(*why, join(where, "why"));
        c.speedup = maybeReal(v, "speedup", where);
        if (const Value* ci = optional(v, "speedup_ci")) {
            const Value& pair = array(*ci, join(where, "speedup_ci"));
            if (pair.Size() != 2) fail(join(where, "speedup_ci"), "not a pair [low, high]");
            c.speedupCi = { real(pair[0], join(where, "speedup_ci[0]")), real(pair[1], join(where, "speedup_ci[1]")) };
        }
        c.pValue = maybeReal(v, "p_value", where);
        c.baselineStepMs = stepStats(member(v, "baseline_step_ms", where), join(where, "baseline_step_ms"));
        c.candidateStepMs = stepStats(member(v, "candidate_step_ms", where), join(where, "candidate_step_ms"));
        if (const Value* n = optional(v, "warmup_steps")) c.warmupSteps = count(*n, join(where, "warmup_steps"));
        c.oneTimeCostMs = maybeReal(v, "one_time_cost_ms", where);
        c.breakEvenSteps = maybeReal(v, "break_even_steps", where);
        if (const Value* f = optional(v, "finding")) c.finding = string(*f, join(where, "finding"));
        c.estimatedSpeedup = maybeReal(v, "estimated_speedup", where);
        c.lossDelta = maybeReal(v, "loss_delta", where);
        // The runs and the rest are for people and other tools; advise --bench needs what is above.
        return c;
    }

private:
    std::string m_path;
};

std::string readText(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw BenchFileError(path + ": cannot open (" + std::strerror(errno) + ")");
    std::string text;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        text.append(buffer, size_t(in.gcount()));
        if (text.size() > kMaxBenchBytes)
            throw BenchFileError(path + ": larger than " + formatBytes(int64_t(kMaxBenchBytes))
                + ", which no bench file is: is it the right file?");
    }
    return text;
}

} // namespace

std::string_view benchVerdictName(BenchVerdict v) {
    return kVerdictNames[size_t(v)];
}

std::optional<BenchVerdict> parseBenchVerdict(std::string_view name) {
    for (size_t i = 0; i < std::size(kVerdictNames); ++i)
        if (kVerdictNames[i] == name) return BenchVerdict(i);
    return std::nullopt;
}

const BenchCandidate* BenchResult::forFinding(std::string_view rule) const {
    for (const BenchCandidate& c : candidates)
        if (c.finding && *c.finding == rule) return &c;
    return nullptr;
}

void writeBenchJson(std::ostream& out, const BenchResult& result) {
    rapidjson::OStreamWrapper stream(out);
    Writer w(stream);
    w.SetIndent(' ', 2);
    w.StartObject();
    w.Key("schema_version"), w.Int(result.schemaVersion);
    w.Key("tool_version"), str(w, result.toolVersion);
    w.Key("command"), strings(w, result.command);
    w.Key("environment");
    w.StartObject();
    for (const auto& [name, value] : result.environment) {
        w.Key(name.c_str()), str(w, value);
    }
    w.EndObject();
    w.Key("mode"), str(w, result.mode);
    w.Key("steps"), w.Uint64(result.steps);
    w.Key("warmup"), w.Uint64(result.warmup);
    w.Key("runs"), w.Uint64(result.runs);
    w.Key("max_time_s"), number(w, result.maxTimeSeconds);
    w.Key("elapsed_s"), number(w, result.elapsedSeconds);
    w.Key("candidates");
    w.StartArray();
    for (const BenchCandidate& c : result.candidates)
        candidate(w, c);
    w.EndArray();
    w.Key("not_benched");
    w.StartArray();
    for (const BenchSkippedFinding& s : result.notBenched) {
        w.StartObject();
        w.Key("rule"), str(w, s.rule);
        w.Key("why"), str(w, s.why);
        w.EndObject();
    }
    w.EndArray();
    w.Key("notes"), strings(w, result.notes);
    w.EndObject();
    out << "\n";
}

BenchResult readBenchJson(const std::string& path) {
    const std::string text = readText(path);
    rapidjson::Document doc;
    doc.Parse<rapidjson::kParseFullPrecisionFlag | rapidjson::kParseIterativeFlag>(text.c_str(), text.size());
    if (doc.HasParseError())
        throw BenchFileError(path + ": not valid JSON at byte " + std::to_string(doc.GetErrorOffset()) + ": "
            + rapidjson::GetParseError_En(doc.GetParseError()));
    const Reader reader(path);
    if (!doc.IsObject() || !doc.HasMember("candidates"))
        reader.fail("top level", "not a tuneup bench file (no \"candidates\")");
    BenchResult result;
    const Value& version = reader.member(doc, "schema_version", "");
    if (!version.IsInt()) reader.fail("schema_version", "not a whole number");
    result.schemaVersion = version.GetInt();
    if (result.schemaVersion > kBenchSchemaVersion || result.schemaVersion < 1)
        throw BenchFileError(path + ": a bench file of version " + std::to_string(result.schemaVersion)
            + "; this tuneup reads version " + std::to_string(kBenchSchemaVersion)
            + ": read it with the tuneup that wrote it");
    if (const Value* v = reader.optional(doc, "tool_version")) result.toolVersion = reader.string(*v, "tool_version");
    if (const Value* v = reader.optional(doc, "command")) result.command = reader.strings(*v, "command");
    if (const Value* v = reader.optional(doc, "mode")) result.mode = reader.string(*v, "mode");
    const Value& items = reader.array(reader.member(doc, "candidates", ""), "candidates");
    for (rapidjson::SizeType i = 0; i < items.Size(); ++i)
        result.candidates.push_back(reader.candidate(items[i], "candidates[" + std::to_string(i) + "]"));
    return result;
}

} // namespace tuneup::analysis
