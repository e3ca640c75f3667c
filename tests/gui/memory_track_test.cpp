// The timeline's memory tracks: one per GPU with memory events or the allocator's peaks, after that GPU's streams,
// its events located and described, and drawn as a level (allocated filled, reserved as a line), the allocator's
// peak of each step as a bar across the step. On a real trace recorded with profile_memory (TraceLens BERT-small on
// an H100) and on built ones.

#include "gui_test_support.h"
#include "model/trace_builder.h"
#include "timeline/event_info.h"
#include "timeline/timeline_view.h"

#include <QtTest>

using namespace tuneup;
using namespace tuneup::gui;

namespace {

constexpr int64_t kMB = 1'000'000;

// One kernel on GPU 0's stream 7, from 1 ms to 9 ms.
void addKernelOnGpu0(analysis::TraceBuilder& b) {
    analysis::Kernel k;
    k.startNs = 1'000'000;
    k.endNs = 9'000'000;
    k.device = 0;
    k.stream = 7;
    k.name = b.intern("kernel");
    b.addKernel(k);
}

// GPU 0 runs one kernel from 1 ms to 9 ms; its allocated memory steps 100 -> 400 -> 200 MB (reserved
// 500 MB); GPU 1 has memory events but no kernels; host memory is no track.
analysis::TraceModel builtTrace() {
    using namespace analysis;
    TraceBuilder b(SourceFormat::KinetoJson, "memory.json");
    const ThreadIndex t = b.thread(1, 1);
    addKernelOnGpu0(b);
    auto memory = [&](int64_t time, int32_t device, int64_t allocated) {
        MemoryEvent e;
        e.timeNs = time;
        e.device = device;
        e.allocatedBytes = allocated;
        e.reservedBytes = 500 * kMB;
        e.deltaBytes = 100 * kMB;
        e.thread = t;
        b.addMemoryEvent(e);
    };
    memory(1'000'000, 0, 100 * kMB);
    memory(3'000'000, 0, 400 * kMB);
    memory(5'000'000, 0, 200 * kMB);
    memory(2'000'000, 1, 50 * kMB);
    memory(2'500'000, kHostMemory, 50 * kMB);
    return b.finish();
}

// As a tuneup recording on a GPU holds its memory: the driver's allocations (CUPTI: reserved memory) 200 MB at 1 ms,
// 500 MB at 2 ms, and the allocator's peaks read after each optimizer step (the Python bootstrap): 300 MB allocated
// in the step from 1 to 4 ms, 150 MB in the step from 4 to 8 ms. GPU 1 has the allocator's peaks alone.
analysis::TraceModel recordingWithStepPeaks() {
    using namespace analysis;
    TraceBuilder b(SourceFormat::TuneupDb, "peaks.db");
    const ThreadIndex t = b.thread(1, 1);
    addKernelOnGpu0(b);
    for (const auto& [time, reserved] : { std::pair { 1'000'000, 200 * kMB }, std::pair { 2'000'000, 500 * kMB } }) {
        MemoryEvent e;
        e.timeNs = time;
        e.device = 0;
        e.deltaOf = MemoryTotal::Reserved;
        e.reservedBytes = reserved;
        e.deltaBytes = reserved - (time == 1'000'000 ? 0 : 200 * kMB);
        e.thread = t;
        b.addMemoryEvent(e);
    }
    auto peak = [&](int64_t start, int64_t end, int32_t device, int64_t allocated) {
        MemoryPeak p;
        p.startNs = start;
        p.endNs = end;
        p.device = device;
        p.allocatedBytes = allocated;
        p.reservedBytes = 500 * kMB;
        p.thread = t;
        b.addMemoryPeak(p);
    };
    peak(4'000'000, 8'000'000, 0, 150 * kMB); // out of order: the track sorts them
    peak(1'000'000, 4'000'000, 0, 300 * kMB);
    peak(2'000'000, 6'000'000, 1, 80 * kMB);
    return b.finish();
}

int memoryPixels(const QImage& image, const QRect& area) {
    return guitest::countColor(image, area, kindStyle(EventKind::Memory).rgb, 2);
}

} // namespace

