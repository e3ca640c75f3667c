// MainWindow's menus, shortcuts and file loading: open, open recent, compare, drag and drop, the
// progress dialog with its cancel button, and the error dialog.

#include "app/load_job.h"
#include "app/main_window.h"
#include "app/recent_files.h"
#include "models/compare_data.h"
#include "timeline/timeline_view.h"
#include "views/compare_dialog.h"
#include "views/findings_panel.h"

#include <QAction>
#include <QApplication>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressDialog>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>

namespace tuneup::gui {

void MainWindow::buildMenus() {
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] { openDialog(false); });
    m_recentMenu = file->addMenu(tr("Open &Recent"));
    file->addAction(tr("&Compare with…"), QKeySequence(tr("Ctrl+D")), this, [this] { openDialog(true); });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
    rebuildRecentMenu();

    QMenu* view = menuBar()->addMenu(tr("&View"));
    // Single-letter keys belong to the timeline (it has the focus); the menu shows them and also
    // offers them with Ctrl for when another pane has the focus.
    view->addAction(tr("Zoom &in (W)"), QKeySequence(tr("Ctrl+=")), this, [this] { m_timeline->zoomBy(0.7); });
    view->addAction(tr("Zoom &out (S)"), QKeySequence(tr("Ctrl+-")), this, [this] { m_timeline->zoomBy(1 / 0.7); });
    view->addAction(tr("&Fit (F)"), QKeySequence(tr("Ctrl+0")), this, [this] { m_timeline->fitAll(); });
    view->addAction(
        tr("&Zoom to selection (Z)"), QKeySequence(tr("Ctrl+E")), this, [this] { m_timeline->zoomToSelection(); });
    view->addSeparator();
    view->addAction(tr("&Search events"), QKeySequence::Find, this, [this] {
        m_search->setFocus();
        m_search->selectAll();
    });
    view->addAction(tr("Next &finding"), QKeySequence(tr("Ctrl+]")), this, [this] {
        m_findings->chooseRow(std::min(m_findings->chosenRow() + 1, m_findings->table()->model()->rowCount() - 1));
    });
    view->addAction(tr("Previous f&inding"), QKeySequence(tr("Ctrl+[")), this,
        [this] { m_findings->chooseRow(std::max(m_findings->chosenRow() - 1, 0)); });
    view->addSeparator();
    view->addAction(tr("&Details"), QKeySequence(tr("Ctrl+1")), this, [this] { m_tabs->setCurrentIndex(0); });
    view->addAction(tr("Step &breakdown"), QKeySequence(tr("Ctrl+2")), this, [this] { m_tabs->setCurrentIndex(1); });
    view->addAction(tr("&Kernels"), QKeySequence(tr("Ctrl+3")), this, [this] { m_tabs->setCurrentIndex(2); });
    view->addAction(tr("&Timeline"), QKeySequence(tr("Ctrl+T")), this, [this] { m_timeline->setFocus(); });

    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&Keyboard and mouse"), QKeySequence::HelpContents, this, &MainWindow::showShortcuts);
    help->addAction(tr("&About tuneup"), this, &MainWindow::showAbout);
}

