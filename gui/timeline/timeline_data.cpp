#include "timeline/timeline_data.h"

#include "advise/kernel_class.h"
#include "steps/memory_peak.h"
#include "timeline/row_assignment.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

namespace tuneup::gui {

using namespace analysis;

void Lane::add(int64_t start, int64_t end, EventKind kind, Source source, RowIndex row, uint32_t name) {
    starts.push_back(start);
    ends.push_back(std::max(end, start)); // a negative duration (bad clock data) draws as a line
    kinds.push_back(kind);
    sources.push_back(source);
    rows.push_back(row);
    names.push_back(name);
}

size_t Track::events() const {
    size_t n = 0;
    for (const Lane& lane : lanes)
        n += lane.size();
    return n;
}

namespace {

constexpr uint32_t kLaneBits = 12;
constexpr uint32_t kMaxLane = (1u << kLaneBits) - 1;

EventKind kernelKind(KernelClass c) {
    switch (c) {
    case KernelClass::Gemm:
    case KernelClass::Convolution:
        return EventKind::KernelGemm;
    case KernelClass::Communication:
        return EventKind::KernelComm;
    default:
        return EventKind::KernelCompute;
    }
}

// The events of one track before they are split into rows.
struct Pending {
    std::vector<int64_t> starts, ends;
    std::vector<uint8_t> rank; // nesting order on equal spans: ranges outside ops outside calls
    std::vector<EventKind> kinds;
    std::vector<Source> sources;
    std::vector<RowIndex> rows;
    std::vector<uint32_t> names;
    void add(int64_t s, int64_t e, uint8_t r, EventKind k, Source src, RowIndex row, uint32_t name) {
        starts.push_back(s);
        ends.push_back(std::max(e, s));
        rank.push_back(r);
        kinds.push_back(k);
        sources.push_back(src);
        rows.push_back(row);
        names.push_back(name);
    }
    bool empty() const { return starts.empty(); }
};

class Builder {
public:
    Builder(TimelineData& data, std::vector<std::vector<std::vector<uint32_t>>>& places)
        : m_data(data)
        , m_places(places) { }

    uint32_t syntheticName(const std::string& text) {
        auto [it, added] = m_nameIds.try_emplace(text, uint32_t(m_data.names.size()));
        if (added) m_data.names.push_back(text);
        return kTimelineName | it->second;
    }

    // Splits `p` into lanes by nesting and appends the track.
    void addTrack(Track track, Pending& p) {
        const std::vector<uint32_t> order = nestingOrder(p.starts, p.ends, p.rank);
        std::vector<int64_t> starts(order.size()), ends(order.size());
        for (size_t i = 0; i < order.size(); ++i) {
            starts[i] = p.starts[order[i]];
            ends[i] = p.ends[order[i]];
        }
        const std::vector<uint16_t> rows = assignRows(starts, ends);
        const uint16_t depth = rows.empty() ? 0 : *std::max_element(rows.begin(), rows.end());
        track.lanes.resize(size_t(depth) + 1);
        const uint32_t trackIndex = uint32_t(m_data.tracks.size());
        for (size_t i = 0; i < order.size(); ++i) {
            const uint32_t k = order[i];
            track.lanes[rows[i]].add(starts[i], ends[i], p.kinds[k], p.sources[k], p.rows[k], p.names[k]);
            if (placeIndex(p.sources[k]) < kPlacedSources) {
                auto& places = m_places[track.model][placeIndex(p.sources[k])];
                if (size_t(p.rows[k]) < places.size())
                    places[size_t(p.rows[k])] = trackIndex << kLaneBits | std::min<uint32_t>(rows[i], kMaxLane);
            }
        }
        if (!starts.empty()) {
            m_data.span.startNs = std::min(m_data.span.startNs, starts.front());
            m_data.span.endNs = std::max(m_data.span.endNs, *std::max_element(ends.begin(), ends.end()));
        }
        m_data.tracks.push_back(std::move(track));
    }

    // Time drawn by a track beside its lanes' events.
    void cover(TimeRange r) {
        m_data.span.startNs = std::min(m_data.span.startNs, r.startNs);
        m_data.span.endNs = std::max(m_data.span.endNs, r.endNs);
    }

