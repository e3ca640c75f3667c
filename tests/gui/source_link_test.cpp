// "Where in the code" on the finding page: each line of the user's code behind a finding is shown in the
// reports' words, as a link; activating it (a click on the page) opens the file read-only at that line
// when the file is on this machine, and says in the status bar that it is not otherwise. The real BERT
// trace names Hugging Face's files (not here); a trace built here names a script written beside it.

#include "app/main_window.h"
#include "gui_test_support.h"
#include "models/findings_model.h"
#include "report/source_file.h"
#include "views/findings_panel.h"
#include "views/source_view.h"

#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTextBlock>
#include <QTextBrowser>
#include <QtTest>
#include <filesystem>
#include <fstream>

using namespace tuneup;
using namespace tuneup::gui;
using tuneup::analysis::findSourceFile;
using tuneup::analysis::readSourceText;
using tuneup::analysis::sourceFolders;
using tuneup::analysis::SourceText;
namespace fs = std::filesystem;

namespace {

const char* kBert = "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz";

bool open(MainWindow& w, const std::string& file) {
    QSignalSpy loaded(&w, &MainWindow::sessionLoaded);
    QSignalSpy failed(&w, &MainWindow::loadFailed);
    w.openFiles({ QString::fromStdString(file) });
    for (int i = 0; i < 1200 && loaded.isEmpty() && failed.isEmpty(); ++i)
        loaded.wait(100);
    QCoreApplication::processEvents();
    return !loaded.isEmpty();
}

int rowOfRule(const MainWindow& w, const std::string& rule) {
    const FindingsModel* m = w.findings()->model();
    for (int row = 0; row < m->rowCount(); ++row)
        if (m->finding(row)->ruleId == rule) return row;
    return -1;
}

// Clicks the link whose text contains `text` on the page, as the user does: scrolled into view, pressed
// and released on it. False when the page has no such link.
bool clickLink(QTextBrowser& page, const QString& text) {
    for (QTextBlock block = page.document()->begin(); block.isValid(); block = block.next())
        for (auto it = block.begin(); !it.atEnd(); ++it) {
            const QTextFragment fragment = it.fragment();
            if (!fragment.charFormat().isAnchor() || !fragment.text().contains(text)) continue;
            QTextCursor cursor(page.document());
            cursor.setPosition(fragment.position() + 1);
            page.setTextCursor(cursor);
            page.ensureCursorVisible();
            QCoreApplication::processEvents();
            const QPoint at = page.cursorRect(cursor).center() + QPoint(2, 0);
            QTest::mouseClick(page.viewport(), Qt::LeftButton, {}, at);
            QCoreApplication::processEvents();
            return true;
        }
    return false;
}

// The script the built trace's frames name: line kLoadBatchLine is the one pageable-memcpy points at.
const QString kCopyLine = QStringLiteral("    batch = batch.to(\"cuda\")  # the pageable copy");
std::string script() {
    std::string text;
    for (int line = 1; line <= 600; ++line)
        text += line == guitest::kLoadBatchLine ? kCopyLine.toStdString() + "\n"
                                                : "x_" + std::to_string(line) + " = " + std::to_string(line) + "\n";
    return text;
}

} // namespace

class SourceLinkTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { guitest::isolateSettings(); }

    // TraceLens's BERT trace: its sync-in-loop finding (above the materiality floor, so listed) names
    // Hugging Face's attention-mask helper; that file is not on this machine, and the status bar says so.
    void bertPageShowsTheSiteAndSaysTheFileIsNotHere() {
        TUNEUP_REQUIRE_SHARED_TRACE(bert, kBert);
        MainWindow w;
        w.show();
        QVERIFY(open(w, bert));
        const int row = rowOfRule(w, "sync-in-loop");
        QVERIFY(row >= 0);
        w.chooseFinding(row);
        QTextBrowser* page = w.findings()->page();
        const QString site = QStringLiteral(
            "transformers/modeling_attn_mask_utils.py:429 in _prepare_4d_attention_mask_for_sdpa (1 event, 50%)");
        const QString text = page->toPlainText();
        QVERIFY2(text.contains(QStringLiteral("Where in the code")), qPrintable(text));
        QVERIFY2(text.contains(site), qPrintable(text));
        // Before the evidence, as in the reports.
        QVERIFY(text.indexOf(site) < text.indexOf(QStringLiteral("Evidence")));
        QVERIFY(guitest::linesCutOffOnTheRight(*page).isEmpty());

        QVERIFY(clickLink(*page, QStringLiteral("modeling_attn_mask_utils.py:429")));
        QCOMPARE(w.statusBar()->currentMessage(),
            QStringLiteral("transformers/modeling_attn_mask_utils.py is not on this machine (looked beside the "
                           "trace and in the current directory)"));
        QVERIFY(!w.sourceView() || !w.sourceView()->isVisible());
    }

    // A trace whose Python frames name project/train.py, written beside it: the link opens it at the line.
    void aLinkOpensTheFileAtItsLine() {
        const fs::path dir = guitest::dataPath("source_link");
        fs::remove_all(dir);
        fs::create_directories(dir / "project");
        std::ofstream(dir / "project" / "train.py") << script();
        const std::string trace = guitest::writeKinetoTrace(
            guitest::syntheticRun(12, 40, 5'000'000, "project/train.py"), (dir / "trace.json").string());

        MainWindow w;
        w.show();
        QVERIFY(open(w, trace));
        const int row = rowOfRule(w, "pageable-memcpy");
        QVERIFY(row >= 0);
        w.chooseFinding(row);
        QTextBrowser* page = w.findings()->page();
        const QString site = QStringLiteral("project/train.py:%1 in load_batch").arg(guitest::kLoadBatchLine);
        QVERIFY2(page->toPlainText().contains(site), qPrintable(page->toPlainText()));

        QVERIFY(clickLink(*page, site));
        SourceView* view = w.sourceView();
        QVERIFY(view);
        QVERIFY(view->isVisible());
        QCOMPARE(view->highlightedLine(), guitest::kLoadBatchLine);
        const auto highlight = view->editor()->extraSelections();
        QCOMPARE(highlight.size(), 1);
        QCOMPARE(highlight.front().cursor.block().text(), kCopyLine);
        QCOMPARE(view->editor()->textCursor().block().text(), kCopyLine);
        QVERIFY(view->editor()->isReadOnly());
        // Scrolled into view: the line's rectangle lies inside the editor's viewport, far below its top.
        QVERIFY(view->editor()->verticalScrollBar()->value() > 0);
        const QRect line = view->editor()->cursorRect();
        QVERIFY(view->editor()->viewport()->rect().contains(line.center()));
        QVERIFY(view->header()->text().contains(QStringLiteral("train.py")));
        guitest::saveScreenshot(page->grab().toImage(), QStringLiteral("finding-page-sources"));
        guitest::saveScreenshot(view->grab().toImage(), QStringLiteral("source-view"));

        // The file gone (the trace opened elsewhere): the status bar says so, nothing else opens.
        view->hide();
        fs::remove(dir / "project" / "train.py");
        QVERIFY(clickLink(*page, site));
        QVERIFY(!view->isVisible());
        QVERIFY2(w.statusBar()->currentMessage().startsWith(QStringLiteral("project/train.py is not on this machine")),
            qPrintable(w.statusBar()->currentMessage()));
    }

    // Where a name is looked for, and the bounded read.
    void filesAreFoundAndReadBounded() {
        const fs::path dir = guitest::dataPath("source_files");
        fs::remove_all(dir);
        fs::create_directories(dir / "pkg");
        std::ofstream(dir / "pkg" / "m.py") << "a = 1\nb = 2\nc = 3\n";
        const std::vector<fs::path> folders = sourceFolders((dir / "trace.json").string());
        QCOMPARE(folders.front(), dir);
        QCOMPARE(findSourceFile("pkg/m.py", folders), std::optional(dir / "pkg" / "m.py"));
        QCOMPARE(findSourceFile((dir / "pkg" / "m.py").string(), {}), std::optional(dir / "pkg" / "m.py"));
        QVERIFY(!findSourceFile("pkg/absent.py", folders));
        QVERIFY(!findSourceFile("pkg", folders)); // a folder is no source file
        const SourceText whole = readSourceText(dir / "pkg" / "m.py");
        QCOMPARE(whole.text, std::string("a = 1\nb = 2\nc = 3\n"));
        QVERIFY(!whole.truncated);
        const SourceText head = readSourceText(dir / "pkg" / "m.py", 9); // whole lines only
        QCOMPARE(head.text, std::string("a = 1\n"));
        QVERIFY(head.truncated);
    }
};

QTEST_MAIN(SourceLinkTest)
#include "source_link_test.moc"