void MainWindow::rebuildRecentMenu() {
    m_recentMenu->clear();
    QSettings settings;
    const QStringList recent = recentFiles(settings);
    for (const QString& entry : recent) {
        const QStringList files = entry.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        QString label = files.value(0);
        if (files.size() > 1) label += tr(" +%1").arg(files.size() - 1);
        m_recentMenu->addAction(label, this, [this, files] { openFiles(files); });
    }
    if (!recent.isEmpty()) {
        m_recentMenu->addSeparator();
        m_recentMenu->addAction(tr("Clear"), this, [this] {
            QSettings s;
            clearRecentFiles(s);
            rebuildRecentMenu();
        });
    }
    m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::openDialog(bool compare) {
    if (compare && !m_session) {
        showError(
            tr("Nothing to compare with"), tr("Open a run first (File › Open), then compare another run with it."));
        return;
    }
    QSettings settings;
    const QStringList files
        = QFileDialog::getOpenFileNames(this, compare ? tr("Compare with (run B)") : tr("Open traces"),
            settings.value(QStringLiteral("lastDirectory")).toString(),
            tr("Traces (*.db *.json *.json.gz *.sqlite);;tuneup recordings (*.db);;PyTorch profiler traces (*.json "
               "*.json.gz);;"
               "All files (*)"));
    if (files.isEmpty()) return;
    settings.setValue(QStringLiteral("lastDirectory"), QFileInfo(files.front()).absolutePath());
    openFiles(files, compare);
}

void MainWindow::openFiles(const QStringList& files, bool compare) {
    if (files.isEmpty()) return;
    cancelLoading();
    startJob(files, compare);
}

bool MainWindow::isLoading() const {
    return m_job && m_job->isRunning();
}

void MainWindow::cancelLoading() {
    if (!m_job) return;
    // Deleting the job cancels it and waits for its thread; its queued results are then dropped.
    delete std::exchange(m_job, nullptr);
    if (m_progress) m_progress->deleteLater();
}

void MainWindow::startJob(const QStringList& files, bool compare) {
    LoadRequest request;
    for (const QString& f : files)
        request.files.push_back(f.toStdString());
    request.stepRange = m_options.stepRange;
    request.userRules = m_options.userRules;
    m_job = new LoadJob(std::move(request), this);

    m_progress
        = new QProgressDialog(tr("Opening %1…").arg(QFileInfo(files.front()).fileName()), tr("Cancel"), 0, 1000, this);
    m_progress->setObjectName(QStringLiteral("loadProgress"));
    m_progress->setWindowTitle(compare ? tr("Opening run B") : tr("Opening"));
    m_progress->setWindowModality(Qt::WindowModal);
    m_progress->setMinimumDuration(300); // a small file opens without a flash of the dialog
    m_progress->setAutoClose(false);
    m_progress->setAutoReset(false);
    m_progress->setValue(0);
    connect(m_progress, &QProgressDialog::canceled, this, [this] {
        if (!m_job) return;
        m_job->cancel();
        statusBar()->showMessage(tr("Cancelling…"));
    });
    connect(m_job, &LoadJob::progress, this, [this](const QString& phase, double fraction) {
        if (m_progress) {
            m_progress->setLabelText(phase + QStringLiteral("…"));
            m_progress->setValue(int(fraction * 1000));
        }
    });
    LoadJob* job = m_job;
    auto done = [this, job] {
        if (m_progress) m_progress->deleteLater();
        if (m_job == job) m_job = nullptr;
        job->deleteLater();
    };
    connect(m_job, &LoadJob::finished, this, [this, compare, files, done](std::shared_ptr<const Session> session) {
        done();
        QSettings settings;
        if (!compare) {
            addRecentFile(settings, files.join(QLatin1Char('\n')));
            rebuildRecentMenu();
        }
        jobFinished(std::move(session), compare);
    });
    connect(m_job, &LoadJob::failed, this, [this, done](const QString& title, const QString& message) {
        done();
        showError(title, message);
        emit loadFailed(title, message);
    });
    connect(m_job, &LoadJob::cancelled, this, [this, done] {
        done();
        statusBar()->showMessage(tr("Loading cancelled"), 4000);
    });
    statusBar()->showMessage(tr("Opening %1…").arg(files.join(QStringLiteral(", "))));
    m_job->start();
}

void MainWindow::jobFinished(std::shared_ptr<const Session> session, bool compare) {
    statusBar()->clearMessage();
    if (!compare) {
        setSession(std::move(session));
        emit sessionLoaded();
        return;
    }
    if (!m_session) return;
    if (!m_compare) m_compare = new CompareDialog(this);
    m_compare->setComparison(compareSessions(*m_session, *session)); // BASE: the open run
    m_compare->show();
    m_compare->raise();
    emit comparisonShown();
}

void MainWindow::showError(const QString& title, const QString& message) {
    // Window-modal and not blocking: the window stays responsive, and tests can find and close it.
    auto* box = new QMessageBox(QMessageBox::Critical, title, message, QMessageBox::Ok, this);
    box->setObjectName(QStringLiteral("errorDialog"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setTextInteractionFlags(Qt::TextSelectableByMouse);
    box->open();
}

void MainWindow::showShortcuts() {
    QMessageBox::information(this, tr("Keyboard and mouse"),
        tr("<table>"
           "<tr><td><b>Wheel</b>, Ctrl+wheel</td><td>zoom around the cursor</td></tr>"
           "<tr><td>Shift+wheel</td><td>scroll the tracks</td></tr>"
           "<tr><td>Drag</td><td>pan (and scroll)</td></tr>"
           "<tr><td>Shift+drag, right-drag</td><td>select a time range (its length shows on the ruler)</td></tr>"
           "<tr><td>Click / double-click</td><td>select an event / zoom to it</td></tr>"
           "<tr><td>Click a track's title</td><td>fold or unfold its nested rows</td></tr>"
           "<tr><td><b>W</b> / <b>S</b></td><td>zoom in / out</td></tr>"
           "<tr><td><b>A</b> / <b>D</b>, ← / →</td><td>pan left / right</td></tr>"
           "<tr><td><b>F</b></td><td>fit the whole trace</td></tr>"
           "<tr><td><b>Z</b></td><td>zoom to the selected range, event, or the finding's evidence</td></tr>"
           "<tr><td>Esc</td><td>clear the range, then the selection</td></tr>"
           "<tr><td>Ctrl+F, Enter, Shift+Enter</td><td>search events by name, next / previous match</td></tr>"
           "<tr><td>Ctrl+] / Ctrl+[</td><td>next / previous finding</td></tr>"
           "<tr><td>Ctrl+O, Ctrl+D</td><td>open, compare with another run</td></tr>"
           "</table>"));
}

void MainWindow::showAbout() {
    QMessageBox::about(this, tr("About tuneup"),
        tr("<b>tuneup-gui %1</b><p>Why is my training slow, and what do I change? The timeline of a recorded "
           "run with the advisor's findings beside it.</p>")
            .arg(QStringLiteral(TUNEUP_VERSION)));
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    QStringList files;
    for (const QUrl& url : event->mimeData()->urls())
        if (url.isLocalFile()) files << url.toLocalFile();
    openFiles(files);
}

} // namespace tuneup::gui