    // A track whose lanes are already laid out.
    void addFixedTrack(Track track) {
        const uint32_t trackIndex = uint32_t(m_data.tracks.size());
        for (uint32_t l = 0; l < track.lanes.size(); ++l) {
            const Lane& lane = track.lanes[l];
            if (!lane.size()) continue;
            m_data.span.startNs = std::min(m_data.span.startNs, lane.starts.front());
            m_data.span.endNs = std::max(m_data.span.endNs, lane.ends.back());
            for (size_t i = 0; i < lane.size(); ++i)
                if (placeIndex(lane.sources[i]) < kPlacedSources) {
                    auto& places = m_places[track.model][placeIndex(lane.sources[i])];
                    if (size_t(lane.rows[i]) < places.size())
                        places[size_t(lane.rows[i])] = trackIndex << kLaneBits | std::min(l, kMaxLane);
                }
        }
        m_data.tracks.push_back(std::move(track));
    }

private:
    TimelineData& m_data;
    std::vector<std::vector<std::vector<uint32_t>>>& m_places;
    std::unordered_map<std::string, uint32_t> m_nameIds;
};

std::string copyName(const TraceModel& model, size_t i) {
    std::string name = "Memcpy ";
    name += copyKindName(model.memcpys.copyKind[i]);
    const MemoryKind host
        = model.memcpys.copyKind[i] == CopyKind::DtoH ? model.memcpys.dstKind[i] : model.memcpys.srcKind[i];
    if (host == MemoryKind::Pageable || host == MemoryKind::Pinned)
        name += host == MemoryKind::Pageable ? " (pageable)" : " (pinned)";
    return name;
}

void addStepsTrack(Builder& b, uint32_t m, const TimelineInput& in, size_t inputs) {
    const StepAnalysis& steps = *in.steps;
    if (steps.detection.steps.empty()) return;
    const TraceModel& model = *in.model;
    Track track;
    track.type = TrackType::Steps;
    track.model = m;
    track.group = in.label;
    track.title = inputs > 1 ? "steps · " + in.label : "steps";
    // Lane 0 the steps, lane 1 the idle gaps in them, coloured by what the host did meanwhile. A step
    // is clipped to start where the previous one ended so that the lane never overlaps. Without GPU
    // activity nothing idled on a GPU: no gap lane.
    track.lanes.resize(steps.gpuActivity() ? 2 : 1);
    int64_t previousEnd = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < steps.detection.steps.size(); ++i) {
        const Step& s = steps.detection.steps[i];
        const uint32_t name = s.annotation != kNoRow && size_t(s.annotation) < model.annotations.size()
            ? model.annotations.name[size_t(s.annotation)]
            : b.syntheticName("step " + std::to_string(s.number));
        const int64_t start = std::max(s.startNs, previousEnd);
        track.lanes[0].add(start, std::max(s.endNs, start), EventKind::Step, Source::Step, RowIndex(i), name);
        previousEnd = std::max(s.endNs, start);
    }
    if (!steps.gpuActivity()) {
        b.addFixedTrack(std::move(track));
        return;
    }
    const uint32_t idle = b.syntheticName("GPU idle");
    previousEnd = std::numeric_limits<int64_t>::min();
    for (size_t i = 0; i < steps.gaps.size(); ++i) {
        const IdleGap& g = steps.gaps[i];
        EventKind kind = EventKind::IdleHost;
        if (g.inGraph)
            kind = EventKind::IdleGraph;
        else if (g.dataNs >= g.syncNs() && g.dataNs >= g.hostNs())
            kind = EventKind::IdleData;
        else if (g.syncNs() >= g.hostNs())
            kind = EventKind::IdleSync;
        const int64_t start = std::max(g.span.startNs, previousEnd);
        track.lanes[1].add(start, std::max(g.span.endNs, start), kind, Source::IdleGap, RowIndex(i), idle);
        previousEnd = std::max(g.span.endNs, start);
    }
    b.addFixedTrack(std::move(track));
}

// A GPU's memory as one lane: each memory event holds until the device's next one, the last until the end
// of the trace. Allocated memory when the trace says, with the reserved memory beside it; else the
// reserved memory alone (nsys, tuneup's CUPTI records). A trace with allocation sizes only draws their running
// sum: a lower bound. The allocator's peaks per window (tuneup's Python bootstrap, once per optimizer step) are
// drawn over it: the highest level of each step, which the events between two readings may not show.
void addMemoryTrack(Builder& b, uint32_t m, const TraceModel& model, int32_t device, std::string group) {
    MemoryCurve curve = memoryCurve(model, device, MemoryTotal::Allocated);
    const bool allocatedCurve = curve.source != MemorySource::None;
    if (!allocatedCurve) curve = memoryCurve(model, device, MemoryTotal::Reserved);
    Track track;
    track.type = TrackType::Memory;
    track.model = m;
    track.group = std::move(group);
    track.lanes.resize(1);
    MemoryLevels& levels = track.memory;
    const MemoryPeakTable& peaks = model.memoryPeaks;
    for (size_t i = 0; i < peaks.size(); ++i)
        if (peaks.device[i] == device && (peaks.allocatedBytes[i] >= 0 || peaks.reservedBytes[i] >= 0))
            levels.windowPeaks.push_back({ std::min(peaks.startNs[i], peaks.endNs[i]), peaks.endNs[i],
                peaks.allocatedBytes[i], peaks.reservedBytes[i] });
    if (curve.timeNs.empty() && levels.windowPeaks.empty()) return;
    std::sort(levels.windowPeaks.begin(), levels.windowPeaks.end(),
        [](const WindowPeak& x, const WindowPeak& y) { return x.startNs < y.startNs; });

    const auto span = model.span();
    const int64_t end
        = curve.timeNs.empty() ? 0 : std::max(span ? span->endNs : curve.timeNs.back(), curve.timeNs.back());
    const uint32_t name = b.syntheticName("GPU memory");
    // The curve's level is filled (`levels.allocated`, though it is the reserved memory when that is all there is).
    int64_t allocatedPeak = -1, reservedPeak = -1;
    for (size_t i = 0; i < curve.timeNs.size(); ++i) {
        const int64_t until = i + 1 < curve.timeNs.size() ? curve.timeNs[i + 1] : end;
        track.lanes[0].add(curve.timeNs[i], until, EventKind::Memory, Source::MemoryEvent, curve.rows[i], name);
        const int64_t reserved = allocatedCurve ? model.memoryEvents.reservedBytes[size_t(curve.rows[i])] : -1;
        levels.allocated.push_back(curve.bytes[i]);
        levels.reserved.push_back(reserved);
        int64_t& curvePeak = allocatedCurve ? allocatedPeak : reservedPeak;
        curvePeak = std::max(curvePeak, curve.bytes[i]);
        reservedPeak = std::max(reservedPeak, reserved);
    }
    for (const WindowPeak& w : levels.windowPeaks) {
        allocatedPeak = std::max(allocatedPeak, w.allocated);
        reservedPeak = std::max(reservedPeak, w.reserved);
        b.cover({ w.startNs, w.endNs });
    }
    levels.scaleBytes = std::max<int64_t>({ 1, allocatedPeak, reservedPeak });
    const bool bars = !levels.windowPeaks.empty();
    track.title = allocatedPeak >= 0 ? "memory · allocated peak " + formatBytes(allocatedPeak)
                                     : "memory · reserved peak " + formatBytes(reservedPeak);
    // The detail line: what the levels are (the reserved peak beside an allocated title; "peak" left out beside
    // "bars", for room), then whether bars are drawn.
    std::vector<std::string> detail;
    if (curve.source == MemorySource::Deltas)
        detail.push_back("sizes only: a lower bound");
    else if (allocatedPeak >= 0 && reservedPeak >= 0)
        detail.push_back((!allocatedCurve && !curve.timeNs.empty() ? "fill: reserved "
                                 : bars                            ? "reserved "
                                                                   : "reserved peak ")
            + formatBytes(reservedPeak));
    if (bars) detail.push_back("bars: steps");
    for (const std::string& part : detail)
        levels.detail += (levels.detail.empty() ? "" : " · ") + part;
    b.addFixedTrack(std::move(track));
}

std::string gpuGroup(const TimelineInput& in, int32_t device) {
    std::string group = in.label + " · GPU " + std::to_string(device);
    if (const DeviceInfo* d = in.model->device(device); d && !d->name.empty()) group += " (" + d->name + ")";
    return group;
}

void addGpuTracks(Builder& b, uint32_t m, const TimelineInput& in) {
    const TraceModel& model = *in.model;
    std::map<std::pair<int32_t, int32_t>, Pending> streams;
    const std::vector<KernelClass> classes = classifyKernels(model);
    for (size_t i = 0; i < model.kernels.size(); ++i)
        streams[{ model.kernels.device[i], model.kernels.stream[i] }].add(model.kernels.startNs[i],
            model.kernels.endNs[i], 1, kernelKind(classes[i]), Source::Kernel, RowIndex(i), model.kernels.name[i]);
    std::map<std::string, uint32_t> copyNames;
    for (size_t i = 0; i < model.memcpys.size(); ++i) {
        const std::string name = copyName(model, i);
        auto it = copyNames.find(name);
        if (it == copyNames.end()) it = copyNames.emplace(name, b.syntheticName(name)).first;
        streams[{ model.memcpys.device[i], model.memcpys.stream[i] }].add(model.memcpys.startNs[i],
            model.memcpys.endNs[i], 1, EventKind::Memcpy, Source::Memcpy, RowIndex(i), it->second);
    }
    // Ranges projected onto a stream (Kineto gpu_user_annotation) hold that stream's kernels: above them.
    for (size_t i = 0; i < model.gpuAnnotations.size(); ++i)
        streams[{ model.gpuAnnotations.device[i], model.gpuAnnotations.stream[i] }].add(model.gpuAnnotations.startNs[i],
            model.gpuAnnotations.endNs[i], 0, EventKind::Range, Source::GpuAnnotation, RowIndex(i),
            model.gpuAnnotations.name[i]);
    const uint32_t memset = b.syntheticName("Memset");
    for (size_t i = 0; i < model.memsets.size(); ++i)
        streams[{ model.memsets.device[i], model.memsets.stream[i] }].add(model.memsets.startNs[i],
            model.memsets.endNs[i], 1, EventKind::Memset, Source::Memset, RowIndex(i), memset);
    // Each GPU's memory track after its streams.
    std::set<int32_t> memory;
    for (const int32_t device : model.memoryEvents.device)
        if (device != kHostMemory) memory.insert(device);
    for (const int32_t device : model.memoryPeaks.device)
        if (device != kHostMemory) memory.insert(device);
    auto addMemory = [&](int32_t device) {
        if (memory.erase(device)) addMemoryTrack(b, m, model, device, gpuGroup(in, device));
    };
    std::optional<int32_t> current;
    for (auto& [key, pending] : streams) {
        if (current && *current != key.first) addMemory(*current);
        current = key.first;
        Track track;
        track.type = TrackType::Gpu;
        track.model = m;
        // One heading per GPU (its model in it), a track per stream under it.
        track.group = gpuGroup(in, key.first);
        track.title = "stream " + std::to_string(key.second);
        b.addTrack(std::move(track), pending);
    }
    if (current) addMemory(*current);
    for (const int32_t device : std::set<int32_t>(memory))
        addMemory(device);
}

std::string processLabel(const TraceModel& model, int64_t pid) {
    std::string label = "pid " + std::to_string(pid);
    for (const ProcessInfo& p : model.processes)
        if (p.pid == pid && !p.name.empty()) return p.name + " (" + label + ")";
    return label;
}

// The sampled thread's states (tuneup recordings), one lane under its track: running, or the system
// call it waited in, each until the next sample; the last until `end`. Returns where the last ends.
int64_t addThreadStateTrack(Builder& b, const TraceModel& model, ThreadIndex thread, Track track, int64_t end) {
    const ThreadStateTable& s = model.threadStates;
    track.type = TrackType::ThreadState;
    track.title = "thread " + std::to_string(model.threads[thread].tid) + " · state (sampled)";
    track.lanes.resize(1);
    std::unordered_map<int64_t, uint32_t> names; // by state << 32 | syscall
    size_t previous = s.size();
    auto close = [&](int64_t until) {
        if (previous == s.size()) return;
        const HostActivity activity = classifyHostState(model.info.machine, s.state[previous], s.syscall[previous]);
        if (activity == HostActivity::Unknown) return;
        const HostState state { activity, int16_t(s.syscall[previous]) };
        const int64_t key = int64_t(activity) << 32 | uint32_t(state.syscall);
        auto it = names.find(key);
        if (it == names.end())
            it = names.emplace(key, b.syntheticName(describeHostState(state, model.info.machine))).first;
        track.lanes[0].add(s.timeNs[previous], std::max(until, s.timeNs[previous]),
            activity == HostActivity::Running ? EventKind::HostRunning : EventKind::HostWaiting, Source::ThreadState,
            RowIndex(previous), it->second);
    };
    for (size_t i = 0; i < s.size(); ++i)
        if (s.thread[i] == thread) {
            close(s.timeNs[i]);
            previous = i;
        }
    if (previous != s.size()) end = std::max(end, s.timeNs[previous]);
    close(end);
    if (track.lanes[0].size()) b.addFixedTrack(std::move(track));
    return end;
}

// Returns where the sampled thread's last state ends (INT64_MIN when none was sampled).
int64_t addThreadTracks(Builder& b, uint32_t m, const TimelineInput& in, const std::atomic<bool>* cancel) {
    const TraceModel& model = *in.model;
    std::vector<Pending> threads(model.threads.size());
    auto on = [&](ThreadIndex t) -> Pending* { return t < threads.size() ? &threads[t] : nullptr; };
    for (size_t i = 0; i < model.annotations.size(); ++i)
        if (Pending* p = on(model.annotations.thread[i])) {
            const StringId name = model.annotations.name[i];
            p->add(model.annotations.startNs[i], model.annotations.endNs[i], 0,
                isDataLoaderWait(model.str(name)) ? EventKind::DataWait : EventKind::Range, Source::Annotation,
                RowIndex(i), name);
        }
    for (size_t i = 0; i < model.cpuOps.size(); ++i)
        if (Pending* p = on(model.cpuOps.thread[i]))
            p->add(model.cpuOps.startNs[i], model.cpuOps.endNs[i], 1, EventKind::CpuOp, Source::CpuOp, RowIndex(i),
                model.cpuOps.name[i]);
    for (size_t i = 0; i < model.gemmCalls.size(); ++i)
        if (Pending* p = on(model.gemmCalls.thread[i]))
            p->add(model.gemmCalls.startNs[i], model.gemmCalls.endNs[i], 2, EventKind::LibraryCall, Source::GemmCall,
                RowIndex(i), model.gemmCalls.name[i]);
    for (size_t i = 0; i < model.convCalls.size(); ++i)
        if (Pending* p = on(model.convCalls.thread[i]))
            p->add(model.convCalls.startNs[i], model.convCalls.endNs[i], 2, EventKind::LibraryCall, Source::ConvCall,
                RowIndex(i), model.convCalls.name[i]);
    // Blocking calls are told by name: classify each distinct name once.
    std::unordered_map<StringId, bool> blocking;
    for (size_t i = 0; i < model.apiCalls.size(); ++i)
        if (Pending* p = on(model.apiCalls.thread[i])) {
            const StringId name = model.apiCalls.name[i];
            auto it = blocking.find(name);
            if (it == blocking.end()) it = blocking.emplace(name, isBlockingCudaCall(model.str(name))).first;
            p->add(model.apiCalls.startNs[i], model.apiCalls.endNs[i], 3,
                it->second ? EventKind::SyncCall : EventKind::ApiCall, Source::ApiCall, RowIndex(i), name);
        }

    // By process, the process's own thread (tid == pid) first, then by thread id; the sampled thread even
    // without events of its own, for its states.
    const ThreadIndex sampled = sampledThread(model).value_or(ThreadIndex(threads.size()));
    int64_t lastStateEnd = std::numeric_limits<int64_t>::min();
    std::vector<ThreadIndex> order;
    for (ThreadIndex t = 0; t < threads.size(); ++t)
        if (!threads[t].empty() || t == sampled) order.push_back(t);
    std::sort(order.begin(), order.end(), [&](ThreadIndex first, ThreadIndex second) {
        const ThreadInfo &x = model.threads[first], &y = model.threads[second];
        if (x.pid != y.pid) return x.pid < y.pid;
        if ((x.tid == x.pid) != (y.tid == y.pid)) return x.tid == x.pid;
        return x.tid < y.tid;
    });
    for (ThreadIndex t : order) {
        if (cancel && cancel->load()) return lastStateEnd;
        const ThreadInfo& info = model.threads[t];
        Track track;
        track.type = TrackType::Thread;
        track.model = m;
        track.group = in.label + " · " + processLabel(model, info.pid);
        // Kineto names threads "thread 42 (python)": the name alone then, else the tid and the name.
        const std::string tid = std::to_string(info.tid);
        const std::string_view name = model.str(info.name);
        if (name.find(tid) != std::string_view::npos)
            track.title = name;
        else
            track.title = "thread " + tid
                + (!name.empty()               ? " · " + std::string(name)
                        : info.tid == info.pid ? " · main"
                                               : "");
        const int64_t eventsEnd = threads[t].empty()
            ? std::numeric_limits<int64_t>::min()
            : *std::max_element(threads[t].ends.begin(), threads[t].ends.end());
        const Track header = track;
        if (!threads[t].empty()) b.addTrack(std::move(track), threads[t]);
        if (t == sampled) lastStateEnd = addThreadStateTrack(b, model, t, header, eventsEnd);
        threads[t] = Pending(); // free as we go: the biggest inputs have millions of CPU events
    }
    return lastStateEnd;
}

} // namespace

