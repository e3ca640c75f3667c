#pragma once
// What the timeline shows, built once per loaded session (on the loading thread): tracks per GPU
// stream, per CPU thread and for the steps, each split into lanes (rows) of events that do not overlap,
// sorted by start, as lod.h needs. Events stay rows of the TraceModel's tables (EventId); lanes hold
// only what drawing and searching read. No Qt.

#include "advise/finding.h"
#include "steps/breakdown.h"
#include "timeline/event_kind.h"
#include "timeline/time_mapping.h"

#include <atomic>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace tuneup::gui {

// Where an event comes from: a table of analysis::EventTable, the steps and idle gaps of a
// StepAnalysis (rows: indices into detection.steps and gaps), or a user range on a GPU stream.
enum class Source : uint8_t {
    Kernel = uint8_t(analysis::EventTable::Kernel),
    Memcpy = uint8_t(analysis::EventTable::Memcpy),
    Memset = uint8_t(analysis::EventTable::Memset),
    Sync = uint8_t(analysis::EventTable::Sync),
    ApiCall = uint8_t(analysis::EventTable::ApiCall),
    CpuOp = uint8_t(analysis::EventTable::CpuOp),
    Annotation = uint8_t(analysis::EventTable::Annotation),
    Collective = uint8_t(analysis::EventTable::Collective),
    GemmCall = uint8_t(analysis::EventTable::GemmCall),
    ConvCall = uint8_t(analysis::EventTable::ConvCall),
    MemoryEvent = uint8_t(analysis::EventTable::MemoryEvent),
    Step = 100,
    IdleGap = 101,
    GpuAnnotation = 102, // rows of TraceModel::gpuAnnotations (Kineto gpu_user_annotation)
    ThreadState = 103, // rows of TraceModel::threadStates: each holds until the thread's next sample
};
inline constexpr size_t kEventTables = size_t(analysis::EventTable::MemoryEvent) + 1;
inline Source sourceOf(analysis::EventTable t) {
    return Source(uint8_t(t));
}
// Sources whose rows the timeline can locate (placeIndex < kPlacedSources): the tables, and GPU ranges.
inline constexpr size_t kPlacedSources = kEventTables + 1;
inline size_t placeIndex(Source s) {
    return s == Source::GpuAnnotation ? kEventTables : size_t(s);
}

/** One event of one loaded file. */
struct EventId {
    uint32_t model = 0; // index in the session's models
    Source source = Source::Kernel;
    analysis::RowIndex row = analysis::kNoRow;
    bool valid() const { return row != analysis::kNoRow; }
    bool operator==(const EventId&) const = default;
};

// Names of events that have none in the model (copies, sets, steps, gaps) are kept by the timeline;
// their ids carry this bit.
inline constexpr uint32_t kTimelineName = 0x8000'0000u;

/** A row of a track: events that do not overlap, sorted by start (and so by end). */
struct Lane {
    std::vector<int64_t> starts, ends;
    std::vector<EventKind> kinds;
    std::vector<Source> sources;
    std::vector<analysis::RowIndex> rows;
    std::vector<uint32_t> names; // StringId in the model, or kTimelineName | index in TimelineData::names
    size_t size() const { return starts.size(); }
    void add(int64_t start, int64_t end, EventKind kind, Source source, analysis::RowIndex row, uint32_t name);
};

// Memory: a GPU's memory over time, one event per memory event, drawn as a level, and the allocator's peaks
// per step (Track::memory).
enum class TrackType : uint8_t { Steps, Gpu, Thread, ThreadState, Memory };

// The caching allocator's peak over a window of time (TraceModel::memoryPeaks: one per optimizer step in a tuneup
// recording), -1 where not read: a level reached somewhere in the window, drawn as a bar across it.
struct WindowPeak {
    int64_t startNs = 0, endNs = 0;
    int64_t allocated = -1, reserved = -1;
};

// The levels a memory track draws, parallel to its lane's events: the allocated memory after each event
// and the reserved memory (-1 where unknown), then the allocator's peaks per window, sorted by start; the
// scale is the highest of them all. `detail`: a second line under the title (the reserved peak, or that the
// levels are lower bounds).
struct MemoryLevels {
    std::vector<int64_t> allocated, reserved;
    std::vector<WindowPeak> windowPeaks;
    int64_t scaleBytes = 1;
    std::string detail;
};

struct Track {
    TrackType type = TrackType::Gpu;
    uint32_t model = 0;
    std::string group; // its GPU or process ("run.db · GPU 0 (A100)"), shown as a heading when it changes
    std::string title; // "stream 7", "thread 4242 · pt_main_thread"
    std::vector<Lane> lanes;
    MemoryLevels memory; // TrackType::Memory only
    size_t events() const;
};

/** One loaded file as the timeline sees it. */
struct TimelineInput {
    const analysis::TraceModel* model = nullptr;
    std::string label; // "run.db", "run.pid4243.db (DataLoader worker)"
    const analysis::StepAnalysis* steps = nullptr; // for the files analysed as the job; null for others
};

class TimelineData {
public:
    std::vector<Track> tracks;
    TimeRange span; // of every event drawn
    std::vector<std::string> names; // the names behind kTimelineName ids

    // The track and lane an event is drawn in, when it is drawn. Syncs are drawn as the CUDA call that
    // waited, collectives as their op or kernel (see canonical()).
    struct Place {
        uint32_t track = 0;
        uint32_t lane = 0;
    };
    std::optional<Place> place(const EventId& id) const;
    // The event that stands for `id` on the timeline.
    EventId canonical(const EventId& id) const;

    size_t modelCount() const { return m_models.size(); }
    const analysis::TraceModel& model(uint32_t i) const { return *m_models[i]; }
    const analysis::StepAnalysis* steps(uint32_t i) const { return m_steps[i]; }
    // A sampled thread state's span: from its sample to the thread's next one (the last, to the end
    // of that thread's track).
    std::optional<TimeRange> threadStateSpan(uint32_t model, analysis::RowIndex row) const;
    // The name of an event as drawn and searched.
    std::string_view name(uint32_t model, uint32_t nameId) const;

private:
    friend TimelineData buildTimeline(std::span<const TimelineInput>, const std::atomic<bool>*);
    std::vector<const analysis::TraceModel*> m_models;
    std::vector<const analysis::StepAnalysis*> m_steps;
    std::vector<int64_t> m_lastStateEnds; // per model: where its last sampled thread state ends
    // Per model and placeIndex(source): per row, track << 12 | lane (lanes beyond 4095 share the last), or kNowhere.
    static constexpr uint32_t kNowhere = UINT32_MAX;
    std::vector<std::vector<std::vector<uint32_t>>> m_places;
};

// Builds the tracks of every input: per input, a steps track (when it has steps), its GPU streams with
// each GPU's memory track (when the trace records memory events or the allocator's peaks), then its CPU threads by
// process. `cancel` (may be null) is polled between tracks; when it is set the result is incomplete and must be
// dropped.
TimelineData buildTimeline(std::span<const TimelineInput> inputs, const std::atomic<bool>* cancel = nullptr);

// The step span to start with: a few typical steps from the middle of the run (past the warm-up), else
// the whole trace.
TimeRange initialRange(const TimelineData& data, size_t steps = 3);

} // namespace tuneup::gui
