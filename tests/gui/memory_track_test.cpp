// The timeline's memory tracks: one per GPU with memory events, after that GPU's streams, its events
// located and described, and drawn as a level (allocated filled, reserved as a line). On a real trace
// recorded with profile_memory (TraceLens BERT-small on an H100) and on a built one.

#include "gui_test_support.h"
#include "model/trace_builder.h"
#include "timeline/event_info.h"
#include "timeline/timeline_view.h"

#include <QtTest>

using namespace tuneup;
using namespace tuneup::gui;

namespace {

constexpr int64_t kMB = 1'000'000;

// GPU 0 runs one kernel from 1 ms to 9 ms; its allocated memory steps 100 -> 400 -> 200 MB (reserved
// 500 MB); GPU 1 has memory events but no kernels; host memory is no track.
analysis::TraceModel builtTrace() {
    using namespace analysis;
    TraceBuilder b(SourceFormat::KinetoJson, "memory.json");
    const ThreadIndex t = b.thread(1, 1);
    Kernel k;
    k.startNs = 1'000'000;
    k.endNs = 9'000'000;
    k.device = 0;
    k.stream = 7;
    k.name = b.intern("kernel");
    b.addKernel(k);
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