TimelineData buildTimeline(std::span<const TimelineInput> inputs, const std::atomic<bool>* cancel) {
    TimelineData data;
    data.span = { std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min() };
    for (const TimelineInput& in : inputs) {
        data.m_models.push_back(in.model);
        data.m_steps.push_back(in.steps);
        const TraceModel& model = *in.model;
        std::vector<std::vector<uint32_t>> places(kPlacedSources);
        places[size_t(EventTable::Kernel)].assign(model.kernels.size(), TimelineData::kNowhere);
        places[size_t(EventTable::Memcpy)].assign(model.memcpys.size(), TimelineData::kNowhere);
        places[size_t(EventTable::Memset)].assign(model.memsets.size(), TimelineData::kNowhere);
        places[size_t(EventTable::ApiCall)].assign(model.apiCalls.size(), TimelineData::kNowhere);
        places[size_t(EventTable::CpuOp)].assign(model.cpuOps.size(), TimelineData::kNowhere);
        places[size_t(EventTable::Annotation)].assign(model.annotations.size(), TimelineData::kNowhere);
        places[size_t(EventTable::GemmCall)].assign(model.gemmCalls.size(), TimelineData::kNowhere);
        places[size_t(EventTable::ConvCall)].assign(model.convCalls.size(), TimelineData::kNowhere);
        places[size_t(EventTable::MemoryEvent)].assign(model.memoryEvents.size(), TimelineData::kNowhere);
        places[placeIndex(Source::GpuAnnotation)].assign(model.gpuAnnotations.size(), TimelineData::kNowhere);
        data.m_places.push_back(std::move(places));
    }
    Builder builder(data, data.m_places);
    // Steps first (pinned under the ruler), then each input's GPU streams and threads.
    for (uint32_t m = 0; m < inputs.size(); ++m)
        if (inputs[m].steps) addStepsTrack(builder, m, inputs[m], inputs.size());
    for (uint32_t m = 0; m < inputs.size(); ++m) {
        if (cancel && cancel->load()) return data;
        addGpuTracks(builder, m, inputs[m]);
        data.m_lastStateEnds.push_back(addThreadTracks(builder, m, inputs[m], cancel));
    }
    if (data.span.empty()) data.span = { 0, 1 };
    return data;
}

