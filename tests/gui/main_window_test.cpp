// End to end, offscreen: the window opens a recorded run and real traces in the background, a chosen
// finding selects and zooms to its evidence, the timeline answers wheel, drag and keys, search finds
// events, bad files get an error dialog, loading can be cancelled, two runs compare, settings are
// kept. Screenshots of the main views are saved and checked for what they must show.

#include "app/main_window.h"
#include "app/recent_files.h"
#include "app/rule_docs.h"
#include "gui_test_support.h"
#include "models/compare_kernel_model.h"
#include "models/findings_model.h"
#include "timeline/event_info.h"
#include "timeline/evidence_focus.h"
#include "timeline/timeline_view.h"
#include "views/breakdown_chart.h"
#include "views/compare_dialog.h"
#include "views/details_pane.h"
#include "views/findings_panel.h"
#include "views/kernel_view.h"
#include "views/legend.h"

#include <QChart>
#include <QCheckBox>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QSettings>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTextBrowser>
#include <QToolTip>
#include <QtTest>

using namespace tuneup;
using namespace tuneup::gui;

namespace {

const char* kResnetDdp
    = "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker1_span1.pt.trace.json.gz";
const char* kAlexnet = "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz";

int rowOfRule(const MainWindow& w, const std::string& rule) {
    const FindingsModel* m = w.findings()->model();
    for (int row = 0; row < m->rowCount(); ++row)
        if (m->finding(row)->ruleId == rule) return row;
    return -1;
}

bool open(MainWindow& w, const QStringList& files) {
    QSignalSpy loaded(&w, &MainWindow::sessionLoaded);
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openFiles(files);
    for (int i = 0; i < 1200 && loaded.isEmpty() && failed.isEmpty(); ++i)
        loaded.wait(100);
    QCoreApplication::processEvents();
    return !loaded.isEmpty();
}

std::string eventName(const MainWindow& w, const EventId& id) {
    return describeEvent(w.session()->timeline, id).name;
}

// The colours of a kind of event in a grab of the timeline's track area.
int kindPixels(const QImage& grab, const TimelineView& t, EventKind kind) {
    return guitest::countColor(grab, t.trackArea(), kindStyle(kind).rgb, 2);
}

} // namespace

class MainWindowTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        guitest::isolateSettings();
        m_runA = guitest::writeTrace(guitest::syntheticRun(12, 40), guitest::dataPath("window_a.db"));
        // Run B: the fixes applied (DataLoader workers, fewer fills): 15 ms steps instead of 20.
        m_runB = guitest::writeTrace(guitest::syntheticRun(12, 4, 0), guitest::dataPath("window_b.db"));
    }

    void opensARecordedRunFittedToTypicalSteps() {
        MainWindow w;
        w.resize(1400, 860);
        w.show();
        QVERIFY(open(w, { QString::fromStdString(m_runA) }));
        QVERIFY(w.session());
        QCOMPARE(w.windowTitle(), QStringLiteral("window_a.db — tuneup"));
        QCOMPARE(w.timeline()->visibleRange(), initialRange(w.session()->timeline));
        QVERIFY(w.findings()->model()->rowCount() >= 2);
        QCOMPARE(w.findings()->chosenRow(), -1);
        QVERIFY(w.findings()->page()->toPlainText().contains(QStringLiteral("12 steps")));

        // What the timeline must show: compute and GEMM kernels, copies, ranges, in their colours.
        const QImage grab = w.timeline()->grab().toImage();
        QVERIFY(kindPixels(grab, *w.timeline(), EventKind::KernelGemm) > 500);
        QVERIFY(kindPixels(grab, *w.timeline(), EventKind::Range) > 500);
        QVERIFY(kindPixels(grab, *w.timeline(), EventKind::Memcpy) > 50);
        QVERIFY(kindPixels(grab, *w.timeline(), EventKind::DataWait) > 50);
        QVERIFY(kindPixels(grab, *w.timeline(), EventKind::IdleData) > 0);
    }

    void choosingAFindingZoomsToItsEvidence() {
        MainWindow w;
        w.resize(1400, 860);
        w.show();
        QVERIFY(open(w, { QString::fromStdString(m_runA) }));
        const int row = rowOfRule(w, "zero-grad-fill");
        QVERIFY(row >= 0);
        w.chooseFinding(row);
        const analysis::Finding* f = w.findings()->chosenFinding();
        QVERIFY(f && f->ruleId == "zero-grad-fill");

        // The first zero_grad range and its 40 fills fill the view; the first fill is selected.
        const TimeRange visible = w.timeline()->visibleRange();
        const auto& span = f->evidence.spans.front();
        QVERIFY(visible.startNs <= span.startNs && visible.endNs >= span.endNs);
        QVERIFY(visible.duration() < 2 * (span.endNs - span.startNs));
        const EventId selected = w.timeline()->selectedEvent();
        QCOMPARE(selected.source, Source::Kernel);
        QVERIFY(QString::fromStdString(eventName(w, selected)).contains(QStringLiteral("FillFunctor")));
        QCOMPARE(w.timeline()->evidenceEvents().size(), f->evidence.events.size());
        QVERIFY(w.details()->toPlainText().contains(QStringLiteral("FillFunctor")));
        QVERIFY(w.details()->toPlainText().contains(QStringLiteral("cudaLaunchKernel")));
        // The page shows the fix in both languages and the rule's documentation.
        const QString page = w.findings()->page()->toPlainText();
        QVERIFY(page.contains(QStringLiteral("set_to_none")));
        QVERIFY(page.contains(QStringLiteral("Python")));
        QVERIFY(page.contains(QStringLiteral("C++")));
        // The rule's documentation, embedded from rules/zero-grad-fill.md.
        QVERIFY(!builtinRuleDoc(QStringLiteral("zero-grad-fill")).isEmpty());
        QVERIFY2(
            page.contains(QStringLiteral("instead of setting the gradients to None")), qPrintable(page.right(400)));
        const QRectF rect = w.timeline()->eventRect(selected);
        QVERIFY(w.timeline()->trackArea().intersects(rect.toAlignedRect()));

        // Choosing nothing clears the evidence.
        w.chooseFinding(-1);
        QVERIFY(w.timeline()->evidenceEvents().empty());
    }

    void realTraceZeroGradFillJourney() {
        TUNEUP_REQUIRE_SHARED_TRACE(path, kResnetDdp);
        MainWindow w;
        w.resize(1400, 860);
        w.show();
        QVERIFY(open(w, { QString::fromStdString(path) }));
        const int row = rowOfRule(w, "zero-grad-fill");
        QVERIFY(row >= 0);
        w.chooseFinding(row);
        const analysis::Finding* f = w.findings()->chosenFinding();
        QCOMPARE(f->evidence.spans.size(), size_t(4));
        // One optimizer.zero_grad range in view with its fill kernels highlighted (50 kept as evidence).
        const TimeRange visible = w.timeline()->visibleRange();
        const auto& zeroGrad = f->evidence.spans.front();
        QVERIFY(visible.startNs <= zeroGrad.startNs && visible.endNs >= zeroGrad.endNs);
        QVERIFY(visible.endNs < f->evidence.spans[1].startNs); // the next call is not in view
        const EventId selected = w.timeline()->selectedEvent();
        QCOMPARE(selected.source, Source::Kernel);
        QVERIFY(QString::fromStdString(eventName(w, selected)).contains(QStringLiteral("FillFunctor")));
        QVERIFY(visible.contains(*eventSpan(w.session()->timeline, selected)));
        QCOMPARE(w.timeline()->evidenceEvents().size(), size_t(50));
        QVERIFY(w.timeline()->rect().intersects(w.timeline()->eventRect(selected).toAlignedRect()));
        QCoreApplication::processEvents();

        // The screenshot for the README, checked: kernels in their colours, the evidence framed, the
        // chosen finding highlighted in the list.
        const QImage window = w.grab().toImage();
        guitest::saveScreenshot(window, QStringLiteral("main-window"));
        const QImage timeline = w.timeline()->grab().toImage();
        QVERIFY(kindPixels(timeline, *w.timeline(), EventKind::KernelCompute) > 200);
        QVERIFY(guitest::countColor(timeline, w.timeline()->trackArea(), qRgb(0xe6, 0x00, 0x7e), 10) > 100);
        QTableView* table = w.findings()->table();
        const QImage list = table->grab().toImage();
        QRect selectedRow = table->visualRect(table->model()->index(row, 0));
        selectedRow.setRight(table->viewport()->width());
        selectedRow.translate(table->viewport()->pos());
        const QPalette pal = table->palette();
        const int highlighted
            = guitest::countColor(list, selectedRow, pal.color(QPalette::Active, QPalette::Highlight).rgb(), 8)
            + guitest::countColor(list, selectedRow, pal.color(QPalette::Inactive, QPalette::Highlight).rgb(), 8);
        QVERIFY2(highlighted > selectedRow.width() * 4, qPrintable(QString::number(highlighted)));
        guitest::saveScreenshot(timeline, QStringLiteral("timeline-evidence"));
    }

    void realTraceAlexnet() {
        TUNEUP_REQUIRE_SHARED_TRACE(path, kAlexnet);
        MainWindow w;
        w.resize(1400, 860);
        w.show();
        QVERIFY(open(w, { QString::fromStdString(path) }));
        QVERIFY(w.session()->timeline.tracks.size() >= 3);
        const TimeRange start = w.timeline()->visibleRange();
        QVERIFY(!start.empty());
        // Every finding with evidence takes the view to it.
        for (int row = 0; row < w.findings()->model()->rowCount(); ++row) {
            w.chooseFinding(row);
            const analysis::Finding* f = w.findings()->chosenFinding();
            const auto focus = evidenceFocus(
                w.session()->timeline, 0, f->evidence, w.session()->steps() ? w.session()->steps()->medianStepNs() : 0);
            if (!focus) continue;
            QVERIFY2(w.timeline()->visibleRange().contains(focus->range)
                    || w.timeline()->visibleRange().duration() >= w.session()->timeline.span.duration(),
                f->ruleId.c_str());
            if (focus->select.valid())
                QCOMPARE(w.timeline()->selectedEvent(), w.session()->timeline.canonical(focus->select));
        }
        // No steps in this trace: the chart says so and shows the whole window as its one span.
        QCOMPARE(w.breakdown()->shownSteps().size(), size_t(1));
        QVERIFY2(
            w.breakdown()->chart()->title().startsWith(QStringLiteral("No training steps found: the whole window (")),
            qPrintable(w.breakdown()->chart()->title()));
    }

    void stepBreakdownChart() {
        MainWindow w;
        w.resize(1400, 860);
        w.show();
        QVERIFY(open(w, { QString::fromStdString(m_runA) }));
        QCOMPARE(w.breakdown()->shownSteps().size(), size_t(12));
        w.bottomTabs()->setCurrentWidget(w.breakdown());
        w.breakdown()->resize(1000, 300);
        QCoreApplication::processEvents();
        const QImage chart = w.breakdown()->grab().toImage();
        guitest::saveScreenshot(chart, QStringLiteral("step-breakdown"));
        // Bars of GPU compute, copies and idle time waiting for data, in the reports' colours.
        QVERIFY(guitest::countColor(chart, chart.rect(), qRgb(0x4e, 0x79, 0xa7), 4) > 500);
        QVERIFY(guitest::countColor(chart, chart.rect(), qRgb(0xf2, 0x8e, 0x2b), 4) > 50);
        QVERIFY(guitest::countColor(chart, chart.rect(), qRgb(0xe1, 0x57, 0x59), 4) > 200);
        // Clicking a step's bar shows that step on the timeline.
        emit w.breakdown()->stepClicked(3);
        const auto& step = w.session()->steps()->detection.steps[3];
        QCOMPARE(w.timeline()->selectedEvent(), (EventId { 0, Source::Step, 3 }));
        QVERIFY(w.timeline()->visibleRange().contains(TimeRange { step.startNs, step.endNs }));
    }

    void wheelDragAndKeys() {
        MainWindow w;
        w.resize(1400, 860);
        w.show();
        QVERIFY(open(w, { QString::fromStdString(m_runA) }));
        TimelineView* t = w.timeline();
        t->setFocus();
        const QRect area = t->trackArea();
        const QPoint at(area.left() + area.width() / 4, area.top() + 40);

        // The wheel zooms around the cursor: the time under it stays.
        const int64_t under = t->mapping().toTime(at.x() - area.left());
        QWheelEvent wheel(
            at, t->mapToGlobal(at), QPoint(), QPoint(0, 240), Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
        QCoreApplication::sendEvent(t, &wheel);
        const TimeRange zoomed = t->visibleRange();
        QVERIFY(zoomed.duration() < initialRange(w.session()->timeline).duration() * 0.75);
        QVERIFY(std::llabs(t->mapping().toTime(at.x() - area.left()) - under) <= int64_t(t->mapping().nsPerPx()) + 1);

        // Dragging pans: content follows the mouse.
        QTest::mousePress(t, Qt::LeftButton, Qt::NoModifier, at);
        QTest::mouseMove(t, at + QPoint(-100, 0));
        QTest::mouseMove(t, at + QPoint(-200, 0));
        QTest::mouseRelease(t, Qt::LeftButton, Qt::NoModifier, at + QPoint(-200, 0));
        const TimeRange panned = t->visibleRange();
        QCOMPARE(panned.duration(), zoomed.duration());
        QVERIFY(std::llabs(panned.startNs - zoomed.startNs - int64_t(200 * t->mapping().nsPerPx()))
            < int64_t(t->mapping().nsPerPx() * 2) + 2);

        // W zooms in, S out, A and D pan, F fits.
        QTest::keyClick(t, Qt::Key_W);
        QVERIFY(t->visibleRange().duration() < panned.duration());
        QTest::keyClick(t, Qt::Key_S);
        QVERIFY(std::llabs(t->visibleRange().duration() - panned.duration()) < panned.duration() / 100);
        const TimeRange before = t->visibleRange();
        QTest::keyClick(t, Qt::Key_D);
        QVERIFY(t->visibleRange().startNs > before.startNs);
        QTest::keyClick(t, Qt::Key_A);
        QVERIFY(std::llabs(t->visibleRange().startNs - before.startNs) <= 2);
        QTest::keyClick(t, Qt::Key_F);
        QVERIFY(t->visibleRange().contains(w.session()->timeline.span));

        // Shift+drag selects a range; Z zooms to it; Esc clears it.
        const QPoint from(area.left() + 300, area.top() + 30), to(area.left() + 500, area.top() + 30);
        const int64_t t0 = t->mapping().toTime(300), t1 = t->mapping().toTime(500);
        QTest::mousePress(t, Qt::LeftButton, Qt::ShiftModifier, from);
        QTest::mouseMove(t, from + QPoint(50, 0));
        QTest::mouseMove(t, to);
        QTest::mouseRelease(t, Qt::LeftButton, Qt::ShiftModifier, to);
        QVERIFY(t->selectedRange());
        QVERIFY(std::llabs(t->selectedRange()->startNs - t0) <= int64_t(t->mapping().nsPerPx()) + 1);
        QVERIFY(std::llabs(t->selectedRange()->endNs - t1) <= int64_t(t->mapping().nsPerPx()) + 1);
        QTest::keyClick(t, Qt::Key_Z);
        QCOMPARE(t->visibleRange(), *t->selectedRange());
        QTest::keyClick(t, Qt::Key_Escape);
        QVERIFY(!t->selectedRange());

        // A click selects the event under the cursor, and the details pane shows it.
        w.timeline()->setVisibleRange(initialRange(w.session()->timeline));
        const Lane& gpu = w.session()->timeline.tracks[1].lanes[0];
        const size_t i = 6 * 59 + 41; // step 6: its copy, 40 fills, then the first GEMM
        const EventId gemm { 0, gpu.sources[i], gpu.rows[i] };
        QCOMPARE(gemm.source, Source::Kernel);
        QCOMPARE(eventName(w, gemm), std::string("ampere_sgemm_128x64_tn"));
        const QRectF r = t->eventRect(gemm);
        QVERIFY(t->trackArea().contains(r.center().toPoint()));
        QTest::mouseClick(t, Qt::LeftButton, Qt::NoModifier, r.center().toPoint());
        QCOMPARE(t->selectedEvent(), gemm);
        QVERIFY(w.details()->toPlainText().contains(QString::fromStdString(eventName(w, gemm))));
        QTest::keyClick(t, Qt::Key_Escape);
        QVERIFY(!t->selectedEvent().valid());

        // Hovering over an idle gap says how long the GPU idles and why.
        const Lane& gaps = w.session()->timeline.tracks[0].lanes[1];
        size_t longest = gaps.size();
        for (size_t g = 0; g < gaps.size(); ++g)
            if (t->visibleRange().contains(TimeRange { gaps.starts[g], gaps.ends[g] })
                && (longest == gaps.size()
                    || gaps.ends[g] - gaps.starts[g] > gaps.ends[longest] - gaps.starts[longest]))
                longest = g;
        QVERIFY(longest < gaps.size());
        const QPoint hover = t->eventRect({ 0, Source::IdleGap, gaps.rows[longest] }).center().toPoint();
        QHelpEvent help(QEvent::ToolTip, hover, t->mapToGlobal(hover));
        QCoreApplication::sendEvent(t, &help);
        QVERIFY2(QToolTip::text().contains(QStringLiteral("GPU idle 5.03 ms")), qPrintable(QToolTip::text()));
        QVERIFY2(QToolTip::text().contains(QStringLiteral("main thread waiting (read) for the DataLoader")),
            qPrintable(QToolTip::text()));
    }

    void legendWrapsRatherThanCutsEntries() {
        Legend legend;
        const int line = legend.heightForWidth(5000);
        QCOMPARE(line, legend.fontMetrics().height() + 6); // every entry on one line
        QVERIFY(legend.heightForWidth(400) >= 3 * line); // on a narrow window, on more lines: none left out
        legend.resize(400, legend.heightForWidth(400));
        const QImage image = legend.grab().toImage();
        const QRect all = image.rect();
        // The last kinds' swatches are drawn even so.
        for (const EventKind kind : { EventKind::HostRunning, EventKind::HostWaiting })
            QVERIFY2(guitest::countColor(image, all, QRgb(kindStyle(kind).rgb) | 0xff000000u, 2) > 4,
                qPrintable(QString::fromUtf8(kindStyle(kind).label.data())));
    }

    void searchFindsEventsByName() {
        MainWindow w;
        w.resize(1400, 860);
        w.show();
        QVERIFY(open(w, { QString::fromStdString(m_runA) }));
        TimelineView* t = w.timeline();
        t->setFilter(QStringLiteral("fillfunctor"));
        QCOMPARE(t->filterMatches(), size_t(12 * 40));
        QVERIFY(t->selectNextMatch());
        const EventId first = t->selectedEvent();
        QVERIFY(QString::fromStdString(eventName(w, first)).contains(QStringLiteral("FillFunctor")));
        QVERIFY(t->visibleRange().contains(*eventSpan(w.session()->timeline, first)));
        QVERIFY(t->selectNextMatch());
        QVERIFY(eventSpan(w.session()->timeline, t->selectedEvent())->startNs
            > eventSpan(w.session()->timeline, first)->startNs);
        QVERIFY(t->selectNextMatch(true));
        QCOMPARE(t->selectedEvent(), first);
        // The matches stay in colour, the rest is faded.
        t->setVisibleRange(initialRange(w.session()->timeline));
        const QImage grab = t->grab().toImage();
        QCOMPARE(kindPixels(grab, *t, EventKind::KernelGemm), 0);
        guitest::saveScreenshot(grab, QStringLiteral("timeline-search"));
        // Through the search box: typing waits for a pause, Enter searches at once.
        w.searchBox()->setText(QStringLiteral("sgemm_128"));
        QTest::keyClick(w.searchBox(), Qt::Key_Return);
        QCOMPARE(t->filter(), QStringLiteral("sgemm_128"));
        QCOMPARE(t->filterMatches(), size_t(12 * 6));
        t->setFilter(QString());
        QCOMPARE(t->filterMatches(), size_t(0));
    }

    void kernelTableAndScreenshot() {
        MainWindow w;
        w.resize(1400, 860);
        w.show();
        QVERIFY(open(w, { QString::fromStdString(m_runA) }));
        w.bottomTabs()->setCurrentWidget(w.kernels());
        QCOMPARE(w.kernels()->table()->model()->rowCount(), 4);
        w.kernels()->filterBox()->setText(QStringLiteral("sgemm"));
        QCOMPARE(w.kernels()->table()->model()->rowCount(), 2);
        w.kernels()->filterBox()->clear();
        QCoreApplication::processEvents();
        guitest::saveScreenshot(w.kernels()->grab().toImage(), QStringLiteral("kernel-table"));
        // Double-clicking a kernel finds it on the timeline.
        QTableView* table = w.kernels()->table();
        emit table->doubleClicked(table->model()->index(0, 0));
        QCOMPARE(w.timeline()->filterMatches(), size_t(12 * 6));
        QVERIFY(w.timeline()->selectedEvent().valid());
    }

    void badFileGetsAnErrorDialog() {
        MainWindow w;
        w.show();
        const std::string cut = guitest::dataPath("window_cut.json");
        {
            QFile f(QString::fromStdString(cut));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(R"({"traceEvents": [{"ph": "X", "name": "aten::mm", "ts": 1, "dur": 2}, {"ph": )");
        }
        QSignalSpy failed(&w, &MainWindow::loadFailed);
        w.openFiles({ QString::fromStdString(cut) });
        QVERIFY(failed.wait(30000));
        QVERIFY(!w.session());
        const QString message = failed.first().at(1).toString();
        QVERIFY2(message.contains(QStringLiteral("window_cut.json")), qPrintable(message));
        QVERIFY(message.contains(QStringLiteral("again")));
        auto* box = w.findChild<QMessageBox*>(QStringLiteral("errorDialog"));
        QVERIFY(box);
        QVERIFY(box->isVisible());
        QCOMPARE(box->windowTitle(), QStringLiteral("Cannot open window_cut.json"));
        box->close();

        // A missing file, then a good one: the window carries on.
        w.openFiles({ QStringLiteral("/nonexistent/run.db") });
        QVERIFY(failed.wait(30000));
        QVERIFY(open(w, { QString::fromStdString(m_runA) }));
        QVERIFY(w.session());
    }

    void loadingCanBeCancelled() {
        MainWindow w;
        w.show();
        QSignalSpy loaded(&w, &MainWindow::sessionLoaded);
        w.openFiles({ QString::fromStdString(m_runA) });
        QVERIFY(w.isLoading());
        w.cancelLoading();
        QVERIFY(!w.isLoading());
        QVERIFY(!loaded.wait(500));
        QVERIFY(!w.session());
        // Opening again while loading replaces the first load.
        w.openFiles({ QString::fromStdString(m_runB) });
        w.openFiles({ QString::fromStdString(m_runA) });
        QVERIFY(loaded.wait(30000));
        QCOMPARE(w.session()->files.front(), m_runA);
    }

    void comparesTwoRuns() {
        MainWindow w;
        w.resize(1400, 860);
        w.show();
        QVERIFY(open(w, { QString::fromStdString(m_runA) }));
        QSignalSpy shown(&w, &MainWindow::comparisonShown);
        w.openFiles({ QString::fromStdString(m_runB) }, true);
        QVERIFY(shown.wait(30000));
        CompareDialog* d = w.compareDialog();
        QVERIFY(d && d->isVisible());
        QCOMPARE(w.session()->files.front(), m_runA); // the open run stays
        // The comparison `tuneup compare window_a.db window_b.db` makes (same_comparison_test holds its numbers
        // to the CLI's), said in words with why: the stall resolved.
        const analysis::CompareResult* r = d->comparison().result();
        QVERIFY(r);
        QCOMPARE(r->verdict, analysis::Verdict::Improved);
        QVERIFY2(d->verdict()->text().contains(QStringLiteral("Improved")), qPrintable(d->verdict()->text()));
        QVERIFY(d->verdict()->text().contains(QStringLiteral("NEW is faster")));
        QVERIFY2(d->why()->text().contains(QStringLiteral("dataloader-stall resolved")), qPrintable(d->why()->text()));
        QVERIFY(!d->compareAnyway()->isVisible()); // same machine: nothing to compare anyway
        QCOMPARE(d->summary()->item(0, 0)->text(), QStringLiteral("median step"));
        QCOMPARE(d->summary()->item(0, 1)->text(), QStringLiteral("20 ms"));
        QCOMPARE(d->summary()->item(0, 2)->text(), QStringLiteral("15 ms"));
        QCOMPARE(d->summary()->item(0, 4)->text(), QStringLiteral("0.750x"));
        QVERIFY(d->findings()->rowCount() >= 1);
        QCOMPARE(d->findings()->item(0, 0)->text(), QStringLiteral("resolved"));
        QVERIFY(d->kernels()->model()->rowCount() >= 4);
        QCoreApplication::processEvents();
        guitest::saveScreenshot(d->grab().toImage(), QStringLiteral("compare"));
    }

    void settingsAndRecentFilesAreKept() {
        {
            MainWindow w;
            w.resize(1234, 777);
            w.show();
            QVERIFY(open(w, { QString::fromStdString(m_runB) }));
            w.close();
        }
        QSettings settings;
        QCOMPARE(recentFiles(settings).front(), QString::fromStdString(m_runB));
        QVERIFY(settings.contains(QStringLiteral("window/geometry")));
        QVERIFY(settings.contains(QStringLiteral("window/mainSplitter")));
        MainWindow again;
        QCOMPARE(again.size(), QSize(1234, 777));
        QCOMPARE(withRecent({ "a", "b", "c" }, "b", 10), (QStringList { "b", "a", "c" }));
        QCOMPARE(withRecent({ "a", "b" }, "c", 2), (QStringList { "c", "a" }));
    }

private:
    std::string m_runA, m_runB;
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