class MemoryTrackTest : public QObject {
    Q_OBJECT
private slots:
    void eachGpuHasAMemoryTrackAfterItsStreams() {
        const analysis::TraceModel model = builtTrace();
        const TimelineInput input { &model, "memory.json", nullptr };
        const TimelineData t = buildTimeline(std::span(&input, 1));
        // GPU 0 stream 7, GPU 0 memory, GPU 1 memory; the thread has no events of its own (memory events are
        // the GPUs').
        QCOMPARE(t.tracks.size(), size_t(3));
        QCOMPARE(t.tracks[0].type, TrackType::Gpu);
        const Track& memory = t.tracks[1];
        QCOMPARE(memory.type, TrackType::Memory);
        QCOMPARE(memory.group, t.tracks[0].group);
        QCOMPARE(memory.title, std::string("memory · allocated peak 400 MB"));
        QCOMPARE(memory.memory.detail, std::string("reserved peak 500 MB"));
        QCOMPARE(memory.lanes.size(), size_t(1));
        const Lane& lane = memory.lanes[0];
        QCOMPARE(lane.size(), size_t(3));
        // Each level holds until the next event; the last until the trace's end (the kernel's).
        QCOMPARE(lane.starts, (std::vector<int64_t> { 1'000'000, 3'000'000, 5'000'000 }));
        QCOMPARE(lane.ends, (std::vector<int64_t> { 3'000'000, 5'000'000, 9'000'000 }));
        QCOMPARE(memory.memory.allocated, (std::vector<int64_t> { 100 * kMB, 400 * kMB, 200 * kMB }));
        QCOMPARE(memory.memory.scaleBytes, 500 * kMB);
        QCOMPARE(t.tracks[2].type, TrackType::Memory);
        QCOMPARE(t.tracks[2].group, std::string("memory.json · GPU 1"));

        // A memory event is located on its track and described.
        const EventId peak { 0, Source::MemoryEvent, lane.rows[1] };
        QVERIFY(t.place(peak));
        QCOMPARE(t.place(peak)->track, 1u);
        const EventInfo info = describeEvent(t, peak);
        QCOMPARE(info.kind, std::string("memory event"));
        QCOMPARE(info.name, std::string("allocation 100 MB"));
        QCOMPARE(info.span, (TimeRange { 3'000'000, 3'000'000 }));
        QVERIFY(std::find(info.fields.begin(), info.fields.end(),
                    std::pair<std::string, std::string> { "allocated after it", "400 MB" })
            != info.fields.end());
        QVERIFY2(std::none_of(info.fields.begin(), info.fields.end(),
                     [](const auto& field) { return field.first.starts_with("the step's peak"); }),
            "no allocator's peaks in this trace");
    }

    void drawnAsALevel() {
        const analysis::TraceModel model = builtTrace();
        const std::string path = guitest::writeKinetoTrace(model, guitest::dataPath("memory_track.json"));
        const auto session = loadSession(guitest::request(path));
        TimelineView view;
        view.resize(1000, 300);
        view.setSession(session);
        view.setVisibleRange({ 1'000'000, 9'000'000 });
        view.show();
        const QImage image = view.grab().toImage();
        guitest::saveScreenshot(image, QStringLiteral("memory_track"));
        const TimelineData& t = session->timeline;
        uint32_t track = 0;
        while (track < t.tracks.size() && t.tracks[track].type != TrackType::Memory)
            ++track;
        QVERIFY(track < t.tracks.size());
        const QRectF row = view.eventRect({ 0, Source::MemoryEvent, t.tracks[track].lanes[0].rows[0] });
        QVERIFY(!row.isNull());
        QCOMPARE(int(row.height()), TimelineView::kMemoryHeight);
        // Columns at 2 ms (100 MB) and 4 ms (400 MB): the fill is four times as tall.
        const TimeMapping m = view.mapping();
        auto column = [&](int64_t ns) {
            const int x = view.trackAreaLeft() + int(m.toX(ns));
            return memoryPixels(image, QRect(x, int(row.top()), 1, int(row.height())));
        };
        const int low = column(2'000'000), high = column(4'000'000);
        QVERIFY2(low > 0, "the 100 MB level is drawn");
        QVERIFY2(high >= 3 * low && high <= 5 * low, qPrintable(QString("%1 vs %2 pixels").arg(high).arg(low)));
    }

