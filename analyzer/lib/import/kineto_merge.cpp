// What depends on the whole file: process and thread names and flow halves, which each window only
// records, replayed in text order as the document merges the windows; counters, base time and vendor
// settled at the end.

#include "import/kineto_sax_handler.h"

namespace tuneup::analysis {

using namespace kineto;

namespace {

struct CounterInfo {
    std::string_view name;
    StatSeverity severity;
    std::string_view description;
};
constexpr CounterInfo kCounterInfo[] = {
    { "skipped_instant_events", StatSeverity::Info, "instant events (markers) are not modelled" },
    { "skipped_cpu_instant_events", StatSeverity::Info,
        "cpu_instant_event events other than [memory] ([OutOfMemory]...) are not modelled" },
    { "memory_events_unread", StatSeverity::DataLoss,
        "[memory] events with neither a size (Bytes) nor the allocator's totals, or on a device other than the CPU "
        "or a GPU: not read" },
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

} // namespace

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

} // namespace tuneup::analysis
