#pragma once
// The Kineto SAX handler (kineto_handler.h for its two roles, document and window). Its work is split
// by what it reads: the document's structure (kineto_sax_handler.cpp), complete events becoming rows
// (kineto_events.cpp), names, flows and counters settled over the whole file (kineto_merge.cpp).
// Internal to the Kineto importer.

#include "import/kineto_fields.h"
#include "import/kineto_handler.h"
#include "import/kineto_values.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <rapidjson/rapidjson.h>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tuneup::analysis {

namespace kineto {

// Counters kept while reading, turned into ImportStats at the end (no per-event string work).
enum class Counter : uint8_t {
    Instant,
    CpuInstant,
    MemoryUnread,
    Overhead,
    BeginEnd,
    CounterEvent,
    UnknownPhase,
    UnknownCategory,
    NoTs,
    NoDur,
    NegativeDur,
    FlowStep,
    FlowUnpaired,
    NonObjectEvent,
    Metadata,
    Count
};

} // namespace kineto

class KinetoHandler {
    using Field = kineto::Field;
    using Category = kineto::Category;
    using Counter = kineto::Counter;

public:
    // Document: the whole text, events arrays handed to readEvents. Window: "[" + events + "]".
    enum class Role : uint8_t { Document, Window };
    KinetoHandler(TraceBuilder& builder, Role role)
        : m_b(builder)
        , m_role(role) {
        m_stack.reserve(16);
        m_stack.push_back(Ctx::Root);
        m_counterArgs.reserve(16);
    }

    using Failure = KinetoDocument::Failure;
    const std::optional<Failure>& failure() const { return m_failure; }
    void fail(Failure failure) { m_failure = std::move(failure); }
    bool sawContainer() const { return m_stack.size() > 1 || m_sawRoot; }
    bool sawTraceEvents() const { return m_sawTraceEvents; }
    void setReadEvents(const std::function<bool()>* readEvents) { m_readEvents = readEvents; }
    void setPlaceholder(bool pending) { m_placeholderPending = pending; }
    // Document: adds what a window's handler gathered (its rows are merged by the builder).
    void absorb(KinetoHandler& part, const std::vector<StringId>& strings);
    void finish(); // stats, base time, vendor: call once the whole text was read

    // RapidJSON handler interface. With kParseNumbersAsStringsFlag every number arrives as RawNumber.
    // `copy` is true when the text is valid only during the call (it is then copied, if kept).
    bool Null() { return value(ValueType::Literal, "null", false); }
    bool Bool(bool b) { return value(ValueType::Literal, b ? "true" : "false", false); }
    bool Int(int i) { return integer(i); }
    bool Uint(unsigned u) { return integer(u); }
    bool Int64(int64_t i) { return integer(i); }
    bool Uint64(uint64_t u) { return integer(u); }
    bool Double(double) { return value(ValueType::Literal, "NaN", false); } // only NaN/Inf could get here
    bool RawNumber(const char* s, rapidjson::SizeType n, bool copy) { return value(ValueType::Number, { s, n }, copy); }
    bool String(const char* s, rapidjson::SizeType n, bool copy) { return value(ValueType::String, { s, n }, copy); }
    bool Key(const char* s, rapidjson::SizeType n, bool) { return key({ s, n }); }
    bool StartObject();
    bool EndObject(rapidjson::SizeType);
    bool StartArray();
    bool EndArray(rapidjson::SizeType);

private:
    enum class Ctx : uint8_t { Root, TopObject, Events, Event, Args, ArgArray, Devices, Device, DistInfo };
    enum class ValueType : uint8_t { String, Number, Literal };
    enum class TopKey : uint8_t {
        TraceEvents,
        DeviceProperties,
        DistributedInfo,
        DisplayTimeUnit,
        BaseTime,
        SchemaVersion,
        TraceName,
        Other
    };

    template <class T> bool integer(T v) {
        char buf[32];
        auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
        (void)ec;
        return value(ValueType::Number, std::string_view(buf, static_cast<size_t>(end - buf)), true);
    }
    bool fail(ImportError::Kind kind, std::string problem) {
        m_failure = Failure { kind, std::move(problem), std::nullopt };
        return false;
    }
    bool value(ValueType type, std::string_view text, bool copy);
    bool key(std::string_view k);
    void skipContainer() { m_skip = 1; }
    bool enterEvents();