    void stepPeaksAreBarsOverTheirSteps() {
        const analysis::TraceModel model = recordingWithStepPeaks();
        const TimelineInput input { &model, "peaks.db", nullptr };
        const TimelineData t = buildTimeline(std::span(&input, 1));
        // GPU 0 stream 7, GPU 0 memory, GPU 1 memory (the allocator's peaks alone: a track without events).
        QCOMPARE(t.tracks.size(), size_t(3));
        const Track& memory = t.tracks[1];
        QCOMPARE(memory.type, TrackType::Memory);
        QCOMPARE(memory.title, std::string("memory · allocated peak 300 MB"));
        QCOMPARE(memory.memory.detail, std::string("fill: reserved 500 MB · bars: steps"));
        QCOMPARE(memory.lanes[0].size(), size_t(2));
        QCOMPARE(memory.memory.windowPeaks.size(), size_t(2));
        QCOMPARE(memory.memory.windowPeaks[0].startNs, int64_t(1'000'000));
        QCOMPARE(memory.memory.windowPeaks[0].allocated, 300 * kMB);
        QCOMPARE(memory.memory.windowPeaks[1].endNs, int64_t(8'000'000));
        QCOMPARE(memory.memory.scaleBytes, 500 * kMB);
        const Track& alone = t.tracks[2];
        QCOMPARE(alone.type, TrackType::Memory);
        QCOMPARE(alone.group, std::string("peaks.db · GPU 1"));
        QCOMPARE(alone.lanes.size(), size_t(1));
        QCOMPARE(alone.lanes[0].size(), size_t(0));
        QCOMPARE(alone.title, std::string("memory · allocated peak 80 MB"));
        QCOMPARE(alone.memory.detail, std::string("reserved 500 MB · bars: steps"));
        // A memory event inside a step says that step's peak (the one at 2 ms: the step from 1 to 4 ms).
        const EventInfo info = describeEvent(t, { 0, Source::MemoryEvent, memory.lanes[0].rows[1] });
        const std::pair<std::string, std::string> stepPeak { "the step's peak, allocated", "300 MB" };
        QVERIFY(std::find(info.fields.begin(), info.fields.end(), stepPeak) != info.fields.end());

        // Drawn from the file: each step's bar at its own height, nothing where no step was read.
        const std::string path = guitest::writeTrace(model, guitest::dataPath("memory_peaks.db"));
        const auto session = loadSession(guitest::request(path));
        TimelineView view;
        view.resize(1000, 300);
        view.setSession(session);
        view.setVisibleRange({ 500'000, 9'000'000 });
        view.show();
        const QImage image = view.grab().toImage();
        guitest::saveScreenshot(image, QStringLiteral("memory_step_peaks"));
        const TimelineData& drawn = session->timeline;
        uint32_t track = 0;
        while (track < drawn.tracks.size() && drawn.tracks[track].type != TrackType::Memory)
            ++track;
        QVERIFY(track < drawn.tracks.size());
        QCOMPARE(drawn.tracks[track].memory.windowPeaks.size(), size_t(2));
        const QRectF row = view.eventRect({ 0, Source::MemoryEvent, drawn.tracks[track].lanes[0].rows[0] });
        QVERIFY(!row.isNull());
        const TimeMapping m = view.mapping();
        // The rows of bar pixels in the column at `ns` (none: -1).
        auto barRow = [&](int64_t ns) {
            const int x = view.trackAreaLeft() + int(m.toX(ns));
            for (int y = int(row.top()); y < int(row.bottom()); ++y)
                if (guitest::countColor(image, QRect(x, y, 1, 1), TimelineView::kMemoryPeakRgb, 2)) return y;
            return -1;
        };
        const int first = barRow(2'500'000), second = barRow(6'000'000);
        QVERIFY2(first >= 0 && second >= 0, "each step's peak is drawn");
        // 300 MB and 150 MB of 500 MB: the first bar stands higher, by about 30% of the graph's height.
        const double expected = 0.3 * (row.height() - 3);
        QVERIFY2(std::abs((second - first) - expected) <= 2.5,
            qPrintable(QString("bars at rows %1 and %2, %3 apart expected").arg(first).arg(second).arg(expected)));
        QCOMPARE(barRow(8'600'000), -1);
    }

    void realTraceRecordedWithProfileMemory() {
        TUNEUP_REQUIRE_SHARED_TRACE(path, "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz");
        const auto session = loadSession(guitest::request(path));
        const TimelineData& t = session->timeline;
        const Track* memory = nullptr;
        for (const Track& track : t.tracks)
            if (track.type == TrackType::Memory) {
                QVERIFY2(!memory, "one GPU, one memory track");
                memory = &track;
            }
        QVERIFY(memory);
        QVERIFY(memory->group.find("GPU 0 (NVIDIA H100 80GB HBM3)") != std::string::npos);
        // Python: 218 CUDA [memory] events; Total Allocated peaks at 101305344, Total Reserved at 121634816.
        QCOMPARE(memory->lanes[0].size(), size_t(218));
        QCOMPARE(
            *std::max_element(memory->memory.allocated.begin(), memory->memory.allocated.end()), int64_t(101305344));
        QCOMPARE(memory->memory.scaleBytes, int64_t(121634816));
        QCOMPARE(memory->title, std::string("memory · allocated peak 101 MB"));
        QCOMPARE(memory->memory.detail, std::string("reserved peak 122 MB"));
    }
};

QTEST_MAIN(MemoryTrackTest)
#include "memory_track_test.moc"
