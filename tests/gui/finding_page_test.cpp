// The finding page as the user sees it, offscreen: nothing is cut off on the right. A fix with a very
// long line (a user rule's, as a user can write) wraps inside the page, and its end is drawn where the
// page shows it; every page of a run (its findings with their rule docs, and the overview) fits a
// narrow findings column. The AMP page shows the current GradScaler API. The details pane breaks a
// mangled kernel name (no space to wrap at) rather than cutting it off.

#include "app/session.h"
#include "gui_test_support.h"
#include "model/trace_builder.h"
#include "models/findings_model.h"
#include "views/details_pane.h"
#include "views/findings_panel.h"

#include <QScrollBar>
#include <QTextBrowser>
#include <QtTest>
#include <filesystem>
#include <fstream>

using namespace tuneup;
using namespace tuneup::gui;

namespace {

// The long fix line, and its end: found on the page to check that it is drawn.
const QString kLineEnd = QStringLiteral("END_OF_LONG_LINE");
const QString kLongLine
    = QStringLiteral(
          "loader = torch.utils.data.DataLoader(dataset, batch_size=64, shuffle=True, num_workers=8, pin_memory=True, "
          "persistent_workers=True, prefetch_factor=4, drop_last=True)  # pinned batches, workers kept between epochs ")
    + kLineEnd;

// A user rule that fires on every pageable copy of the synthetic run, with a fix line of ~240 characters.
std::string writeLongFixRule() {
    const std::filesystem::path dir = guitest::dataPath("long_fix_rules");
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "long-fix.sql")
        << "-- id: long-fix\n"
           "-- title: Copies with a long fix\n"
           "-- severity: warning\n"
           "-- summary: A rule whose fix has one very long line.\n"
           "-- fix-python: "
        << kLongLine.toStdString()
        << "\n"
           "-- fix-cpp: auto x = batch.data.pin_memory().to(torch::kCUDA, /*non_blocking=*/true);\n"
           "SELECT 'pageable copy' AS title, 'a copy' AS detail, start_ns, end_ns, (end_ns - start_ns) / 2 AS gain_ns\n"
           "FROM memcpys WHERE src_kind = 1;\n";
    return dir.string();
}

int rowOfRule(const FindingsPanel& panel, const std::string& rule) {
    for (int row = 0; row < panel.model()->rowCount(); ++row)
        if (panel.model()->finding(row)->ruleId == rule) return row;
    return -1;
}

} // namespace

class FindingPageTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() {
        LoadRequest r = guitest::request(
            guitest::writeTrace(guitest::syntheticRun(12, 40), guitest::dataPath("finding_page.db")));
        r.userRules = writeLongFixRule();
        m_session = loadSession(r);
    }

    void aLongFixLineWrapsAndItsEndIsDrawn() {
        FindingsPanel panel;
        panel.resize(420, 900); // the findings column of a 1400-pixel window
        panel.show();
        panel.setSession(m_session);
        const int row = rowOfRule(panel, "long-fix");
        QVERIFY(row >= 0);
        panel.chooseRow(row);
        QCoreApplication::processEvents();
        QTextBrowser* page = panel.page();
        // Wrapping is layout only: the text (what a copy gives) keeps the line whole.
        QVERIFY(page->toPlainText().contains(kLongLine + QLatin1Char('\n')));

        const QStringList cut = guitest::linesCutOffOnTheRight(*page);
        QVERIFY2(cut.isEmpty(), qPrintable(QStringLiteral("cut off: ") + cut.join(QStringLiteral("; "))));
        QCOMPARE(page->horizontalScrollBar()->maximum(), 0); // nothing beside the page to scroll to

        // The screenshot: the end of the long line lies inside the viewport and its glyphs are drawn.
        const QTextCursor found = page->document()->find(kLineEnd);
        QVERIFY(!found.isNull());
        QTextCursor start(page->document()), end(page->document());
        start.setPosition(found.selectionStart());
        end.setPosition(found.selectionEnd());
        page->setTextCursor(end); // no selection: its colour would hide the glyphs
        page->ensureCursorVisible();
        QCoreApplication::processEvents();
        const QRect first = page->cursorRect(start), last = page->cursorRect(end);
        QCOMPARE(first.top(), last.top()); // one word: not broken
        const QRect word(first.topLeft(), QPoint(last.left(), last.bottom()));
        QVERIFY2(page->viewport()->rect().contains(word),
            qPrintable(QStringLiteral("the line's end drawn at x %1-%2, the page %3 wide")
                           .arg(word.left())
                           .arg(word.right())
                           .arg(page->viewport()->width())));
        const QImage shot = page->viewport()->grab().toImage();
        guitest::saveScreenshot(panel.grab().toImage(), QStringLiteral("finding-page-long-fix"));
        // Its 16 characters in dark glyph pixels (a character of 12-pixel monospace has about 15 of them).
        const int glyphs = guitest::countColor(shot, word, qRgb(0, 0, 0), 110);
        QVERIFY2(glyphs > 16 * 8, qPrintable(QStringLiteral("%1 dark pixels where the line ends").arg(glyphs)));
    }

    // The generic check over every page: each finding of the run with its rule's documentation, and the
    // overview, in a findings column narrower than any fix or doc line.
    void everyPageFitsANarrowColumn() {
        FindingsPanel panel;
        panel.resize(300, 700);
        panel.show();
        panel.setSession(m_session);
        QVERIFY(panel.model()->rowCount() >= 3);
        for (int row = -1; row < panel.model()->rowCount(); ++row) {
            panel.chooseRow(row);
            QCoreApplication::processEvents();
            const QString name
                = row < 0 ? QStringLiteral("overview") : QString::fromStdString(panel.model()->finding(row)->ruleId);
            const QStringList cut = guitest::linesCutOffOnTheRight(*panel.page());
            QVERIFY2(cut.isEmpty(), qPrintable(name + QStringLiteral(": cut off: ") + cut.join(QStringLiteral("; "))));
            QCOMPARE(panel.page()->horizontalScrollBar()->maximum(), 0);
        }
    }

    // The AMP fix the page shows (the rule's and its doc's) is the current API, torch.amp.GradScaler("cuda");
    // the deprecated torch.cuda.amp one only as what PyTorch before 2.3 needs.
    void ampPageShowsTheCurrentGradScaler() {
        FindingsPanel panel;
        panel.setSession(m_session);
        const int row = rowOfRule(panel, "amp-unused");
        QVERIFY(row >= 0);
        panel.chooseRow(row);
        const QStringList lines = panel.page()->toPlainText().split(QLatin1Char('\n'));
        QVERIFY(lines.filter(QStringLiteral("torch.amp.GradScaler(\"cuda\")")).size() >= 1);
        for (const QString& line : lines.filter(QStringLiteral("torch.cuda.amp")))
            QVERIFY2(line.contains(QStringLiteral("PyTorch < 2.3")), qPrintable(line));
    }

    // A kernel whose name is one 400-character word (a mangled C++ name, as some traces keep them): the
    // details pane shows all of it at its width, as the event's name (a paragraph) and as a field of the
    // call that launched it (a table cell). QTextBrowser's defaults (WidgetWidth, WrapAtWordBoundaryOrAnywhere)
    // already do it: this holds the pane to that, should either ever be set otherwise.
    void aMangledNameInTheDetailsPaneWraps() {
        std::string mangled = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_";
        while (mangled.size() < 400)
            mangled += "13BinaryFunctorIfffNS0_15binary_internal10MulFunctorIfEEEE";
        mangled += "END_OF_NAME";
        analysis::TraceBuilder b(analysis::SourceFormat::TuneupDb, "mangled.db");
        analysis::ApiCall call;
        call.startNs = 990'000;
        call.endNs = 995'000;
        call.thread = b.thread(100, 100);
        call.name = b.intern("cudaLaunchKernel");
        call.correlation = 1;
        b.addApiCall(call);
        analysis::Kernel k;
        k.startNs = 1'000'000;
        k.endNs = 1'050'000;
        k.name = b.intern(mangled);
        k.correlation = 1;
        b.addKernel(k);
        const auto session
            = loadSession(guitest::request(guitest::writeTrace(b.finish(), guitest::dataPath("details_mangled.db"))));
        DetailsPane pane;
        pane.resize(300, 400);
        pane.show();
        pane.setSession(session);
        for (const EventId id : { EventId { 0, Source::Kernel, 0 }, EventId { 0, Source::ApiCall, 0 } }) {
            pane.showDetails(id);
            QCoreApplication::processEvents();
            QVERIFY(pane.toPlainText().contains(QString::fromStdString(mangled)));
            const QStringList cut = guitest::linesCutOffOnTheRight(pane);
            QVERIFY2(cut.isEmpty(), qPrintable(QStringLiteral("cut off: ") + cut.join(QStringLiteral("; "))));
            QCOMPARE(pane.horizontalScrollBar()->maximum(), 0);
        }
    }

private:
    std::shared_ptr<Session> m_session;
};

QTEST_MAIN(FindingPageTest)
#include "finding_page_test.moc"
