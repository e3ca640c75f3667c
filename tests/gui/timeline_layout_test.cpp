// The timeline's layout as pure functions: time <-> x, zoom and pan, the visible range clamp, the
// ruler's ticks and units, folding what falls under a pixel, and rows by nesting depth.

#include "timeline/lod.h"
#include "timeline/row_assignment.h"
#include "timeline/time_mapping.h"

#include <QtTest>
#include <algorithm>
#include <random>

using namespace tuneup::gui;

namespace {

// Lanes as lod.h wants them: sorted, not overlapping.
struct TestLane {
    std::vector<int64_t> starts, ends;
    void add(int64_t s, int64_t e) {
        starts.push_back(s);
        ends.push_back(e);
    }
};

// Every visible event is in exactly one box, boxes are in order and do not overlap.
void checkCoverage(const TestLane& lane, TimeRange visible, const std::vector<LodBox>& boxes) {
    const IndexRange in = eventsIn(lane.starts, lane.ends, visible);
    size_t next = in.first;
    int64_t previousEnd = INT64_MIN;
    for (const LodBox& b : boxes) {
        QCOMPARE(size_t(b.first), next);
        QVERIFY(b.count >= 1);
        QVERIFY(b.representative >= b.first && b.representative < b.first + b.count);
        QCOMPARE(b.startNs, lane.starts[b.first]);
        QCOMPARE(b.endNs, lane.ends[b.first + b.count - 1]);
        QVERIFY(b.startNs >= previousEnd);
        previousEnd = b.endNs;
        next += b.count;
    }
    QVERIFY(next >= in.last); // the last box may run past the visible end
}

} // namespace

