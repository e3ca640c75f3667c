// MainWindow: its layout, the settings it keeps, and how a loaded session and a chosen finding reach
// the views.

#include "app/main_window.h"

#include "app/load_job.h"
#include "models/findings_model.h"
#include "report/report_helpers.h"
#include "timeline/evidence_focus.h"
#include "timeline/timeline_view.h"
#include "views/breakdown_chart.h"
#include "views/compare_dialog.h"
#include "views/details_pane.h"
#include "views/findings_panel.h"
#include "views/kernel_view.h"
#include "views/legend.h"

#include <QCloseEvent>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

namespace tuneup::gui {

MainWindow::MainWindow(WindowOptions options, QWidget* parent)
    : QMainWindow(parent)
    , m_options(std::move(options)) {
    setObjectName(QStringLiteral("mainWindow"));
    setWindowTitle(QStringLiteral("tuneup"));
    setAcceptDrops(true);
    resize(1400, 860);
    buildLayout();
    buildMenus();
    restoreSettings();
}

MainWindow::~MainWindow() = default;

void MainWindow::buildLayout() {
    m_findings = new FindingsPanel(this);
    m_timeline = new TimelineView(this);
    m_timeline->setObjectName(QStringLiteral("timeline"));
    m_details = new DetailsPane(this);
    m_breakdown = new BreakdownChart(this);
    m_kernels = new KernelView(this);

    // The bar above the timeline: search, its matches, fit and zoom, and the colour legend.
    m_search = new QLineEdit(this);
    m_search->setObjectName(QStringLiteral("searchBox"));
    m_search->setPlaceholderText(tr("Search events (Ctrl+F)"));
    m_search->setClearButtonEnabled(true);
    m_search->setMinimumWidth(260);
    m_search->setToolTip(tr(
        "Events whose name contains the text stay in colour; Enter selects the next match, Shift+Enter the previous"));
    m_matches = new QLabel(this);
    m_matches->setMinimumWidth(90);
    auto button = [this](const QString& text, const QString& tip, auto slot) {
        auto* b = new QToolButton(this);
        b->setText(text);
        b->setToolTip(tip);
        b->setAutoRaise(true);
        connect(b, &QToolButton::clicked, this, slot);
        return b;
    };
    auto* bar = new QHBoxLayout();
    bar->setContentsMargins(4, 2, 4, 2);
    bar->addWidget(m_search);
    bar->addWidget(
        button(QStringLiteral("◀"), tr("Previous match (Shift+Enter)"), [this] { m_timeline->selectNextMatch(true); }));
    bar->addWidget(
        button(QStringLiteral("▶"), tr("Next match (Enter)"), [this] { m_timeline->selectNextMatch(false); }));
    bar->addWidget(m_matches);
    bar->addWidget(button(tr("Fit"), tr("Show the whole trace (F)"), [this] { m_timeline->fitAll(); }));
    bar->addWidget(button(tr("Zoom to selection"), tr("Zoom to the selected range, event or evidence (Z)"),
        [this] { m_timeline->zoomToSelection(); }));
    bar->addStretch(1);

    auto* timelinePane = new QWidget(this);
    auto* timelineLayout = new QVBoxLayout(timelinePane);
    timelineLayout->setContentsMargins(0, 0, 0, 0);
    timelineLayout->setSpacing(0);
    timelineLayout->addLayout(bar);
    auto* legend = new Legend(this);
    legend->setContentsMargins(6, 0, 6, 0);
    timelineLayout->addWidget(legend);
    timelineLayout->addWidget(m_timeline, 1);

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("bottomTabs"));
    m_tabs->addTab(m_details, tr("Details"));
    m_tabs->addTab(m_breakdown, tr("Step breakdown"));
    m_tabs->addTab(m_kernels, tr("Kernels"));

    m_centreSplitter = new QSplitter(Qt::Vertical, this);
    m_centreSplitter->setObjectName(QStringLiteral("centreSplitter"));
    m_centreSplitter->addWidget(timelinePane);
    m_centreSplitter->addWidget(m_tabs);
    m_centreSplitter->setStretchFactor(0, 3);
    m_centreSplitter->setStretchFactor(1, 1);
    m_centreSplitter->setSizes({ 600, 240 });

    m_mainSplitter = new QSplitter(Qt::Horizontal, this);
    m_mainSplitter->setObjectName(QStringLiteral("mainSplitter"));
    m_mainSplitter->addWidget(m_findings);
    m_mainSplitter->addWidget(m_centreSplitter);
    m_mainSplitter->setStretchFactor(0, 0);
    m_mainSplitter->setStretchFactor(1, 1);
    m_mainSplitter->setSizes({ 420, 980 });
    setCentralWidget(m_mainSplitter);

    m_status = new QLabel(this);
    statusBar()->addWidget(m_status, 1);

    // Search as you type, after a pause: a search visits every event once.
    auto* searchTimer = new QTimer(this);
    searchTimer->setSingleShot(true);
    searchTimer->setInterval(200);
    connect(m_search, &QLineEdit::textChanged, searchTimer, qOverload<>(&QTimer::start));
    auto applySearch = [this] {
        m_timeline->setFilter(m_search->text());
        m_matches->setText(
            m_timeline->filter().isEmpty() ? QString() : tr("%L1 matches").arg(m_timeline->filterMatches()));
    };
    connect(searchTimer, &QTimer::timeout, this, applySearch);
    connect(m_search, &QLineEdit::returnPressed, this, [this, searchTimer, applySearch] {
        if (searchTimer->isActive()) {
            searchTimer->stop();
            applySearch();
        }
        m_timeline->selectNextMatch(QGuiApplication::keyboardModifiers() & Qt::ShiftModifier);
    });