    // event fields
    void set(Field f, std::string_view text, bool isString, bool copy) {
        const auto i = static_cast<size_t>(f);
        m_text[i] = copy ? m_eventText.keep(text.data(), text.size()) : text;
        m_present |= uint64_t(1) << i;
        if (isString) m_stringValued |= uint64_t(1) << i;
    }
    bool has(Field f) const { return (m_present >> static_cast<size_t>(f)) & 1; }
    std::string_view get(Field f) const { return has(f) ? m_text[static_cast<size_t>(f)] : std::string_view(); }
    int64_t integerOr(Field f, int64_t fallback) const {
        if (!has(f)) return fallback;
        auto v = kineto::integerValue(get(f));
        if (!v && (m_stringValued >> static_cast<size_t>(f) & 1)) // "0x0" strings (ROCm)
            if (auto u = parseUnsigned(get(f))) return static_cast<int64_t>(*u);
        return v ? *v : fallback;
    }
    int32_t int32Or(Field f, int32_t fallback) const {
        const int64_t v = integerOr(f, fallback);
        return v >= INT32_MIN && v <= INT32_MAX ? static_cast<int32_t>(v) : fallback;
    }
    uint64_t unsignedOr(Field f, uint64_t fallback) const {
        if (!has(f)) return fallback;
        auto v = kineto::unsignedValue(get(f));
        return v ? *v : fallback;
    }
    // pid / tid: numbers, numeric strings ("2263107392"), "stream 7", or names ("Spans").
    int64_t trackId(Field f) const {
        const std::string_view t = get(f);
        if (auto v = kineto::integerValue(t)) return *v;
        if (t.starts_with("stream "))
            if (auto v = kineto::integerValue(t.substr(7))) return *v;
        return kineto::namedTrackId(t);
    }
    int32_t deviceOf() const {
        return has(Field::Device) ? int32Or(Field::Device, -1) : static_cast<int32_t>(trackId(Field::Pid));
    }
    int32_t streamOf() const {
        return has(Field::Stream) ? int32Or(Field::Stream, -1) : static_cast<int32_t>(trackId(Field::Tid));
    }
    void count(Counter c) { ++m_counters[static_cast<size_t>(c)]; }

    void beginEvent() {
        m_present = 0;
        m_stringValued = 0;
        m_category = Category::None;
        m_counterCount = 0;
        m_gridCount = m_blockCount = 0;
        m_grid = { 0, 0, 0 };
        m_block = { 0, 0, 0 };
        m_eventText.clear();
    }
    void endEvent();
    void completeEvent();
    void metadataEvent();
    void memoryEvent();
    void flowEvent(char phase);
    void addCollective(CollectiveOrigin origin, RowIndex row, int64_t start, int64_t end, std::string_view kernelName);

    // arrays inside args
    void arrayValue(ValueType type, std::string_view text);

    TraceBuilder& m_b;
    const Role m_role;
    const std::function<bool()>* m_readEvents = nullptr;
    bool m_placeholderPending = false; // the first element is a placeholder (""), not an event
    std::vector<Ctx> m_stack;
    int m_skip = 0; // > 0 while inside a value being skipped (its nesting depth)
    bool m_sawRoot = false, m_sawTraceEvents = false;
    std::optional<Failure> m_failure;

    // pending keys
    TopKey m_topKey = TopKey::Other;
    std::string m_topKeyText;
    Field m_eventKey = Field::None;
    Field m_argKey = Field::None;
    std::string m_counterName; // an unknown arg key, kept for cuda_profiler_range counters
    std::string m_objectKey; // key inside deviceProperties / distributedInfo objects

    // the event being read: views of its fields' text, in the window or in m_eventText
    std::array<std::string_view, kineto::kFieldCount> m_text {};
    kineto::EventText m_eventText;
    uint64_t m_present = 0, m_stringValued = 0;
    Category m_category = Category::None;
    std::array<int32_t, 3> m_grid {}, m_block {};
    int m_gridCount = 0, m_blockCount = 0;
    std::vector<std::pair<std::string, std::string>> m_counterArgs;
    size_t m_counterCount = 0;
    std::vector<std::pair<StringId, double>> m_counterValues;

    // an array value inside args, built as text (Input Dims: compact JSON; Input type: a,b,c)
    Field m_arrayField = Field::None;
    int m_arrayDepth = 0;
    uint64_t m_arrayHasItems = 0; // bit per depth: a comma is due before the next item
    std::string* m_arrayText = nullptr;
    std::string m_inputDims, m_inputTypes;

    // deviceProperties entry being read
    DeviceInfo m_device;

    // Flow halves and names, in text order. A window only records them: a flow's other half, or a
    // name set again later, may be in another window; the document replays them as it merges.
    struct FlowHalf {
        int64_t ts, pid, tid;
        uint64_t id; // the id, or the StringId of a string id (idIsString)
        StringId category;
        bool start, idIsString;
    };
    std::vector<FlowHalf> m_flowHalves;
    struct NameEvent {
        enum class Kind : uint8_t { Process, ProcessLabels, Thread } kind;
        int64_t pid, tid;
        std::string text;
    };
    std::vector<NameEvent> m_names;

    // document: pending flow halves by (category, id)
    struct FlowKey {
        StringId category;
        uint64_t id;
        bool operator==(const FlowKey&) const = default;
    };
    struct FlowKeyHash {
        size_t operator()(const FlowKey& k) const { return std::hash<uint64_t>()(k.id * 31u + k.category); }
    };
    struct FlowEnd {
        int64_t ts, pid, tid;
    };
    std::unordered_map<FlowKey, FlowEnd, FlowKeyHash> m_flowStarts, m_flowEnds;

    std::array<int64_t, static_cast<size_t>(Counter::Count)> m_counters {};
    std::map<std::string, int64_t, std::less<>> m_unknownCategories;
    int64_t m_hipCalls = 0, m_cudaCalls = 0, m_amdKernels = 0;
    std::optional<int64_t> m_baseTimeNs;
};

} // namespace tuneup::analysis