class TimelineLayoutTest : public QObject {
    Q_OBJECT
private slots:
    void timeToXAndBack() {
        const TimeMapping m({ 1'000, 2'000 }, 100); // 10 ns per pixel
        QCOMPARE(m.nsPerPx(), 10.0);
        QCOMPARE(m.toX(1'000), 0.0);
        QCOMPARE(m.toX(1'500), 50.0);
        QCOMPARE(m.toX(2'000), 100.0);
        QCOMPARE(m.toX(900), -10.0);
        QCOMPARE(m.toTime(0), int64_t(1'000));
        QCOMPARE(m.toTime(25), int64_t(1'250));
        QCOMPARE(m.toTime(m.toX(1'777)), int64_t(1'777));
    }

    void absoluteKinetoTimesKeepNanoseconds() {
        // Kineto times are epoch nanoseconds (~1.7e18): offsets are exact, the absolute value is not in a double.
        const int64_t base = 1'700'000'000'123'456'789;
        const TimeMapping m({ base, base + 1'000 }, 1'000);
        QCOMPARE(m.toX(base + 1), 1.0);
        QCOMPARE(m.toTime(999), base + 999);
    }

    void emptyRangeStillMaps() {
        const TimeMapping m({ 5, 5 }, 0);
        QVERIFY(m.nsPerPx() > 0);
        QCOMPARE(m.toX(5), 0.0);
    }

    void zoomKeepsTheTimeUnderTheCursor() {
        const TimeMapping m({ 0, 1'000'000 }, 1'000);
        const TimeRange in = zoomAround(m, 250, 0.5);
        QCOMPARE(in.duration(), int64_t(500'000));
        QCOMPARE(TimeMapping(in, 1'000).toTime(250), int64_t(250'000));
        const TimeRange out = zoomAround(m, 1'000, 2.0);
        QCOMPARE(out.endNs, int64_t(1'000'000));
        QCOMPARE(out.startNs, int64_t(-1'000'000));
        // Zooming in to nothing keeps a nanosecond.
        QVERIFY(!zoomAround(m, 10, 0.0).empty());
    }

    void panMovesByPixels() {
        const TimeMapping m({ 0, 1'000 }, 100);
        QCOMPARE(panByPixels(m, 10), (TimeRange { 100, 1'100 }));
        QCOMPARE(panByPixels(m, -5), (TimeRange { -50, 950 }));
    }

    void clampKeepsTheViewSensible_data() {
        QTest::addColumn<qint64>("start");
        QTest::addColumn<qint64>("end");
        QTest::addColumn<qint64>("wantStart");
        QTest::addColumn<qint64>("wantEnd");
        // The trace spans [1000, 2000): margin 50 each side.
        QTest::newRow("inside") << 1'200LL << 1'400LL << 1'200LL << 1'400LL;
        QTest::newRow("too long: the trace with margins") << 0LL << 10'000LL << 950LL << 2'050LL;
        QTest::newRow("before: moved, not shrunk") << 500LL << 700LL << 950LL << 1'150LL;
        QTest::newRow("after: moved, not shrunk") << 1'990LL << 2'190LL << 1'850LL << 2'050LL;
        QTest::newRow("too short: grown around its centre") << 1'500LL << 1'502LL << 1'451LL << 1'551LL;
    }
    void clampKeepsTheViewSensible() {
        QFETCH(qint64, start);
        QFETCH(qint64, end);
        QFETCH(qint64, wantStart);
        QFETCH(qint64, wantEnd);
        const TimeRange got = clampVisible({ start, end }, { 1'000, 2'000 }, 100);
        QCOMPARE(got.startNs, wantStart);
        QCOMPARE(got.endNs, wantEnd);
    }

    void clampEmptyTrace() {
        const TimeRange got = clampVisible({ 0, 10 }, { 5, 5 }, 100);
        QVERIFY(!got.empty());
    }

    void tickStepIsOneTwoOrFive_data() {
        QTest::addColumn<double>("nsPerPx");
        QTest::addColumn<qint64>("step");
        QTest::newRow("1 ns/px, 80 px") << 1.0 << 100LL;
        QTest::newRow("0.01 ns/px") << 0.01 << 1LL;
        QTest::newRow("12.5 ns/px") << 12.5 << 1'000LL;
        QTest::newRow("30 ns/px") << 30.0 << 5'000LL;
        QTest::newRow("1 ms/px") << 1e6 << 100'000'000LL;
        QTest::newRow("20 ms/px") << 2e7 << 2'000'000'000LL;
    }
    void tickStepIsOneTwoOrFive() {
        QFETCH(double, nsPerPx);
        QFETCH(qint64, step);
        QCOMPARE(tickStepNs(nsPerPx, 80), step);
    }

    void ticksAreAlignedOnTheOrigin() {
        QCOMPARE(tickTimes({ 1'050, 1'400 }, 100, 1'000), (std::vector<int64_t> { 1'100, 1'200, 1'300 }));
        QCOMPARE(tickTimes({ 1'000, 1'201 }, 100, 1'000), (std::vector<int64_t> { 1'000, 1'100, 1'200 }));
        // Before the origin (the view's margin): negative offsets, still on the grid.
        QCOMPARE(tickTimes({ 850, 1'050 }, 100, 1'000), (std::vector<int64_t> { 900, 1'000 }));
        QVERIFY(tickTimes({ 0, 100 }, 0, 0).empty());
    }

    void tickLabelsHaveUnits_data() {
        QTest::addColumn<qint64>("offset");
        QTest::addColumn<qint64>("step");
        QTest::addColumn<QString>("label");
        QTest::newRow("ns") << 40LL << 10LL << "40 ns";
        QTest::newRow("µs") << 250'000LL << 50'000LL << "250 µs";
        QTest::newRow("µs with decimals") << 1'500LL << 500LL << "1.5 µs";
        QTest::newRow("ms") << 1'500'000LL << 500'000LL << "1.5 ms";
        QTest::newRow("s") << 2'000'000'000LL << 1'000'000'000LL << "2 s";
        QTest::newRow("s, zoomed far in") << 1'200'000'500LL << 500LL << "1.2000005 s";
        QTest::newRow("zero") << 0LL << 1'000'000LL << "0 ms";
        QTest::newRow("negative") << -2'000'000LL << 1'000'000LL << "-2 ms";
    }
    void tickLabelsHaveUnits() {
        QFETCH(qint64, offset);
        QFETCH(qint64, step);
        QFETCH(QString, label);
        QCOMPARE(QString::fromStdString(formatTickLabel(offset, step)), label);
    }

    void longEventsAreTheirOwnBoxes() {
        TestLane lane;
        lane.add(0, 100);
        lane.add(100, 250);
        lane.add(300, 400);
        std::vector<LodBox> boxes;
        mergeUnderPixel(lane.starts, lane.ends, { 0, 1'000 }, 10, boxes);
        QCOMPARE(boxes.size(), size_t(3));
        for (size_t i = 0; i < 3; ++i) {
            QCOMPARE(boxes[i].count, 1u);
            QCOMPARE(size_t(boxes[i].first), i);
        }
    }

    void shortEventsUnderAPixelAreFolded() {
        // 100 events of 2 ns every 5 ns, at 10 ns per pixel: one box; then a long one of its own.
        TestLane lane;
        for (int i = 0; i < 100; ++i)
            lane.add(i * 5, i * 5 + 2);
        lane.add(600, 900);
        std::vector<LodBox> boxes;
        mergeUnderPixel(lane.starts, lane.ends, { 0, 1'000 }, 10, boxes);
        QCOMPARE(boxes.size(), size_t(2));
        QCOMPARE(boxes[0].count, 100u);
        QCOMPARE(boxes[0].startNs, int64_t(0));
        QCOMPARE(boxes[0].endNs, int64_t(497));
        QCOMPARE(boxes[1].count, 1u);
        QCOMPARE(boxes[1].first, 100u);
        checkCoverage(lane, { 0, 1'000 }, boxes);
    }

    void gapsWiderThanAPixelSplitRuns() {
        // Two runs of short events 50 ns apart: at 10 ns per pixel they stay two boxes...
        TestLane lane;
        for (int i = 0; i < 10; ++i)
            lane.add(i * 3, i * 3 + 1);
        for (int i = 0; i < 10; ++i)
            lane.add(80 + i * 3, 80 + i * 3 + 1);
        std::vector<LodBox> boxes;
        mergeUnderPixel(lane.starts, lane.ends, { 0, 200 }, 10, boxes);
        QCOMPARE(boxes.size(), size_t(2));
        QCOMPARE(boxes[0].count, 10u);
        QCOMPARE(boxes[1].count, 10u);
        // ...and at 100 ns per pixel they are one.
        mergeUnderPixel(lane.starts, lane.ends, { 0, 200 }, 100, boxes);
        QCOMPARE(boxes.size(), size_t(1));
        QCOMPARE(boxes[0].count, 20u);
    }

    void aLongEventEndsARun() {
        // Short events, then a long one starting within a pixel of them: the run stops before it.
        TestLane lane;
        lane.add(0, 2);
        lane.add(3, 5);
        lane.add(6, 500);
        std::vector<LodBox> boxes;
        mergeUnderPixel(lane.starts, lane.ends, { 0, 1'000 }, 10, boxes);
        QCOMPARE(boxes.size(), size_t(2));
        QCOMPARE(boxes[0].count, 2u);
        QCOMPARE(boxes[0].endNs, int64_t(5));
        QCOMPARE(boxes[1].first, 2u);
    }

    void onlyTheVisiblePartIsVisited() {
        TestLane lane;
        for (int i = 0; i < 1'000; ++i)
            lane.add(i * 100, i * 100 + 50);
        std::vector<LodBox> boxes;
        mergeUnderPixel(lane.starts, lane.ends, { 10'020, 10'400 }, 1, boxes);
        // Event 100 [10000, 10050) overlaps the start; 104 [10400, ...) starts at the end: not visible.
        QCOMPARE(boxes.size(), size_t(4));
        QCOMPARE(boxes.front().first, 100u);
        QCOMPARE(boxes.back().first, 103u);
        mergeUnderPixel(lane.starts, lane.ends, { 200'000, 300'000 }, 1, boxes);
        QVERIFY(boxes.empty());
    }

    void representativeIsTheLongestSampled() {
        TestLane lane;
        lane.add(0, 1);
        lane.add(2, 3);
        lane.add(4, 9); // 5 ns, still under the 10 ns pixel
        lane.add(10, 11);
        std::vector<LodBox> boxes;
        mergeUnderPixel(lane.starts, lane.ends, { 0, 100 }, 10, boxes);
        QCOMPARE(boxes.size(), size_t(1));
        QCOMPARE(boxes[0].count, 4u);
        QVERIFY(lane.ends[boxes[0].representative] - lane.starts[boxes[0].representative] >= 1);
    }

    void aMillionEventsGiveAtMostAFewBoxesPerPixel() {
        // A million kernels of random lengths and gaps over 10 s; at 1500 px every zoom level yields
        // boxes on the order of the pixels, covering every visible event.
        std::mt19937_64 random(7);
        TestLane lane;
        int64_t t = 0;
        for (int i = 0; i < 1'000'000; ++i) {
            t += int64_t(random() % 8'000);
            const int64_t d = random() % 50 == 0 ? int64_t(random() % 2'000'000) : int64_t(1 + random() % 20'000);
            lane.add(t, t + d);
            t += d;
        }
        std::vector<LodBox> boxes;
        for (const TimeRange visible : { TimeRange { 0, t }, TimeRange { t / 3, t / 3 + t / 100 },
                 TimeRange { t / 2, t / 2 + 2'000'000 }, TimeRange { t / 2, t / 2 + 20'000 } }) {
            const TimeMapping m(visible, 1'500);
            mergeUnderPixel(lane.starts, lane.ends, visible, int64_t(m.nsPerPx()) + 1, boxes);
            QVERIFY2(boxes.size() <= 3'000, qPrintable(QString::number(boxes.size())));
            checkCoverage(lane, visible, boxes);
        }
    }

    void rowsFollowNesting() {
        // step [0,100) > op [10,50) > call [20,30); op [60,90) > call [60,70); a mark at 95.
        const std::vector<int64_t> starts { 0, 10, 20, 60, 60, 95 };
        const std::vector<int64_t> ends { 100, 50, 30, 90, 70, 95 };
        QCOMPARE(assignRows(starts, ends), (std::vector<uint16_t> { 0, 1, 2, 1, 2, 1 }));
    }

    void touchingEventsShareARow() {
        const std::vector<int64_t> starts { 0, 10, 20 };
        const std::vector<int64_t> ends { 10, 20, 30 };
        QCOMPARE(assignRows(starts, ends), (std::vector<uint16_t> { 0, 0, 0 }));
    }

    void crossingRangesNeverOverlapInARow() {
        // A range that outlives its parent: [0,10) then [5,15); [12,20) may not go to row 1.
        const std::vector<int64_t> starts { 0, 5, 12 };
        const std::vector<int64_t> ends { 10, 15, 20 };
        const auto rows = assignRows(starts, ends);
        QCOMPARE(rows[0], uint16_t(0));
        QCOMPARE(rows[1], uint16_t(1));
        QVERIFY(rows[2] != rows[1]);
    }

    void randomIntervalsNeverOverlapInARow() {
        std::mt19937 random(3);
        std::vector<int64_t> s, e;
        for (int i = 0; i < 20'000; ++i) {
            const int64_t start = random() % 1'000'000;
            s.push_back(start);
            e.push_back(start + int64_t(random() % 5'000));
        }
        const std::vector<uint8_t> rank(s.size(), 0);
        const auto order = nestingOrder(s, e, rank);
        std::vector<int64_t> starts, ends;
        for (uint32_t i : order) {
            starts.push_back(s[i]);
            ends.push_back(e[i]);
        }
        const auto rows = assignRows(starts, ends);
        std::vector<int64_t> lastEnd(1 + *std::max_element(rows.begin(), rows.end()), INT64_MIN);
        for (size_t i = 0; i < rows.size(); ++i) {
            QVERIFY(starts[i] >= lastEnd[rows[i]]);
            lastEnd[rows[i]] = ends[i];
        }
    }

    void nestingOrderPutsParentsFirst() {
        // Same start: longer first; same span: lower rank (the outer kind) first.
        const std::vector<int64_t> starts { 10, 10, 0, 10 };
        const std::vector<int64_t> ends { 20, 50, 100, 20 };
        const std::vector<uint8_t> rank { 3, 1, 0, 1 };
        QCOMPARE(nestingOrder(starts, ends, rank), (std::vector<uint32_t> { 2, 1, 3, 0 }));
    }
};

QTEST_GUILESS_MAIN(TimelineLayoutTest)
#include "timeline_layout_test.moc"