EventId TimelineData::canonical(const EventId& id) const {
    if (id.model >= m_models.size() || id.row < 0) return id;
    const TraceModel& model = *m_models[id.model];
    const size_t row = size_t(id.row);
    if (id.source == Source::Sync && row < model.syncs.size() && model.syncs.apiCall[row] != kNoRow)
        return { id.model, Source::ApiCall, model.syncs.apiCall[row] };
    if (id.source == Source::Collective && row < model.collectives.size()) {
        const RowIndex event = model.collectives.eventRow[row];
        return { id.model, model.collectives.origin[row] == CollectiveOrigin::Kernel ? Source::Kernel : Source::CpuOp,
            event };
    }
    return id;
}

std::optional<TimelineData::Place> TimelineData::place(const EventId& wanted) const {
    const EventId id = canonical(wanted);
    if (id.model >= m_models.size() || id.row < 0) return std::nullopt;
    if (id.source == Source::Step || id.source == Source::IdleGap || id.source == Source::ThreadState) {
        const TrackType type = id.source == Source::ThreadState ? TrackType::ThreadState : TrackType::Steps;
        for (uint32_t t = 0; t < tracks.size(); ++t)
            if (tracks[t].type == type && tracks[t].model == id.model)
                return Place { t, id.source == Source::IdleGap ? 1u : 0u };
        return std::nullopt;
    }
    if (placeIndex(id.source) >= kPlacedSources) return std::nullopt;
    const auto& places = m_places[id.model][placeIndex(id.source)];
    if (size_t(id.row) >= places.size() || places[size_t(id.row)] == kNowhere) return std::nullopt;
    const uint32_t packed = places[size_t(id.row)];
    return Place { packed >> kLaneBits, packed & kMaxLane };
}

