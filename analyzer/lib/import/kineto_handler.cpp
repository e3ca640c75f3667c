// The Kineto SAX handler: what each event becomes in the model (kineto_handler.h for its two roles).

#include "import/kineto_handler.h"

#include "import/decimal_text.h"
#include "import/json_chunk_input.h"
#include "import/json_windows.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <map>
#include <rapidjson/reader.h>
#include <unordered_map>
#include <vector>

namespace tuneup::analysis {

namespace {

// ---- what we keep of an event -------------------------------------------------------------------------

enum class Field : uint8_t {
    // event level
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Id,
    // args
    Device,
    Stream,
    Correlation,
    ExternalId,
    Registers,
    SharedMemory,
    Bytes,
    Cbid,
    InputDims,
    InputTypes,
    SequenceNumber,
    CollectiveName,
    InMsgNelems,
    OutMsgNelems,
    GroupSize,
    Dtype,
    PgName,
    PgRanks,
    CommsId,
    SyncKind,
    WaitOnStream,
    WaitOnEvent,
    ArgName,
    ArgLabels,
    ArgKind,
    Grid,
    Block,
    Count,
    // not stored
    Args,
    None
};
constexpr size_t kFieldCount = static_cast<size_t>(Field::Count);
static_assert(kFieldCount <= 64, "present bits are a uint64_t");

// A key's length and first and last bytes: one integer compare rejects almost every other key.
constexpr uint32_t signature(std::string_view k) {
    return k.empty()
        ? 0
        : (static_cast<uint32_t>(k.size()) << 16) | (static_cast<uint32_t>(static_cast<unsigned char>(k.front())) << 8)
            | static_cast<unsigned char>(k.back());
}

struct KeyEntry {
    std::string_view name;
    Field field;
    uint32_t sig = signature(name);
};

constexpr KeyEntry kEventKeys[] = { { "ph", Field::Ph }, { "cat", Field::Cat }, { "name", Field::Name },
    { "pid", Field::Pid }, { "tid", Field::Tid }, { "ts", Field::Ts }, { "dur", Field::Dur }, { "args", Field::Args },
    { "id", Field::Id } };

constexpr KeyEntry kArgKeys[] = { { "External id", Field::ExternalId }, { "correlation", Field::Correlation },
    { "device", Field::Device }, { "stream", Field::Stream }, { "Input Dims", Field::InputDims },
    { "Input type", Field::InputTypes }, { "cbid", Field::Cbid }, { "grid", Field::Grid }, { "block", Field::Block },
    { "registers per thread", Field::Registers }, { "shared memory", Field::SharedMemory }, { "bytes", Field::Bytes },
    { "Sequence number", Field::SequenceNumber }, { "external id", Field::ExternalId },
    { "Input dims", Field::InputDims }, { "Collective name", Field::CollectiveName },
    { "In msg nelems", Field::InMsgNelems }, { "Out msg nelems", Field::OutMsgNelems },
    { "Group size", Field::GroupSize }, { "dtype", Field::Dtype }, { "Process Group Name", Field::PgName },
    { "Process Group Ranks", Field::PgRanks }, { "Comms Id", Field::CommsId }, { "cuda_sync_kind", Field::SyncKind },
    { "wait_on_stream", Field::WaitOnStream }, { "wait_on_cuda_event_id", Field::WaitOnEvent },
    { "name", Field::ArgName }, { "labels", Field::ArgLabels }, { "kind", Field::ArgKind }, { "cid", Field::Cbid } };

// With equal signatures, whether the bytes between the first and the last agree too. A loop rather
// than memcmp: keys are short, and a call per key showed in profiles.
constexpr bool sameMiddle(std::string_view a, std::string_view b) {
    for (size_t i = 1; i + 1 < a.size(); ++i)
        if (a[i] != b[i]) return false;
    return true;
}

// A table of names (entries with .name and .sig) indexed by signature: one slot per signature, found
// with one multiply, where a scan would compare with every entry. Keys and categories are looked up
// several times per event. The multiplier is searched at compile time so that no two signatures
// share a slot; names with one signature ("Input Dims", "Input dims") are chained.
template <class Entry, size_t N> class NameIndex {
public:
    constexpr explicit NameIndex(const Entry (&entries)[N])
        : m_entries(entries) {
        for (m_multiplier = 2654435761u;; m_multiplier += 2 * 40503u) {
            m_slots.fill(-1);
            m_next.fill(-1);
            bool clash = false;
            for (size_t i = 0; i < N && !clash; ++i) {
                int8_t* slot = &m_slots[slotOf(entries[i].sig)];
                while (*slot >= 0 && entries[static_cast<size_t>(*slot)].sig == entries[i].sig)
                    slot = &m_next[static_cast<size_t>(*slot)]; // the same signature: chained
                clash = *slot >= 0;
                *slot = static_cast<int8_t>(i);
            }
            if (!clash) return;
        }
    }
    const Entry* find(std::string_view name) const {
        const uint32_t sig = signature(name);
        for (int8_t i = m_slots[slotOf(sig)]; i >= 0; i = m_next[static_cast<size_t>(i)]) {
            const Entry& e = m_entries[i];
            if (e.sig != sig) return nullptr;
            if (sameMiddle(e.name, name)) return &e;
        }
        return nullptr;
    }

private:
    static_assert(N < 64, "a sparse index");
    constexpr size_t slotOf(uint32_t sig) const { return (sig * m_multiplier) >> 24; } // the top 8 bits
    const Entry* m_entries;
    uint32_t m_multiplier = 0;
    std::array<int8_t, 256> m_slots {};
    std::array<int8_t, N> m_next {}; // the next entry with the same signature
};

constexpr NameIndex kEventKeyIndex(kEventKeys);
constexpr NameIndex kArgKeyIndex(kArgKeys);

Field eventKey(std::string_view key) {
    const KeyEntry* e = kEventKeyIndex.find(key);
    return e ? e->field : Field::None;
}

Field argKey(std::string_view key) {
    const KeyEntry* e = kArgKeyIndex.find(key);
    return e ? e->field : Field::None;
}

enum class Category : uint8_t {
    None,
    Kernel,
    Memcpy,
    Memset,
    Runtime,
    Driver,
    CpuOp,
    LegacyOperator,
    UserAnnotation,
    GpuUserAnnotation,
    CudaSync,
    PythonFunction,
    ProfilerRange,
    Trace,
    Overhead,
    CpuInstant,
    Other
};

struct CategoryEntry {
    std::string_view name;
    Category category;
    uint32_t sig = signature(name);
};
constexpr CategoryEntry kCategories[] = { { "cpu_op", Category::CpuOp }, { "cuda_runtime", Category::Runtime },
    { "kernel", Category::Kernel }, { "python_function", Category::PythonFunction }, { "gpu_memcpy", Category::Memcpy },
    { "gpu_memset", Category::Memset }, { "user_annotation", Category::UserAnnotation },
    { "gpu_user_annotation", Category::GpuUserAnnotation }, { "cuda_driver", Category::Driver },
    { "cuda_sync", Category::CudaSync }, { "cpu_instant_event", Category::CpuInstant },
    { "cuda_profiler_range", Category::ProfilerRange }, { "Trace", Category::Trace },
    { "overhead", Category::Overhead },
    // Kineto's first format (PyTorch 1.8 development, 2020)
    { "Operator", Category::LegacyOperator }, { "Runtime", Category::Runtime }, { "Kernel", Category::Kernel },
    { "Memcpy", Category::Memcpy }, { "Memset", Category::Memset } };
constexpr NameIndex kCategoryIndex(kCategories);

Category classifyCategory(std::string_view cat) {
    const CategoryEntry* e = kCategoryIndex.find(cat);
    return e ? e->category : Category::Other;
}

// In 2020 traces record_function ranges came as "Operator" events; these names are the ranges
// PyTorch itself opens, which later traces mark as user_annotation.
bool isLegacyUserRange(std::string_view name) {
    return name.starts_with("ProfilerStep#") || name.starts_with("enumerate(DataLoader)#")
        || name.starts_with("Optimizer.") || name.starts_with("DistributedDataParallel.")
        || (name.size() > 6 && name.starts_with("## ") && name.ends_with(" ##"));
}

MemoryKind memoryKindFromName(std::string_view s) {
    if (s == "Pageable") return MemoryKind::Pageable;
    if (s == "Pinned") return MemoryKind::Pinned;
    if (s == "Device") return MemoryKind::Device;
    if (s == "Array") return MemoryKind::Array;
    if (s == "Managed") return MemoryKind::Managed;
    if (s == "Device Static") return MemoryKind::DeviceStatic;
    if (s == "Managed Static") return MemoryKind::ManagedStatic;
    return MemoryKind::Unknown; // "Unknown", and "Host" in ROCm traces (pinned or not is not said)
}

CopyKind copyKindFromName(std::string_view s) {
    static constexpr std::array<std::string_view, 11> kNames
        = { "", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" };
    for (size_t i = 1; i < kNames.size(); ++i)
        if (kNames[i] == s) return static_cast<CopyKind>(i);
    return CopyKind::Unknown;
}

// "Memcpy HtoD (Pageable -> Device)" -> HtoD, Pageable, Device.
void parseMemcpyName(std::string_view name, Memcpy& row) {
    if (!name.starts_with("Memcpy ")) return;
    name.remove_prefix(7);
    const size_t space = name.find(' ');
    row.copyKind = copyKindFromName(name.substr(0, space));
    const size_t open = name.find('('), arrow = name.find(" -> "), close = name.rfind(')');
    if (open == std::string_view::npos || arrow == std::string_view::npos || close == std::string_view::npos
        || !(open < arrow && arrow < close))
        return;
    row.srcKind = memoryKindFromName(name.substr(open + 1, arrow - open - 1));
    row.dstKind = memoryKindFromName(name.substr(arrow + 4, close - arrow - 4));
}

SyncType syncTypeFromName(std::string_view s) {
    if (s == "Event Sync") return SyncType::EventSynchronize;
    if (s == "Stream Wait Event") return SyncType::StreamWaitEvent;
    if (s == "Stream Sync") return SyncType::StreamSynchronize;
    if (s == "Context Sync") return SyncType::ContextSynchronize;
    return SyncType::Unknown;
}

bool isCollectiveKernel(std::string_view name) {
    return name.starts_with("nccl") || name.starts_with("rccl");
}

// The collective of an NCCL kernel from its name: "ncclKernel_AllReduce_RING_LL_Sum_float(...)",
// "ncclDevKernel_AllGather_RING_LL(...)", "ncclAllReduceRingLLKernel_sum_f32(ncclColl)" -> "allreduce".
std::string_view collectiveFromKernelName(std::string_view name) {
    name.remove_prefix(4); // nccl / rccl
    for (std::string_view prefix : { "DevKernel_", "Kernel_", "_" })
        if (name.starts_with(prefix)) {
            name.remove_prefix(prefix.size());
            break;
        }
    struct Entry {
        std::string_view op;
        std::string_view collective;
    };
    // Longer names first: ReduceScatter before Reduce, SendRecv before Send.
    static constexpr Entry kOps[]
        = { { "AllReduce", "allreduce" }, { "AllGather", "allgather" }, { "ReduceScatter", "reducescatter" },
              { "Broadcast", "broadcast" }, { "Reduce", "reduce" }, { "SendRecv", "sendrecv" }, { "Send", "send" },
              { "Recv", "recv" }, { "AllToAll", "alltoall" }, { "AlltoAll", "alltoall" } };
    for (const auto& e : kOps)
        if (name.starts_with(e.op)) return e.collective;
    return "nccl"; // an NCCL kernel whose operation the name does not tell
}

GpuVendor vendorFromDeviceName(std::string_view name) {
    for (std::string_view amd : { "AMD", "Radeon", "Instinct" })
        if (name.find(amd) != std::string_view::npos) return GpuVendor::Amd;
    for (std::string_view nv : { "NVIDIA", "Tesla", "Quadro", "GeForce", "TITAN", "RTX" })
        if (name.find(nv) != std::string_view::npos) return GpuVendor::Nvidia;
    return GpuVendor::Unknown;
}

// Counters kept while reading, turned into ImportStats at the end (no per-event string work).
enum class Counter : uint8_t {
    Instant,
    CpuInstant,
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

struct CounterInfo {
    std::string_view name;
    StatSeverity severity;
    std::string_view description;
};
constexpr CounterInfo kCounterInfo[] = {
    { "skipped_instant_events", StatSeverity::Info, "instant events (markers) are not modelled" },
    { "skipped_memory_events", StatSeverity::Info,
        "cpu_instant_event memory events (profile_memory) are not modelled" },
    { "skipped_overhead", StatSeverity::Info, "CUPTI overhead ranges are not modelled" },
    { "skipped_begin_end_events", StatSeverity::DataLoss, "B/E duration events are not read (Kineto writes X events)" },
    { "skipped_counter_events", StatSeverity::Info, "C (counter) events are not modelled" },
    { "skipped_unknown_phase", StatSeverity::DataLoss, "events with a phase (ph) this importer does not know" },
    { "skipped_unknown_category", StatSeverity::DataLoss, "complete events of a category this importer does not know" },
    { "events_without_ts", StatSeverity::DataLoss, "events without a valid ts were dropped" },
    { "events_without_dur", StatSeverity::Info, "complete events without dur were read as instantaneous" },
    { "negative_durations", StatSeverity::DataLoss, "events with a negative dur were read as instantaneous" },
    { "skipped_flow_steps", StatSeverity::Info, "flow step (t) events are not modelled" },
    { "flows_unpaired", StatSeverity::Info, "flow starts or ends without their other half" },
    { "skipped_non_object_events", StatSeverity::DataLoss, "elements of traceEvents that are not objects" },
    { "metadata_events", StatSeverity::Info, "M events (process and thread names)" },
};
static_assert(std::size(kCounterInfo) == static_cast<size_t>(Counter::Count));

// A stable id for a track named by text ("Spans", "PyTorch Profiler"): a hash of the name, so that
// every window gives the same id without sharing a string table. Its low 32 bits, from which a GPU row
// without device/stream args takes them, lie in [-2^31 + 1, -2]: never -1 ("unknown") nor a real id.
int64_t namedTrackId(std::string_view name) {
    uint64_t h = 14695981039346656037ull; // FNV-1a
    for (const char c : name) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return -(int64_t(1) << 40) - static_cast<int64_t>(2 + h % ((uint64_t(1) << 31) - 2));
}

// Non-negative decimal integers of up to 18 digits: pid, tid, device, stream, ids, sizes. Inline, as
// these come several times per event; anything else goes to the exact general parsers.
inline bool smallUnsigned(std::string_view t, uint64_t& value) {
    if (t.empty() || t.size() > 18) return false;
    uint64_t v = 0;
    for (const char c : t) {
        const auto digit = static_cast<unsigned>(static_cast<unsigned char>(c) - '0');
        if (digit > 9) return false;
        v = v * 10 + digit;
    }
    value = v;
    return true;
}

// ts / dur in their common form (at most 15 digits before a point and 3 after it) to nanoseconds,
// inline; the same value as microsToNanos, which takes everything else.
inline std::optional<int64_t> nanosFromMicros(std::string_view t) {
    uint64_t v = 0;
    size_t i = 0, integerDigits = 0;
    for (; i < t.size() && static_cast<unsigned>(t[i] - '0') <= 9; ++i, ++integerDigits)
        v = v * 10 + static_cast<unsigned>(t[i] - '0');
    int fraction = 0;
    if (i < t.size() && t[i] == '.')
        for (++i; i < t.size() && fraction < 3 && static_cast<unsigned>(t[i] - '0') <= 9; ++i, ++fraction)
            v = v * 10 + static_cast<unsigned>(t[i] - '0');
    if (i != t.size() || integerDigits == 0 || integerDigits > 15) return microsToNanos(t);
    for (; fraction < 3; ++fraction)
        v *= 10;
    return static_cast<int64_t>(v);
}

inline std::optional<int64_t> integerValue(std::string_view t) {
    if (uint64_t v; smallUnsigned(t, v)) return static_cast<int64_t>(v);
    return parseInteger(t);
}

inline std::optional<uint64_t> unsignedValue(std::string_view t) {
    if (uint64_t v; smallUnsigned(t, v)) return v;
    return parseUnsigned(t);
}

// Copies of the text of one event's fields where RapidJSON hands it out only for the call (streams
// not parsed in place); views into it stay valid until clear(). Windows are parsed in place: their
// text is kept where it lies, and this stays empty.
class EventText {
public:
    std::string_view keep(const char* s, size_t n) {
        if (m_blocks.empty() || n > m_size - m_used) grow(n);
        char* dst = m_blocks.back().get() + m_used;
        std::memcpy(dst, s, n);
        m_used += n;
        return { dst, n };
    }
    void clear() {
        if (m_blocks.size() > 1) {
            m_blocks.resize(1);
            m_size = kBlockBytes;
        }
        m_used = 0;
    }

private:
    static constexpr size_t kBlockBytes = 16 * 1024;
    void grow(size_t n) {
        // Earlier views must stay valid: a new block, never a reallocation.
        const size_t size = m_blocks.empty() ? std::max(n, kBlockBytes) : std::max(n, m_size * 2);
        m_blocks.push_back(std::make_unique_for_overwrite<char[]>(size));
        m_size = size;
        m_used = 0;
    }
    std::vector<std::unique_ptr<char[]>> m_blocks;
    size_t m_size = 0, m_used = 0;
};

} // namespace

// ---- the SAX handler ------------------------------------------------------------------------------------

class KinetoHandler {
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
        auto v = integerValue(get(f));
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
        auto v = unsignedValue(get(f));
        return v ? *v : fallback;
    }
    // pid / tid: numbers, numeric strings ("2263107392"), "stream 7", or names ("Spans").
    int64_t trackId(Field f) const {
        const std::string_view t = get(f);
        if (auto v = integerValue(t)) return *v;
        if (t.starts_with("stream "))
            if (auto v = integerValue(t.substr(7))) return *v;
        return namedTrackId(t);
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
    std::array<std::string_view, kFieldCount> m_text {};
    EventText m_eventText;
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

bool KinetoHandler::key(std::string_view k) {
    if (m_skip > 0) return true;
    switch (m_stack.back()) {
    case Ctx::TopObject:
        m_topKeyText.assign(k.data(), k.size());
        if (k == "traceEvents")
            m_topKey = TopKey::TraceEvents;
        else if (k == "deviceProperties")
            m_topKey = TopKey::DeviceProperties;
        else if (k == "distributedInfo")
            m_topKey = TopKey::DistributedInfo;
        else if (k == "displayTimeUnit")
            m_topKey = TopKey::DisplayTimeUnit;
        else if (k == "baseTimeNanoseconds")
            m_topKey = TopKey::BaseTime;
        else if (k == "schemaVersion")
            m_topKey = TopKey::SchemaVersion;
        else if (k == "traceName")
            m_topKey = TopKey::TraceName;
        else
            m_topKey = TopKey::Other;
        break;
    case Ctx::Event:
        m_eventKey = eventKey(k);
        break;
    case Ctx::Args:
        m_argKey = argKey(k);
        if (m_argKey == Field::None && m_category == Category::ProfilerRange) m_counterName.assign(k.data(), k.size());
        break;
    case Ctx::Device:
    case Ctx::DistInfo:
        m_objectKey.assign(k.data(), k.size());
        break;
    default:
        break;
    }
    return true;
}

bool KinetoHandler::value(ValueType type, std::string_view text, bool copy) {
    if (m_skip > 0) return true;
    const bool isString = type == ValueType::String;
    switch (m_stack.back()) {
    case Ctx::Event:
        if (m_eventKey == Field::Args || m_eventKey == Field::None) break;
        set(m_eventKey, text, isString, copy);
        if (m_eventKey == Field::Cat) m_category = classifyCategory(text);
        break;
    case Ctx::Args:
        if (m_argKey != Field::None && m_argKey != Field::Grid && m_argKey != Field::Block) {
            set(m_argKey, text, isString, copy);
        } else if (m_argKey == Field::None && m_category == Category::ProfilerRange && type == ValueType::Number) {
            if (m_counterCount == m_counterArgs.size()) m_counterArgs.emplace_back();
            m_counterArgs[m_counterCount].first = m_counterName;
            m_counterArgs[m_counterCount].second.assign(text.data(), text.size());
            ++m_counterCount;
        }
        break;
    case Ctx::ArgArray:
        arrayValue(type, text);
        break;
    case Ctx::Root:
        return fail(ImportError::Kind::NotATrace,
            "the JSON text is a single value, not a trace: expected an object with \"traceEvents\" or an array of "
            "events");
    case Ctx::TopObject:
        switch (m_topKey) {
        case TopKey::TraceEvents:
            return fail(ImportError::Kind::NotATrace, "\"traceEvents\" is not an array");
        case TopKey::DisplayTimeUnit:
            m_b.info().displayTimeUnit = std::string(text);
            break;
        case TopKey::BaseTime:
            if (auto v = parseInteger(text)) m_baseTimeNs = *v;
            break;
        case TopKey::SchemaVersion:
            if (auto v = parseInteger(text); v && *v >= INT32_MIN && *v <= INT32_MAX)
                m_b.info().schemaVersion = static_cast<int>(*v);
            break;
        case TopKey::TraceName:
            m_b.info().traceName = std::string(text);
            break;
        default:
            if (text.size() <= 4096 && m_b.info().metadata.size() < 256)
                m_b.info().metadata.emplace_back(m_topKeyText, std::string(text));
            break;
        }
        break;
    case Ctx::Events:
        if (m_placeholderPending)
            m_placeholderPending = false;
        else
            count(Counter::NonObjectEvent);
        break;
    case Ctx::Devices:
        break; // not a device description: nothing to read
    case Ctx::Device:
        if (m_objectKey == "id")
            m_device.id = static_cast<int32_t>(parseInteger(text).value_or(0));
        else if (m_objectKey == "name")
            m_device.name = std::string(text);
        else if (m_objectKey == "totalGlobalMem")
            m_device.globalMemoryBytes = parseInteger(text).value_or(0);
        else if (m_objectKey == "computeMajor")
            m_device.computeMajor = static_cast<int>(parseInteger(text).value_or(0));
        else if (m_objectKey == "computeMinor")
            m_device.computeMinor = static_cast<int>(parseInteger(text).value_or(0));
        else if (m_objectKey == "numSms")
            m_device.smCount = static_cast<int>(parseInteger(text).value_or(0));
        else if (m_objectKey == "warpSize")
            m_device.warpSize = static_cast<int>(parseInteger(text).value_or(0));
        break;
    case Ctx::DistInfo:
        if (m_objectKey == "rank") {
            if (auto v = parseInteger(text); v && *v >= 0 && *v <= INT32_MAX) m_b.info().rank = static_cast<int>(*v);
        } else if (m_objectKey == "world_size") {
            if (auto v = parseInteger(text); v && *v > 0 && *v <= INT32_MAX)
                m_b.info().worldSize = static_cast<int>(*v);
        } else if (m_objectKey == "backend") {
            m_b.info().backend = std::string(text);
        } else if (text.size() <= 4096) {
            m_b.info().metadata.emplace_back("distributedInfo." + m_objectKey, std::string(text));
        }
        break;
    }
    return true;
}

void KinetoHandler::arrayValue(ValueType type, std::string_view text) {
    if (m_arrayField == Field::Grid || m_arrayField == Field::Block) {
        auto& dims = m_arrayField == Field::Grid ? m_grid : m_block;
        int& n = m_arrayField == Field::Grid ? m_gridCount : m_blockCount;
        if (m_arrayDepth == 1 && n < 3)
            dims[static_cast<size_t>(n++)] = static_cast<int32_t>(integerValue(text).value_or(0));
        return;
    }
    if (m_arrayField == Field::InputTypes) {
        if (m_arrayDepth != 1) return; // types are a flat list
        if (m_arrayHasItems & 2) m_arrayText->push_back(',');
        m_arrayHasItems |= 2;
        m_arrayText->append(text);
        return;
    }
    // InputDims: compact JSON
    const uint64_t bit = uint64_t(1) << std::min(m_arrayDepth, 63);
    if (m_arrayHasItems & bit) m_arrayText->push_back(',');
    m_arrayHasItems |= bit;
    if (type == ValueType::String) {
        m_arrayText->push_back('"');
        for (char c : text) {
            if (c == '"' || c == '\\') m_arrayText->push_back('\\');
            m_arrayText->push_back(c);
        }
        m_arrayText->push_back('"');
    } else {
        m_arrayText->append(text);
    }
}

bool KinetoHandler::StartObject() {
    if (m_skip > 0) {
        ++m_skip;
        return true;
    }
    switch (m_stack.back()) {
    case Ctx::Events:
        beginEvent();
        m_stack.push_back(Ctx::Event);
        break;
    case Ctx::Event:
        if (m_eventKey == Field::Args)
            m_stack.push_back(Ctx::Args);
        else
            skipContainer();
        break;
    case Ctx::Root:
        m_sawRoot = true;
        m_stack.push_back(Ctx::TopObject);
        break;
    case Ctx::TopObject:
        if (m_topKey == TopKey::TraceEvents)
            return fail(ImportError::Kind::NotATrace, "\"traceEvents\" is not an array");
        if (m_topKey == TopKey::DistributedInfo) {
            m_objectKey.clear();
            m_stack.push_back(Ctx::DistInfo);
        } else {
            skipContainer();
        }
        break;
    case Ctx::Devices:
        m_device = DeviceInfo();
        m_objectKey.clear();
        m_stack.push_back(Ctx::Device);
        break;
    case Ctx::ArgArray:
        if (m_arrayField == Field::InputDims) {
            // Not expected in Input Dims; keep the text valid JSON.
            const uint64_t bit = uint64_t(1) << std::min(m_arrayDepth, 63);
            if (m_arrayHasItems & bit) m_arrayText->push_back(',');
            m_arrayHasItems |= bit;
            m_arrayText->append("{}");
        }
        skipContainer();
        break;
    default:
        skipContainer();
        break;
    }
    return true;
}

bool KinetoHandler::EndObject(rapidjson::SizeType) {
    if (m_skip > 0) {
        --m_skip;
        return true;
    }
    const Ctx ctx = m_stack.back();
    m_stack.pop_back();
    switch (ctx) {
    case Ctx::Event:
        endEvent();
        break;
    case Ctx::Device:
        if (m_device.vendor == GpuVendor::Unknown) m_device.vendor = vendorFromDeviceName(m_device.name);
        m_b.addDevice(std::move(m_device));
        m_device = DeviceInfo();
        break;
    case Ctx::Args:
        m_argKey = Field::None;
        break;
    default:
        break;
    }
    return true;
}

// An array of events starts. A window reads its events itself; the document has them read by
// readEvents, which leaves the input at the closing bracket, so that the parser sees an empty array.
bool KinetoHandler::enterEvents() {
    m_sawTraceEvents = true;
    m_stack.push_back(Ctx::Events);
    if (m_role == Role::Document && m_readEvents && !(*m_readEvents)()) {
        if (!m_failure)
            m_failure = Failure { ImportError::Kind::Malformed, "the events could not be read", std::nullopt };
        return false;
    }
    return true;
}

bool KinetoHandler::StartArray() {
    if (m_skip > 0) {
        ++m_skip;
        return true;
    }
    switch (m_stack.back()) {
    case Ctx::Args:
        if (m_argKey == Field::Grid || m_argKey == Field::Block || m_argKey == Field::InputDims
            || m_argKey == Field::InputTypes) {
            m_arrayField = m_argKey;
            m_arrayDepth = 1;
            m_arrayHasItems = 0;
            m_arrayText = m_argKey == Field::InputDims ? &m_inputDims : &m_inputTypes;
            m_arrayText->clear();
            if (m_argKey == Field::InputDims) m_arrayText->push_back('[');
            m_present |= uint64_t(1) << static_cast<size_t>(m_argKey);
            m_text[static_cast<size_t>(m_argKey)] = {};
            m_stack.push_back(Ctx::ArgArray);
        } else {
            skipContainer();
        }
        break;
    case Ctx::ArgArray:
        if (m_arrayField == Field::InputDims) {
            const uint64_t bit = uint64_t(1) << std::min(m_arrayDepth, 63);
            if (m_arrayHasItems & bit) m_arrayText->push_back(',');
            m_arrayHasItems |= bit;
            ++m_arrayDepth;
            m_arrayHasItems &= ~(uint64_t(1) << std::min(m_arrayDepth, 63));
            m_arrayText->push_back('[');
        } else {
            ++m_arrayDepth;
        }
        break;
    case Ctx::Events:
        count(Counter::NonObjectEvent);
        skipContainer();
        break;
    case Ctx::Root:
        m_sawRoot = true;
        // A window's text is its events; a document that is an array is the 2020 form.
        if (m_role == Role::Document) m_b.info().legacyArrayForm = true;
        return enterEvents();
    case Ctx::TopObject:
        if (m_topKey == TopKey::TraceEvents) return enterEvents();
        if (m_topKey == TopKey::DeviceProperties)
            m_stack.push_back(Ctx::Devices);
        else
            skipContainer();
        break;
    default:
        skipContainer();
        break;
    }
    return true;
}

bool KinetoHandler::EndArray(rapidjson::SizeType) {
    if (m_skip > 0) {
        --m_skip;
        return true;
    }
    if (m_stack.back() == Ctx::ArgArray) {
        if (m_arrayField == Field::InputDims) m_arrayText->push_back(']');
        if (--m_arrayDepth > 0) return true;
        m_text[static_cast<size_t>(m_arrayField)] = *m_arrayText; // complete: valid until the next array
        m_arrayField = Field::None;
        m_arrayText = nullptr;
    }
    m_stack.pop_back();
    return true;
}

void KinetoHandler::endEvent() {
    m_b.stats().eventsRead++;
    const std::string_view ph = get(Field::Ph);
    const char phase = ph.size() == 1 ? ph[0] : '\0';
    switch (phase) {
    case 'X':
        completeEvent();
        break;
    case 'M':
        metadataEvent();
        break;
    case 's':
    case 'f':
    case 't':
        flowEvent(phase);
        break;
    case 'i':
    case 'I':
        count(m_category == Category::CpuInstant ? Counter::CpuInstant : Counter::Instant);
        break;
    case 'B':
    case 'E':
        count(Counter::BeginEnd);
        break;
    case 'C':
        count(Counter::CounterEvent);
        break;
    default:
        count(Counter::UnknownPhase);
        break;
    }
}

void KinetoHandler::completeEvent() {
    const auto ts = has(Field::Ts) ? nanosFromMicros(get(Field::Ts)) : std::nullopt;
    if (!ts) {
        count(Counter::NoTs);
        return;
    }
    int64_t dur = 0;
    if (!has(Field::Dur)) {
        count(Counter::NoDur);
    } else if (auto d = nanosFromMicros(get(Field::Dur)); !d) {
        count(Counter::NoDur);
    } else if (*d < 0) {
        count(Counter::NegativeDur);
    } else {
        dur = *d;
    }
    const int64_t start = *ts;
    int64_t end = 0;
    if (__builtin_add_overflow(start, dur, &end)) end = start;
    const std::string_view name = get(Field::Name);

    switch (m_category) {
    case Category::Kernel: {
        Kernel k;
        k.startNs = start;
        k.endNs = end;
        k.device = deviceOf();
        k.stream = streamOf();
        k.correlation = unsignedOr(Field::Correlation, 0);
        k.externalId = unsignedOr(Field::ExternalId, 0);
        k.name = m_b.intern(name);
        k.gridX = m_grid[0];
        k.gridY = m_grid[1];
        k.gridZ = m_grid[2];
        k.blockX = m_block[0];
        k.blockY = m_block[1];
        k.blockZ = m_block[2];
        k.registersPerThread = int32Or(Field::Registers, 0);
        k.sharedMemoryBytes = int32Or(Field::SharedMemory, 0);
        const RowIndex row = m_b.addKernel(k);
        if (has(Field::CollectiveName) || isCollectiveKernel(name))
            addCollective(CollectiveOrigin::Kernel, row, start, end, name);
        if (get(Field::ArgKind) == "Dispatch Kernel") ++m_amdKernels; // ROCm's kernel records say so
        break;
    }
    case Category::Memcpy: {
        Memcpy c;
        c.startNs = start;
        c.endNs = end;
        c.device = deviceOf();
        c.stream = streamOf();
        c.correlation = unsignedOr(Field::Correlation, 0);
        c.externalId = unsignedOr(Field::ExternalId, 0);
        c.bytes = integerOr(Field::Bytes, -1);
        parseMemcpyName(name, c);
        if (c.copyKind == CopyKind::Unknown && has(Field::ArgKind)) c.copyKind = copyKindFromName(get(Field::ArgKind));
        m_b.addMemcpy(c);
        break;
    }
    case Category::Memset: {
        Memset s;
        s.startNs = start;
        s.endNs = end;
        s.device = deviceOf();
        s.stream = streamOf();
        s.correlation = unsignedOr(Field::Correlation, 0);
        s.externalId = unsignedOr(Field::ExternalId, 0);
        s.bytes = integerOr(Field::Bytes, -1);
        // "Memset (Device)"
        if (const size_t open = name.find('('), close = name.rfind(')');
            open != std::string_view::npos && close != std::string_view::npos && open < close)
            s.memoryKind = memoryKindFromName(name.substr(open + 1, close - open - 1));
        m_b.addMemset(s);
        break;
    }
    case Category::Runtime:
    case Category::Driver: {
        ApiCall a;
        a.startNs = start;
        a.endNs = end;
        a.thread = m_b.thread(trackId(Field::Pid), trackId(Field::Tid));
        a.api = m_category == Category::Driver ? ApiKind::Driver : ApiKind::Runtime;
        a.cbid = int32Or(Field::Cbid, -1);
        a.name = m_b.intern(name);
        a.correlation = unsignedOr(Field::Correlation, 0);
        a.externalId = unsignedOr(Field::ExternalId, 0);
        m_b.addApiCall(a);
        if (name.starts_with("hip"))
            ++m_hipCalls;
        else if (name.starts_with("cu"))
            ++m_cudaCalls;
        break;
    }
    case Category::LegacyOperator:
    case Category::CpuOp:
        if (m_category == Category::CpuOp || !isLegacyUserRange(name)) {
            CpuOp op;
            op.startNs = start;
            op.endNs = end;
            op.thread = m_b.thread(trackId(Field::Pid), trackId(Field::Tid));
            op.name = m_b.intern(name);
            op.externalId = unsignedOr(Field::ExternalId, 0);
            op.sequenceNumber = integerOr(Field::SequenceNumber, -1);
            if (has(Field::InputDims)) op.inputDims = m_b.intern(get(Field::InputDims));
            if (has(Field::InputTypes)) op.inputTypes = m_b.intern(get(Field::InputTypes));
            const RowIndex row = m_b.addCpuOp(op);
            if (has(Field::CollectiveName) || name == "record_param_comms")
                addCollective(CollectiveOrigin::CpuOp, row, start, end, {});
            break;
        }
        [[fallthrough]]; // a record_function range in a 2020 trace
    case Category::UserAnnotation: {
        Annotation a;
        a.startNs = start;
        a.endNs = end;
        a.thread = m_b.thread(trackId(Field::Pid), trackId(Field::Tid));
        a.name = m_b.intern(name);
        a.externalId = unsignedOr(Field::ExternalId, 0);
        m_b.addAnnotation(a);
        break;
    }
    case Category::GpuUserAnnotation: {
        GpuAnnotation g;
        g.startNs = start;
        g.endNs = end;
        g.device = deviceOf();
        g.stream = streamOf();
        g.name = m_b.intern(name);
        g.externalId = unsignedOr(Field::ExternalId, 0);
        m_b.addGpuAnnotation(g);
        break;
    }
    case Category::CudaSync: {
        Sync s;
        s.startNs = start;
        s.endNs = end;
        s.device = deviceOf();
        s.stream = streamOf();
        s.type = syncTypeFromName(has(Field::SyncKind) ? get(Field::SyncKind) : name);
        s.correlation = unsignedOr(Field::Correlation, 0);
        s.externalId = unsignedOr(Field::ExternalId, 0);
        s.eventId = integerOr(Field::WaitOnEvent, -1);
        s.waitStream = int32Or(Field::WaitOnStream, -1);
        m_b.addSync(s);
        break;
    }
    case Category::ProfilerRange: {
        CounterRange r;
        r.startNs = start;
        r.endNs = end;
        r.device = deviceOf();
        r.name = m_b.intern(name);
        m_counterValues.clear();
        for (size_t i = 0; i < m_counterCount; ++i) {
            const std::string& text = m_counterArgs[i].second;
            double v = 0;
            auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            (void)ptr;
            if (ec == std::errc()) m_counterValues.emplace_back(m_b.intern(m_counterArgs[i].first), v);
        }
        m_b.addCounterRange(r, m_counterValues);
        break;
    }
    case Category::Trace:
        m_b.info().profilerWindows.push_back({ start, end });
        break;
    case Category::PythonFunction: {
        PythonFunction f;
        f.startNs = start;
        f.endNs = end;
        f.thread = m_b.thread(trackId(Field::Pid), trackId(Field::Tid));
        f.name = m_b.intern(name);
        m_b.addPythonFunction(f);
        break;
    }
    case Category::Overhead:
        count(Counter::Overhead);
        break;
    case Category::CpuInstant:
    case Category::None:
    case Category::Other: {
        count(Counter::UnknownCategory);
        const std::string_view cat = get(Field::Cat);
        auto it = m_unknownCategories.find(cat);
        if (it == m_unknownCategories.end())
            m_unknownCategories.emplace(std::string(cat), 1);
        else
            ++it->second;
        break;
    }
    }
}

void KinetoHandler::addCollective(
    CollectiveOrigin origin, RowIndex row, int64_t start, int64_t end, std::string_view kernelName) {
    Collective c;
    c.startNs = start;
    c.endNs = end;
    c.origin = origin;
    c.eventRow = row;
    if (has(Field::CollectiveName))
        c.name = m_b.intern(get(Field::CollectiveName));
    else if (!kernelName.empty())
        c.name = m_b.intern(collectiveFromKernelName(kernelName));
    c.inNelems = integerOr(Field::InMsgNelems, -1);
    c.outNelems = integerOr(Field::OutMsgNelems, -1);
    c.groupSize = int32Or(Field::GroupSize, -1);
    if (has(Field::Dtype)) {
        c.dtype = m_b.intern(get(Field::Dtype));
        c.elementBytes = dtypeBytes(get(Field::Dtype));
    }
    if (has(Field::PgName)) c.processGroup = m_b.intern(get(Field::PgName));
    if (has(Field::PgRanks)) c.groupRanks = m_b.intern(get(Field::PgRanks));
    c.commsId = unsignedOr(Field::CommsId, 0);
    m_b.addCollective(c);
}

void KinetoHandler::metadataEvent() {
    count(Counter::Metadata);
    const std::string_view name = get(Field::Name);
    if (name == "process_name" && has(Field::ArgName))
        m_names.push_back({ NameEvent::Kind::Process, trackId(Field::Pid), 0, std::string(get(Field::ArgName)) });
    else if (name == "process_labels" && has(Field::ArgLabels))
        m_names.push_back(
            { NameEvent::Kind::ProcessLabels, trackId(Field::Pid), 0, std::string(get(Field::ArgLabels)) });
    else if (name == "thread_name" && has(Field::ArgName))
        m_names.push_back(
            { NameEvent::Kind::Thread, trackId(Field::Pid), trackId(Field::Tid), std::string(get(Field::ArgName)) });
}

void KinetoHandler::flowEvent(char phase) {
    if (phase == 't') {
        count(Counter::FlowStep);
        return;
    }
    const auto ts = has(Field::Ts) ? nanosFromMicros(get(Field::Ts)) : std::nullopt;
    if (!ts || !has(Field::Id)) {
        count(Counter::NoTs);
        return;
    }
    FlowHalf half { *ts, trackId(Field::Pid), trackId(Field::Tid), 0, 0, phase == 's', false };
    if (auto v = unsignedValue(get(Field::Id))) {
        half.id = *v;
    } else {
        half.id = m_b.intern(get(Field::Id)); // a string id: any stable number will do
        half.idIsString = true;
    }
    half.category = m_b.intern(get(Field::Cat)); // after the id, for the ids one reader would give
    m_flowHalves.push_back(half);
}

void KinetoHandler::absorb(KinetoHandler& part, const std::vector<StringId>& strings) {
    for (size_t i = 0; i < m_counters.size(); ++i)
        m_counters[i] += part.m_counters[i];
    for (const auto& [cat, n] : part.m_unknownCategories)
        m_unknownCategories[cat] += n;
    m_hipCalls += part.m_hipCalls;
    m_cudaCalls += part.m_cudaCalls;
    m_amdKernels += part.m_amdKernels;

    for (const NameEvent& n : part.m_names) {
        switch (n.kind) {
        case NameEvent::Kind::Process:
            m_b.setProcessName(n.pid, n.text);
            break;
        case NameEvent::Kind::ProcessLabels:
            m_b.setProcessLabels(n.pid, n.text);
            break;
        case NameEvent::Kind::Thread:
            m_b.setThreadName(n.pid, n.tid, n.text);
            break;
        }
    }
    // Flows pair by (category, id) in text order, over the whole file.
    for (const FlowHalf& h : part.m_flowHalves) {
        const FlowKey key { strings[h.category], h.idIsString ? strings[h.id] : h.id };
        const FlowEnd here { h.ts, h.pid, h.tid };
        auto& mine = h.start ? m_flowStarts : m_flowEnds;
        auto& other = h.start ? m_flowEnds : m_flowStarts;
        auto it = other.find(key);
        if (it == other.end()) {
            mine[key] = here; // a later duplicate replaces an unmatched earlier one
            continue;
        }
        const FlowEnd& start = h.start ? here : it->second;
        const FlowEnd& end = h.start ? it->second : here;
        m_b.addFlow({ start.ts, end.ts, key.id, key.category, start.pid, start.tid, end.pid, end.tid });
        other.erase(it);
    }
}

void KinetoHandler::finish() {
    m_counters[static_cast<size_t>(Counter::FlowUnpaired)]
        += static_cast<int64_t>(m_flowStarts.size() + m_flowEnds.size());
    ImportStats& stats = m_b.stats();
    for (size_t i = 0; i < m_counters.size(); ++i)
        if (m_counters[i] != 0)
            stats.add(kCounterInfo[i].name, kCounterInfo[i].severity, m_counters[i], kCounterInfo[i].description);
    for (auto& [cat, n] : m_unknownCategories)
        stats.unknownCategories[cat.empty() ? "(no category)" : cat] += n;
    if (m_baseTimeNs) {
        // Kineto writes times relative to baseTimeNanoseconds (to keep them exact as doubles).
        m_b.info().baseTimeNs = m_baseTimeNs;
        m_b.shiftTimes(*m_baseTimeNs);
    }

    // From the API names and kernel records; addNotes() then weighs in the device names.
    const bool amd = m_hipCalls > 0 || m_amdKernels > 0;
    m_b.info().vendor = amd ? GpuVendor::Amd : m_cudaCalls > 0 ? GpuVendor::Nvidia : GpuVendor::Unknown;
}

// ---- the two roles --------------------------------------------------------------------------------------

KinetoPart::KinetoPart()
    : m_builder(std::make_unique<TraceBuilder>(SourceFormat::KinetoJson, std::string()))
    , m_handler(std::make_unique<KinetoHandler>(*m_builder, KinetoHandler::Role::Window)) {
}

KinetoPart::~KinetoPart() = default;
KinetoPart::KinetoPart(KinetoPart&&) noexcept = default;
KinetoPart& KinetoPart::operator=(KinetoPart&&) noexcept = default;

namespace {

// Windows are parsed in place: strings and numbers are handed out where they lie, not copied.
constexpr unsigned kInSituFlags = (kJsonParseFlags & ~rapidjson::kParseIterativeFlag) | rapidjson::kParseInsituFlag;
// Nesting up to which the recursive parser (faster) cannot run out of stack.
constexpr int64_t kMaxRecursion = 256;

} // namespace

rapidjson::ParseResult KinetoPart::parse(JsonWindow& window, std::vector<char>& scratch) {
    m_handler->setPlaceholder(window.placeholder);
    if (window.controlBytes) {
        // Not JSON (see JsonWindow::controlBytes): read as the document's parser reads, for its verdict.
        BytewiseStream stream(window.buffer.get());
        return rapidjson::Reader().Parse<kJsonParseFlags>(stream, *m_handler);
    }
    char* text = window.buffer.get();
    if (window.escapes) {
        // Unescaping moves string bytes: parse a copy, the window stays as read.
        const size_t bytes = window.size + JsonWindow::kPadding;
        if (scratch.size() < bytes) scratch.resize(bytes);
        std::memcpy(scratch.data(), text, bytes);
        text = scratch.data();
    }
    rapidjson::InsituStringStream stream(text);
    rapidjson::Reader reader;
    const rapidjson::ParseResult result = window.maxDepth <= kMaxRecursion
        ? reader.Parse<kInSituFlags>(stream, *m_handler)
        : reader.Parse<kInSituFlags | rapidjson::kParseIterativeFlag>(stream, *m_handler);
    if (!result.IsError()) return result;
    if (!window.escapes) {
        // Without escapes the parse wrote only the '\0' ending each string, over its closing quote,
        // and only before where it stopped; a '\0' there can be nothing else (one in the text stops
        // the parse where it is).
        const size_t written = std::min(result.Offset(), window.size);
        std::replace(window.buffer.get(), window.buffer.get() + written, '\0', '"');
    }
    // A window's handler never stops the parse: the error is in the text. Found again as the document's
    // parser finds errors (byte by byte, iterative, not in place), for the same code and offset.
    return parseBytewise(window.buffer.get());
}

KinetoDocument::KinetoDocument(TraceBuilder& builder)
    : m_builder(builder)
    , m_handler(std::make_unique<KinetoHandler>(builder, KinetoHandler::Role::Document)) {
}

KinetoDocument::~KinetoDocument() = default;

rapidjson::ParseResult KinetoDocument::parse(JsonChunkInput& input, const std::function<bool()>& readEvents) {
    m_handler->setReadEvents(&readEvents);
    rapidjson::Reader reader;
    const rapidjson::ParseResult result = reader.Parse<kJsonParseFlags>(input, *m_handler);
    m_handler->setReadEvents(nullptr);
    return result;
}

void KinetoDocument::merge(KinetoPart& part) {
    const std::vector<StringId> strings = m_builder.append(*part.m_builder);
    m_handler->absorb(*part.m_handler, strings);
    part = KinetoPart();
}

void KinetoDocument::fail(Failure failure) {
    m_handler->fail(std::move(failure));
}
void KinetoDocument::expectPlaceholder(bool pending) {
    m_handler->setPlaceholder(pending);
}
const std::optional<KinetoDocument::Failure>& KinetoDocument::failure() const {
    return m_handler->failure();
}
bool KinetoDocument::sawContainer() const {
    return m_handler->sawContainer();
}
bool KinetoDocument::sawTraceEvents() const {
    return m_handler->sawTraceEvents();
}
void KinetoDocument::finish() {
    m_handler->finish();
}

} // namespace tuneup::analysis
