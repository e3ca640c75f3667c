#include "job/summary_file.h"

#include "import/chunk_reader.h"
#include "import/import_error.h"
#include "units.h"
#include "utf8.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/writer.h>
#include <sstream>

namespace tuneup::analysis {

namespace {

constexpr std::string_view kFormat = "tuneup-job-summary";

// ---- writing --------------------------------------------------------------------------------------

using Writer = rapidjson::Writer<rapidjson::OStreamWrapper>;

void str(Writer& w, std::string_view s) {
    const std::string valid = validUtf8(s); // names from traces may hold invalid UTF-8
    w.String(valid.data(), rapidjson::SizeType(valid.size()));
}

void ints(Writer& w, std::initializer_list<int64_t> values) {
    w.StartArray();
    for (int64_t v : values)
        w.Int64(v);
    w.EndArray();
}

// The fields in kStepBreakdownFields' order; summaries before idleGraphNs have 9 (read as 0 there).
void breakdown(Writer& w, const StepBreakdown& b) {
    w.StartArray();
    for (const auto& [name, field] : kStepBreakdownFields)
        w.Int64(b.*field);
    w.EndArray();
}

void pairs(Writer& w, const std::vector<std::pair<std::string, std::string>>& items) {
    w.StartArray();
    for (const auto& [a, b] : items) {
        w.StartArray();
        str(w, a);
        str(w, b);
        w.EndArray();
    }
    w.EndArray();
}

void events(Writer& w, const std::vector<EventRef>& refs) {
    w.StartArray();
    for (const EventRef& e : refs)
        ints(w, { int64_t(e.table), e.row });
    w.EndArray();
}

void finding(Writer& w, const Finding& f) {
    w.StartObject();
    w.Key("rule"), str(w, f.ruleId);
    w.Key("severity"), str(w, severityName(f.severity));
    w.Key("kind"), str(w, findingKindName(f.kind));
    w.Key("title"), str(w, f.title);
    w.Key("detail"), str(w, f.detail);
    w.Key("rank"), w.Int(f.rank);
    w.Key("facts"), pairs(w, f.evidence.facts);
    w.Key("events"), events(w, f.evidence.events);
    w.Key("spans");
    w.StartArray();
    for (const TimeSpan& s : f.evidence.spans)
        ints(w, { s.startNs, s.endNs });
    w.EndArray();
    w.Key("events_total"), w.Uint64(f.evidence.eventsTotal);
    w.Key("gain");
    if (f.gain) {
        w.StartObject();
        w.Key("per_step_ns"), w.Int64(f.gain->perStepNs);
        w.Key("step_share"), w.Double(f.gain->stepShare);
        w.Key("model"), str(w, f.gain->model);
        w.Key("confidence"), str(w, f.gain->confidence);
        w.EndObject();
    } else {
        w.Null();
    }
    w.Key("sources");
    w.StartArray();
    for (const SourceSite& site : f.sources) {
        w.StartObject();
        w.Key("file"), str(w, site.file);
        w.Key("line"), w.Int64(site.line);
        w.Key("function"), str(w, site.function);
        w.Key("events"), w.Uint64(site.events);
        w.Key("share"), w.Double(site.share);
        w.Key("sampled"), w.Bool(site.sampled);
        w.Key("call"), str(w, site.call);
        w.EndObject();
    }
    w.EndArray();
    w.Key("fix_python"), str(w, f.fixPython);
    w.Key("fix_cpp"), str(w, f.fixCpp);
    w.Key("doc_path"), str(w, f.docPath);
    w.EndObject();
}

void rank(Writer& w, const RankSummary& r, const std::vector<const RuleOutcome*>& outcomes) {
    w.StartObject();
    w.Key("path"), str(w, r.path);
    w.Key("format"), w.Int(int(r.format));
    w.Key("rank"), w.Int(r.rank);
    w.Key("event_count"), w.Uint64(r.eventCount);
    w.Key("span");
    if (r.span)
        ints(w, { r.span->startNs, r.span->endNs });
    else
        w.Null();
    w.Key("device_name"), str(w, r.deviceName);
    w.Key("step_source"), w.Int(int(r.steps.detection.source));
    w.Key("step_detail"), str(w, r.steps.detection.detail);
    w.Key("device"), w.Int(r.steps.device);
    w.Key("steps");
    w.StartArray();
    for (const Step& s : r.steps.detection.steps)
        ints(w, { s.number, s.startNs, s.endNs, s.annotation });
    w.EndArray();
    w.Key("per_step");
    w.StartArray();
    for (const StepBreakdown& b : r.steps.perStep)
        breakdown(w, b);
    w.EndArray();
    w.Key("median"), breakdown(w, r.steps.median);
    const CommProfile& c = r.communication;
    w.Key("communication");
    w.StartObject();
    w.Key("kernels"), w.Uint64(c.kernels);
    w.Key("median_comm_ns"), w.Int64(c.medianCommNs);
    w.Key("median_exposed_ns"), w.Int64(c.medianExposedNs);
    w.Key("kind_ns");
    w.StartArray();
    for (int64_t ns : c.kindNs)
        w.Int64(ns);
    w.EndArray();
    w.Key("events"), events(w, c.events);
    w.EndObject();
    w.Key("collectives"), w.Uint64(r.collectiveCount);
    w.Key("inputs"), w.Uint(r.inputs);
    w.Key("settings"), pairs(w, r.settings);
    w.Key("kernel_count"), w.Int64(r.kernelCount);
    w.Key("kernel_ns"), w.Int64(r.kernelNs);
    w.Key("top_kernels");
    w.StartArray();
    for (const KernelTotal& k : r.topKernels) {
        w.StartArray();
        str(w, k.name);
        w.Int64(k.count);
        w.Int64(k.totalNs);
        w.EndArray();
    }
    w.EndArray();
    w.Key("losses"); // [name, severity (StatSeverity), count, description]
    w.StartArray();
    for (const ImportStat& stat : r.losses) {
        w.StartArray();
        str(w, stat.name);
        w.Int(int(stat.severity));
        w.Int64(stat.value);
        str(w, stat.description);
        w.EndArray();
    }
    w.EndArray();
    w.Key("outcomes");
    w.StartArray();
    for (const RuleOutcome* o : outcomes) {
        w.StartObject();
        w.Key("rule"), str(w, o->ruleId);
        w.Key("status"), w.Int(int(o->status));
        w.Key("reason"), str(w, o->reason);
        w.Key("findings");
        w.StartArray();
        for (const Finding& f : o->findings)
            finding(w, f);
        w.EndArray();
        w.Key("below_floor");
        w.StartArray();
        for (const Finding& f : o->belowFloor)
            finding(w, f);
        w.EndArray();
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
}

// ---- reading --------------------------------------------------------------------------------------

// Checked access to the parsed document: every mismatch names the file and the place.
class Reader {
public:
    explicit Reader(std::string path)
        : m_path(std::move(path)) { }
    int64_t version = kJobSummaryVersion; // the file's schema_version

    [[noreturn]] void fail(const std::string& where, const std::string& problem) const {
        throw SummaryFileError(m_path + ": " + (where.empty() ? "" : where + ": ") + problem
            + " (not a job summary written by this version of tuneup advise --summary-out?)");
    }
    const rapidjson::Value& member(const rapidjson::Value& object, const char* name, const std::string& where) const {
        if (!object.IsObject()) fail(where, "expected an object");
        const auto it = object.FindMember(name);
        if (it == object.MemberEnd()) fail(where, std::string("missing \"") + name + "\"");
        return it->value;
    }
    const rapidjson::Value& array(const rapidjson::Value& v, const std::string& where) const {
        if (!v.IsArray()) fail(where, "expected an array");
        return v;
    }
    int64_t integer(const rapidjson::Value& v, const std::string& where) const {
        if (!v.IsInt64()) fail(where, "expected an integer");
        return v.GetInt64();
    }
    int64_t integer(const rapidjson::Value& v, const std::string& where, int64_t min, int64_t max) const {
        const int64_t value = integer(v, where);
        if (value < min || value > max)
            fail(where,
                std::to_string(value) + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) + "]");
        return value;
    }
    double number(const rapidjson::Value& v, const std::string& where) const {
        if (!v.IsNumber()) fail(where, "expected a number");
        return v.GetDouble();
    }
    std::string string(const rapidjson::Value& v, const std::string& where) const {
        if (!v.IsString()) fail(where, "expected a string");
        return std::string(v.GetString(), v.GetStringLength());
    }
    std::vector<int64_t> integers(const rapidjson::Value& v, size_t n, const std::string& where) const {
        array(v, where);
        if (v.Size() != n) fail(where, "expected " + std::to_string(n) + " numbers");
        std::vector<int64_t> out;
        for (rapidjson::SizeType i = 0; i < v.Size(); ++i)
            out.push_back(integer(v[i], where));
        return out;
    }
    std::vector<std::pair<std::string, std::string>> pairs(const rapidjson::Value& v, const std::string& where) const {
        std::vector<std::pair<std::string, std::string>> out;
        for (const auto& item : array(v, where).GetArray()) {
            if (!item.IsArray() || item.Size() != 2) fail(where, "expected [name, value] pairs");
            out.emplace_back(string(item[0], where), string(item[1], where));
        }
        return out;
    }
    StepBreakdown breakdown(const rapidjson::Value& v, const std::string& where) const {
        // Version 1 was written before the idle inside CUDA graph replays had a part of its own (9 numbers,
        // without idleGraphNs): it was counted in the host's idle then.
        const size_t n = std::size(kStepBreakdownFields) - (version < 2 ? 1 : 0);
        const auto f = integers(v, n, where);
        for (int64_t ns : f)
            if (ns < 0) fail(where, "a negative time in a step breakdown");
        StepBreakdown b;
        for (size_t i = 0; i < f.size(); ++i)
            b.*kStepBreakdownFields[i].field = f[i];
        return b;
    }
    std::vector<EventRef> events(const rapidjson::Value& v, const std::string& where) const {
        std::vector<EventRef> out;
        for (const auto& item : array(v, where).GetArray()) {
            const auto f = integers(item, 2, where);
            if (f[0] < 0 || f[0] > int64_t(EventTable::MemoryEvent) || f[1] < -1 || f[1] > INT32_MAX)
                fail(where, "an event reference out of range");
            out.push_back({ EventTable(f[0]), RowIndex(f[1]) });
        }
        return out;
    }

    Finding finding(const rapidjson::Value& v, const std::string& where) const {
        Finding f;
        f.ruleId = string(member(v, "rule", where), where + ".rule");
        const auto severity = parseSeverity(string(member(v, "severity", where), where + ".severity"));
        if (!severity) fail(where + ".severity", "not info, warning or error");
        f.severity = *severity;
        if (const auto it = v.FindMember("kind"); it != v.MemberEnd()) { // summaries before the floor lack it
            const auto kind = parseFindingKind(string(it->value, where + ".kind"));
            if (!kind) fail(where + ".kind", "not performance, correctness or information");
            f.kind = *kind;
        }
        f.title = string(member(v, "title", where), where + ".title");
        f.detail = string(member(v, "detail", where), where + ".detail");
        f.rank = int(integer(member(v, "rank", where), where + ".rank", -1, INT32_MAX));
        f.evidence.facts = pairs(member(v, "facts", where), where + ".facts");
        f.evidence.events = events(member(v, "events", where), where + ".events");
        for (const auto& s : array(member(v, "spans", where), where + ".spans").GetArray()) {
            const auto ns = integers(s, 2, where + ".spans");
            f.evidence.spans.push_back({ ns[0], ns[1] });
        }
        f.evidence.eventsTotal = size_t(integer(member(v, "events_total", where), where, 0, INT64_MAX));
        if (const auto& g = member(v, "gain", where); !g.IsNull()) {
            Gain gain;
            gain.perStepNs = integer(member(g, "per_step_ns", where + ".gain"), where + ".gain.per_step_ns");
            gain.stepShare = number(member(g, "step_share", where + ".gain"), where + ".gain.step_share");
            gain.model = string(member(g, "model", where + ".gain"), where + ".gain.model");
            gain.confidence = string(member(g, "confidence", where + ".gain"), where + ".gain.confidence");
            f.gain = std::move(gain);
        }
        if (const auto it = v.FindMember("sources"); it != v.MemberEnd()) { // summaries before call sites lack it
            for (const auto& s : array(it->value, where + ".sources").GetArray()) {
                const std::string at = where + ".sources";
                SourceSite site;
                site.file = string(member(s, "file", at), at + ".file");
                site.line = integer(member(s, "line", at), at + ".line", 0, INT64_MAX);
                site.function = string(member(s, "function", at), at + ".function");
                site.events = size_t(integer(member(s, "events", at), at + ".events", 0, INT64_MAX));
                site.share = number(member(s, "share", at), at + ".share");
                if (!(site.share >= 0 && site.share <= 1)) fail(at + ".share", "not a share between 0 and 1");
                if (const auto sampled = s.FindMember("sampled"); sampled != s.MemberEnd()) { // older summaries lack it
                    if (!sampled->value.IsBool()) fail(at + ".sampled", "not true or false");
                    site.sampled = sampled->value.GetBool();
                }
                if (s.HasMember("call")) site.call = string(s["call"], at + ".call");
                f.sources.push_back(std::move(site));
            }
        }
        f.fixPython = string(member(v, "fix_python", where), where + ".fix_python");
        f.fixCpp = string(member(v, "fix_cpp", where), where + ".fix_cpp");
        f.docPath = string(member(v, "doc_path", where), where + ".doc_path");
        return f;
    }

    SummarizedRank rank(const rapidjson::Value& v, const std::string& where) const {
        SummarizedRank out;
        RankSummary& r = out.summary;
        auto at = [&](const char* name) -> const rapidjson::Value& { return member(v, name, where); };
        auto place = [&](const char* name) { return where + "." + name; };
        r.path = string(at("path"), place("path"));
        r.format = SourceFormat(integer(at("format"), place("format"), 0, int64_t(SourceFormat::NsysSqlite)));
        r.rank = int(integer(at("rank"), place("rank"), -1, INT32_MAX));
        r.eventCount = size_t(integer(at("event_count"), place("event_count"), 0, INT64_MAX));
        if (!at("span").IsNull()) {
            const auto ns = integers(at("span"), 2, place("span"));
            if (!isPlausibleTime(ns[0]) || !isPlausibleTime(ns[1]) || ns[1] < ns[0])
                fail(place("span"), "a span that ends before it starts, or beyond any clock");
            r.span = TimeSpan { ns[0], ns[1] };
        }
        r.deviceName = string(at("device_name"), place("device_name"));
        r.steps.detection.source
            = StepSource(integer(at("step_source"), place("step_source"), 0, int64_t(kLastStepSource)));
        r.steps.detection.detail = string(at("step_detail"), place("step_detail"));
        r.steps.device = int32_t(integer(at("device"), place("device"), -1, INT32_MAX));
        for (const auto& s : array(at("steps"), place("steps")).GetArray()) {
            const auto f = integers(s, 4, place("steps"));
            if (f[3] < -1 || f[3] > INT32_MAX) fail(place("steps"), "a range reference out of range");
            if (!isPlausibleTime(f[1]) || !isPlausibleTime(f[2]) || f[2] < f[1])
                fail(place("steps"), "a step that ends before it starts, or beyond any clock");
            r.steps.detection.steps.push_back({ f[0], f[1], f[2], RowIndex(f[3]) });
        }
        for (const auto& b : array(at("per_step"), place("per_step")).GetArray())
            r.steps.perStep.push_back(breakdown(b, place("per_step")));
        if (r.steps.perStep.size() != r.steps.detection.steps.size())
            fail(place("per_step"), "not one breakdown per step");
        r.steps.median = breakdown(at("median"), place("median"));
        const rapidjson::Value& c = at("communication");
        const std::string cw = place("communication");
        r.communication.kernels = size_t(integer(member(c, "kernels", cw), cw + ".kernels", 0, INT64_MAX));
        r.communication.medianCommNs = integer(member(c, "median_comm_ns", cw), cw + ".median_comm_ns", 0, INT64_MAX);
        r.communication.medianExposedNs
            = integer(member(c, "median_exposed_ns", cw), cw + ".median_exposed_ns", 0, INT64_MAX);
        const auto kinds = integers(member(c, "kind_ns", cw), r.communication.kindNs.size(), cw + ".kind_ns");
        if (std::any_of(kinds.begin(), kinds.end(), [](int64_t ns) { return ns < 0; }))
            fail(cw + ".kind_ns", "a negative time");
        std::copy(kinds.begin(), kinds.end(), r.communication.kindNs.begin());
        r.communication.events = events(member(c, "events", cw), cw + ".events");
        r.collectiveCount = size_t(integer(at("collectives"), place("collectives"), 0, INT64_MAX));
        r.inputs = uint32_t(integer(at("inputs"), place("inputs"), 0, UINT32_MAX));
        r.settings = pairs(at("settings"), place("settings"));
        r.kernelCount = integer(at("kernel_count"), place("kernel_count"), 0, INT64_MAX);
        r.kernelNs = integer(at("kernel_ns"), place("kernel_ns"), 0, INT64_MAX);
        for (const auto& k : array(at("top_kernels"), place("top_kernels")).GetArray()) {
            if (!k.IsArray() || k.Size() != 3) fail(place("top_kernels"), "expected [name, count, total_ns]");
            r.topKernels.push_back({ string(k[0], place("top_kernels")),
                integer(k[1], place("top_kernels"), 0, INT64_MAX), integer(k[2], place("top_kernels"), 0, INT64_MAX) });
        }
        // Written since losses were reported (summaries of earlier builds have none).
        if (const auto it = v.FindMember("losses"); it != v.MemberEnd())
            for (const auto& l : array(it->value, place("losses")).GetArray()) {
                if (!l.IsArray() || l.Size() != 4)
                    fail(place("losses"), "expected [name, severity, count, description]");
                r.losses.push_back({ string(l[0], place("losses")),
                    StatSeverity(integer(l[1], place("losses"), 0, int64_t(StatSeverity::Error))),
                    integer(l[2], place("losses")), string(l[3], place("losses")) });
            }
        const auto& outcomes = array(at("outcomes"), place("outcomes"));
        for (rapidjson::SizeType i = 0; i < outcomes.Size(); ++i) {
            const std::string ow = place("outcomes") + "[" + std::to_string(i) + "]";
            RuleOutcome o;
            o.ruleId = string(member(outcomes[i], "rule", ow), ow + ".rule");
            o.status = RuleStatus(
                integer(member(outcomes[i], "status", ow), ow + ".status", 0, int64_t(RuleStatus::NotApplicable)));
            o.reason = string(member(outcomes[i], "reason", ow), ow + ".reason");
            const auto& findings = array(member(outcomes[i], "findings", ow), ow + ".findings");
            for (rapidjson::SizeType k = 0; k < findings.Size(); ++k)
                o.findings.push_back(finding(findings[k], ow + ".findings[" + std::to_string(k) + "]"));
            if (const auto it = outcomes[i].FindMember("below_floor"); it != outcomes[i].MemberEnd())
                for (rapidjson::SizeType k = 0; k < array(it->value, ow + ".below_floor").Size(); ++k)
                    o.belowFloor.push_back(finding(it->value[k], ow + ".below_floor[" + std::to_string(k) + "]"));
            out.outcomes.push_back(std::move(o));
        }
        return out;
    }

private:
    std::string m_path;
};

// The whole text, through the importers' input (a pipe is read once, gzip inflated).
std::string readSummaryText(const std::string& path) {
    std::string text;
    try {
        std::unique_ptr<ByteSource> source = openFileSource(path);
        char head[2] = {};
        size_t got = 0;
        while (got < sizeof head) {
            const size_t n = source->read(head + got, sizeof head - got);
            if (n == 0) break;
            got += n;
        }
        text.assign(head, got);
        if (got == 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b) {
            text.clear();
            source = gzipSource(prefixedSource(std::string(head, 2), std::move(source)), path);
        }
        char buffer[1 << 16];
        for (size_t n; (n = source->read(buffer, sizeof buffer)) > 0;) {
            if (text.size() + n > kMaxJobSummaryBytes)
                throw SummaryFileError(
                    path + ": larger than " + formatBytes(int64_t(kMaxJobSummaryBytes)) + ", which no job summary is");
            text.append(buffer, n);
        }
    } catch (const ImportError& e) {
        throw SummaryFileError(e.what());
    }
    return text;
}

} // namespace

void writeJobSummary(std::ostream& out, const AdviceReport& report, const std::string& toolVersion) {
    rapidjson::OStreamWrapper stream(out);
    Writer w(stream);
    w.StartObject();
    w.Key("format"), str(w, kFormat);
    w.Key("schema_version"), w.Int(kJobSummaryVersion);
    w.Key("tool_version"), str(w, toolVersion);
    w.Key("ranks");
    w.StartArray();
    std::vector<std::vector<const RuleOutcome*>> perRank(report.ranks.size());
    for (size_t i = 0; i < report.outcomes.size() && i < report.outcomeRank.size(); ++i)
        if (report.outcomeRank[i] >= 0 && size_t(report.outcomeRank[i]) < perRank.size())
            perRank[size_t(report.outcomeRank[i])].push_back(&report.outcomes[i]);
    for (size_t r = 0; r < report.ranks.size(); ++r)
        rank(w, report.ranks[r], perRank[r]);
    w.EndArray();
    w.EndObject();
    out << "\n";
}

std::vector<SummarizedRank> readJobSummary(const std::string& path) {
    const std::string json = readSummaryText(path);
    rapidjson::Document doc;
    // Iterative: a deeply nested array in a damaged or hostile file must not overflow the stack.
    doc.Parse<rapidjson::kParseFullPrecisionFlag | rapidjson::kParseIterativeFlag>(json.c_str(), json.size());
    if (doc.HasParseError())
        throw SummaryFileError(path + ": not valid JSON at byte " + std::to_string(doc.GetErrorOffset()) + ": "
            + rapidjson::GetParseError_En(doc.GetParseError()));
    Reader reader(path);
    if (reader.string(reader.member(doc, "format", ""), "format") != kFormat)
        reader.fail("format", "not a tuneup job summary");
    const int64_t version = reader.integer(reader.member(doc, "schema_version", ""), "schema_version");
    if (version > kJobSummaryVersion || version < 1)
        throw SummaryFileError(path + ": a job summary of version " + std::to_string(version) + "; this tuneup reads "
            + "version " + std::to_string(kJobSummaryVersion) + ": advise it with the tuneup that wrote it");
    reader.version = version;
    std::vector<SummarizedRank> ranks;
    const auto& items = reader.array(reader.member(doc, "ranks", ""), "ranks");
    for (rapidjson::SizeType i = 0; i < items.Size(); ++i)
        ranks.push_back(reader.rank(items[i], "ranks[" + std::to_string(i) + "]"));
    return ranks;
}

} // namespace tuneup::analysis
