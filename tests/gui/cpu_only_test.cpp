// A run without GPU activity (a CPU-only recording, a CPU-only Kineto trace) is not called "GPU idle"
// anywhere the GUI shows its steps: the breakdown chart shows the host's time under "CPU only", and so
// do the overview page, the steps track (no idle-gap lane) and a step's details. A GPU run keeps its
// idle parts.

#include "app/session.h"
#include "gui_test_support.h"
#include "model/trace_builder.h"
#include "report/report_helpers.h"
#include "timeline/event_info.h"
#include "views/breakdown_chart.h"
#include "views/finding_page.h"

#include <QBarSet>
#include <QChart>
#include <QStackedBarSeries>
#include <QtTest>

using namespace tuneup;
using namespace tuneup::gui;

namespace {

const QString kCpuOnly = QStringLiteral("CPU only (no GPU activity recorded)");

// A tuneup recording of a CPU-only training loop, as this machine records the samples: 8 steps of
// 20 ms on the main thread, each waiting 5 ms for its batch, sampled running or reading.
analysis::TraceModel cpuOnlyRun() {
    using namespace analysis;
    TraceBuilder b(SourceFormat::TuneupDb, "cpu-only.db");
    b.info().metadata.emplace_back("role", "main");
    b.info().metadata.emplace_back("pid", "100");
    b.setProcessName(100, "python3");
    const ThreadIndex thread = b.thread(100, 100);
    constexpr int64_t kStep = 20'000'000, kWait = 5'000'000;
    for (int s = 0; s < 8; ++s) {
        const int64_t t0 = 1'000'000'000 + s * kStep;
        Annotation a;
        a.thread = thread;
        a.startNs = t0;
        a.endNs = t0 + kStep;
        a.name = b.intern("ProfilerStep#" + std::to_string(s));
        b.addAnnotation(a);
        a.startNs = t0 + 10'000;
        a.endNs = a.startNs + kWait;
        a.name = b.intern("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
        b.addAnnotation(a);
        b.addThreadState({ .timeNs = t0, .thread = thread, .state = 'R', .syscall = -1 });
        b.addThreadState({ .timeNs = t0 + 10'000, .thread = thread, .state = 'S', .syscall = 0 });
        b.addThreadState({ .timeNs = t0 + 10'000 + kWait, .thread = thread, .state = 'R', .syscall = -1 });
    }
    return b.finish();
}

QStringList barLabels(const BreakdownChart& chart) {
    QStringList labels;
    for (QAbstractSeries* s : chart.chart()->series())
        if (auto* bars = qobject_cast<QStackedBarSeries*>(s))
            for (QBarSet* set : bars->barSets())
                labels << set->label();
    return labels;
}

// Every step of every steps track: its lanes, and what its details say.
struct StepsShown {
    int lanes = 0;
    QStringList details;
};
StepsShown stepsShown(const Session& session) {
    StepsShown shown;
    for (const Track& t : session.timeline.tracks) {
        if (t.type != TrackType::Steps) continue;
        shown.lanes = std::max(shown.lanes, int(t.lanes.size()));
        for (const Lane& lane : t.lanes)
            for (size_t i = 0; i < lane.size(); ++i) {
                const EventInfo info = describeEvent(session.timeline, { t.model, lane.sources[i], lane.rows[i] });
                shown.details << QString::fromStdString(info.kind + " " + info.name);
                for (const auto& [label, value] : info.fields)
                    shown.details << QString::fromStdString(label + ": " + value);
            }
    }
    return shown;
}

// The chart, the overview and the timeline of a session without GPU activity say "CPU only", never idle.
void checkCpuOnly(const std::shared_ptr<Session>& session, const QString& screenshot) {
    QVERIFY(session->steps());
    QVERIFY(!session->steps()->gpuActivity());
    BreakdownChart chart;
    chart.resize(900, 300);
    chart.setSession(session);
    const QStringList labels = barLabels(chart);
    QCOMPARE(labels, QStringList({ QStringLiteral("CPU: waiting for data"), QStringLiteral("CPU: other work") }));
    QVERIFY2(chart.chart()->title().contains(kCpuOnly), qPrintable(chart.chart()->title()));
    chart.show();
    QCoreApplication::processEvents();
    const QImage shot = chart.grab().toImage();
    guitest::saveScreenshot(shot, screenshot);
    // The host's time is drawn in its colour; no bar is the grey of launch/Python idle.
    QVERIFY(guitest::countColor(shot, shot.rect(), 0x76b7b2, 2) > 100);
    QCOMPARE(guitest::countColor(shot, shot.rect(), 0xbab0ac, 2), 0);

    // The overview's steps and breakdown (the rules listed under it, gpu-idle among them, may say idle).
    const QString overview = overviewMarkdown(*session).section(QStringLiteral("### "), 0, 0);
    QVERIFY2(overview.contains(kCpuOnly), qPrintable(overview));
    QVERIFY2(!overview.contains(QStringLiteral("idle"), Qt::CaseInsensitive), qPrintable(overview));

    const StepsShown steps = stepsShown(*session);
    QCOMPARE(steps.lanes, 1); // the steps, no lane of idle gaps
    QVERIFY(!steps.details.isEmpty());
    for (const QString& line : steps.details)
        QVERIFY2(!line.contains(QStringLiteral("idle"), Qt::CaseInsensitive), qPrintable(line));
    QVERIFY(steps.details.contains(QStringLiteral("CPU only: no GPU activity recorded")));
}

} // namespace

class CpuOnlyTest : public QObject {
    Q_OBJECT
private slots:
    void aCpuOnlyRecordingIsNotGpuIdle() {
        const auto session
            = loadSession(guitest::request(guitest::writeTrace(cpuOnlyRun(), guitest::dataPath("cpu_only.db"))));
        checkCpuOnly(session, QStringLiteral("breakdown-cpu-only"));
        const StepsShown steps = stepsShown(*session);
        QVERIFY(steps.details.contains(QStringLiteral("waiting for data: 5 ms")));
        QVERIFY(steps.details.contains(QStringLiteral("other work: 15 ms")));
    }

    void aCpuOnlyKinetoTraceIsNotGpuIdle() {
        TUNEUP_REQUIRE_SHARED_TRACE(trace, "hta/tests/data/rank_non_gpu/rank_non_gpu.json.gz");
        checkCpuOnly(loadSession(guitest::request(trace)), QStringLiteral("breakdown-cpu-only-kineto"));
    }

    void aGpuRunKeepsItsIdleParts() {
        const auto session = loadSession(guitest::request(
            guitest::writeTrace(guitest::syntheticRun(6, 10), guitest::dataPath("cpu_only_gpu_run.db"))));
        QVERIFY(session->steps()->gpuActivity());
        BreakdownChart chart;
        chart.setSession(session);
        QVERIFY(barLabels(chart).contains(QStringLiteral("Idle: waiting for data")));
        QVERIFY(!chart.chart()->title().contains(kCpuOnly));
        QCOMPARE(stepsShown(*session).lanes, 2);
        QVERIFY(!overviewMarkdown(*session).contains(kCpuOnly));
    }
};

QTEST_MAIN(CpuOnlyTest)
#include "cpu_only_test.moc"