std::optional<TimeRange> TimelineData::threadStateSpan(uint32_t model, RowIndex row) const {
    if (model >= m_models.size() || row < 0 || size_t(row) >= m_models[model]->threadStates.size()) return std::nullopt;
    const ThreadStateTable& s = m_models[model]->threadStates;
    const size_t r = size_t(row);
    for (size_t next = r + 1; next < s.size(); ++next)
        if (s.thread[next] == s.thread[r]) return TimeRange { s.timeNs[r], std::max(s.timeNs[next], s.timeNs[r]) };
    const int64_t end = model < m_lastStateEnds.size() ? m_lastStateEnds[model] : s.timeNs[r];
    return TimeRange { s.timeNs[r], std::max(end, s.timeNs[r]) };
}

std::string_view TimelineData::name(uint32_t model, uint32_t nameId) const {
    if (nameId & kTimelineName) {
        const uint32_t i = nameId & ~kTimelineName;
        return i < names.size() ? std::string_view(names[i]) : std::string_view();
    }
    return model < m_models.size() ? m_models[model]->str(nameId) : std::string_view();
}

TimeRange initialRange(const TimelineData& data, size_t count) {
    for (uint32_t m = 0; m < data.modelCount(); ++m) {
        const StepAnalysis* analysis = data.steps(m);
        if (!analysis || analysis->detection.steps.empty()) continue;
        const auto& steps = analysis->detection.steps;
        if (steps.size() <= count) return padded({ steps.front().startNs, steps.back().endNs }, 0.02);
        // From the middle of the run, past the warm-up: of the windows of `count` consecutive steps near
        // the middle, the one whose total is closest to `count` median steps (ties: the most central).
        const int64_t median = analysis->medianStepNs();
        const size_t centre = steps.size() / 2 - std::min(steps.size() / 2, count / 2);
        size_t best = centre;
        int64_t bestError = std::numeric_limits<int64_t>::max();
        for (int offset = 0; offset <= 16; ++offset) {
            const long delta = offset % 2 ? (offset + 1) / 2 : -offset / 2; // 0, +1, -1, +2, -2...
            const long first = long(centre) + delta;
            if (first < 0 || size_t(first) + count > steps.size()) continue;
            const int64_t total = steps[size_t(first) + count - 1].endNs - steps[size_t(first)].startNs;
            const int64_t error = std::llabs(total - median * int64_t(count));
            if (error < bestError) {
                bestError = error;
                best = size_t(first);
            }
        }
        best = std::min(best, steps.size() - count);
        return padded({ steps[best].startNs, steps[best + count - 1].endNs }, 0.02);
    }
    return padded(data.span, 0.01);
}

} // namespace tuneup::gui