    connect(m_findings, &FindingsPanel::findingChosen, this, &MainWindow::showFinding);
    connect(m_findings, &FindingsPanel::sourceActivated, this, &MainWindow::openSource);
    connect(m_timeline, &TimelineView::eventSelected, m_details, [this](const EventId& id) {
        m_details->showDetails(id);
        if (id.valid()) m_tabs->setCurrentWidget(m_details);
    });
    connect(m_breakdown, &BreakdownChart::stepClicked, this, [this](size_t step) {
        const EventId id { 0, Source::Step, analysis::RowIndex(step) };
        m_timeline->selectEvent(id);
        m_timeline->zoomToSelection();
    });
    connect(m_kernels, &KernelView::kernelActivated, this, [this](const QString& name) {
        m_search->setText(name);
        m_timeline->setFilter(name);
        m_matches->setText(tr("%L1 matches").arg(m_timeline->filterMatches()));
        m_timeline->selectNextMatch();
    });
}

void MainWindow::restoreSettings() {
    QSettings settings;
    restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
    m_mainSplitter->restoreState(settings.value(QStringLiteral("window/mainSplitter")).toByteArray());
    m_centreSplitter->restoreState(settings.value(QStringLiteral("window/centreSplitter")).toByteArray());
    m_findings->splitter()->restoreState(settings.value(QStringLiteral("window/findingsSplitter")).toByteArray());
    m_tabs->setCurrentIndex(settings.value(QStringLiteral("window/tab"), 0).toInt());
}

void MainWindow::saveSettings() {
    QSettings settings;
    settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
    settings.setValue(QStringLiteral("window/state"), saveState());
    settings.setValue(QStringLiteral("window/mainSplitter"), m_mainSplitter->saveState());
    settings.setValue(QStringLiteral("window/centreSplitter"), m_centreSplitter->saveState());
    settings.setValue(QStringLiteral("window/findingsSplitter"), m_findings->splitter()->saveState());
    settings.setValue(QStringLiteral("window/tab"), m_tabs->currentIndex());
}

void MainWindow::closeEvent(QCloseEvent* event) {
    cancelLoading();
    saveSettings();
    event->accept();
}

void MainWindow::setSession(std::shared_ptr<const Session> session) {
    m_session = std::move(session);
    m_timeline->setSession(m_session);
    m_details->setSession(m_session);
    m_breakdown->setSession(m_session);
    m_kernels->setSession(m_session);
    m_findings->setSession(m_session);
    if (!m_timeline->filter().isEmpty()) m_matches->setText(tr("%L1 matches").arg(m_timeline->filterMatches()));
    setWindowTitle(m_session ? QStringLiteral("%1 — tuneup").arg(QString::fromStdString(m_session->title()))
                             : QStringLiteral("tuneup"));
    updateStatus();
    m_timeline->setFocus();
}

void MainWindow::chooseFinding(int row) {
    m_findings->chooseRow(row);
}

void MainWindow::showFinding(const analysis::Finding* finding) {
    if (!m_session) return;
    if (!finding) {
        m_timeline->setEvidence({}, {});
        return;
    }
    // The trace the finding is about: its rank's model.
    uint32_t model = 0;
    const analysis::AdviceReport& report = m_session->report();
    if (const analysis::RankSummary* rank = analysis::rankOf(report, *finding))
        model = uint32_t(rank - report.ranks.data());
    const int64_t stepNs = model < report.ranks.size() ? report.ranks[model].steps.medianStepNs() : 0;
    const auto focus = evidenceFocus(m_session->timeline, model, finding->evidence, stepNs);
    if (!focus) {
        m_timeline->setEvidence({}, {});
        m_timeline->selectEvent({});
        statusBar()->showMessage(
            tr("%1: no events or time spans to show on the timeline").arg(QString::fromStdString(finding->ruleId)),
            5000);
        return;
    }
    m_timeline->setEvidence(focus->events, focus->spans);
    m_timeline->setSelectedRange(std::nullopt);
    m_timeline->setVisibleRange(padded(focus->range, 0.15));
    m_timeline->selectEvent(focus->select);
}

void MainWindow::updateStatus() {
    if (!m_session) {
        m_status->clear();
        return;
    }
    size_t events = 0;
    for (size_t i = 0; i < m_session->modelCount(); ++i)
        events += m_session->model(i).eventCount();
    QString text = tr("%1 · %L2 events").arg(QString::fromStdString(m_session->title())).arg(events);
    if (!m_session->otherFiles.empty()) text += tr(" · %1 other processes").arg(m_session->otherFiles.size());
    if (const analysis::StepAnalysis* steps = m_session->steps())
        text += tr(" · %L1 steps, median %2")
                    .arg(steps->detection.steps.size())
                    .arg(QString::fromStdString(formatDuration(steps->medianStepNs())));
    text += tr(" · loaded in %1 s").arg(m_session->loadSeconds, 0, 'f', 2);
    m_status->setText(text);
}

} // namespace tuneup::gui
