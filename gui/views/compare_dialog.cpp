#include "views/compare_dialog.h"

#include "compare/compare_report.h"
#include "models/compare_kernel_model.h"
#include "views/compare_tables.h"

#include <QChartView>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>

namespace tuneup::gui {

using namespace analysis;

namespace {

QTableWidget* readOnlyTable(QWidget* parent) {
    auto* t = new QTableWidget(parent);
    t->setEditTriggers(QAbstractItemView::NoEditTriggers);
    t->setSelectionBehavior(QAbstractItemView::SelectRows);
    t->setWordWrap(false);
    t->verticalHeader()->hide();
    t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
    return t;
}

// The verdict for people: a word, the colour a user reads it by.
QString verdictWord(Verdict v) {
    switch (v) {
    case Verdict::Regressed:
        return QObject::tr("Regressed");
    case Verdict::Improved:
        return QObject::tr("Improved");
    case Verdict::Same:
        return QObject::tr("Same");
    case Verdict::Inconclusive:
        return QObject::tr("Inconclusive");
    case Verdict::Incomparable:
        return QObject::tr("Not comparable");
    }
    return {};
}

QString verdictColour(Verdict v) {
    switch (v) {
    case Verdict::Regressed:
    case Verdict::Incomparable:
        return QStringLiteral("#c03030");
    case Verdict::Improved:
        return QStringLiteral("#2a8a3a");
    default:
        return QStringLiteral("#a06a00");
    }
}

QString bullets(const std::vector<std::string>& lines) {
    QString out;
    for (const std::string& l : lines)
        out += QStringLiteral("<li>%1</li>").arg(QString::fromStdString(l).toHtmlEscaped());
    return out;
}

} // namespace

CompareDialog::CompareDialog(QWidget* parent)
    : QDialog(parent)
    , m_model(new CompareKernelModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_verdict(new QLabel(this))
    , m_why(new QLabel(this))
    , m_anyway(new QCheckBox(this))
    , m_tabs(new QTabWidget(this))
    , m_summary(readOnlyTable(this))
    , m_chart(new QChartView(this))
    , m_filter(new QLineEdit(this))
    , m_kernels(new QTableView(this))
    , m_findings(readOnlyTable(this))
    , m_environment(readOnlyTable(this)) {
    setObjectName(QStringLiteral("compareDialog"));
    setWindowTitle(tr("Compare runs"));
    resize(1200, 820);
    m_verdict->setObjectName(QStringLiteral("compareVerdict"));
    m_verdict->setWordWrap(true);
    m_verdict->setTextFormat(Qt::RichText);
    m_verdict->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_why->setWordWrap(true);
    m_why->setTextFormat(Qt::RichText);
    m_why->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_anyway->setText(tr("Compare anyway: judge the step time although the environment changed "
                         "(tuneup compare --allow-env-change)"));
    m_anyway->hide();
    m_proxy->setSourceModel(m_model);
    m_proxy->setSortRole(CompareKernelModel::SortRole);
    m_proxy->setFilterKeyColumn(CompareKernelModel::Name);
    m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    m_filter->setPlaceholderText(tr("Filter kernels by name"));
    m_filter->setClearButtonEnabled(true);
    m_kernels->setModel(m_proxy);
    m_kernels->setSortingEnabled(true);
    m_kernels->setAlternatingRowColors(true);
    m_kernels->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_kernels->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_kernels->setWordWrap(false);
    m_kernels->verticalHeader()->hide();
    m_kernels->verticalHeader()->setDefaultSectionSize(m_kernels->fontMetrics().height() + 6);
    m_kernels->horizontalHeader()->setSectionResizeMode(CompareKernelModel::Name, QHeaderView::Stretch);
    m_chart->setRenderHint(QPainter::Antialiasing);
    m_chart->setMinimumHeight(170);

    auto* steps = new QSplitter(Qt::Vertical, this);
    steps->addWidget(m_summary);
    steps->addWidget(m_chart);
    steps->setSizes({ 330, 260 });
    auto* kernels = new QWidget(this);
    auto* kernelLayout = new QVBoxLayout(kernels);
    kernelLayout->setContentsMargins(0, 0, 0, 0);
    kernelLayout->addWidget(new QLabel(tr("The kernels whose time per step moved most, each judged per call "
                                          "(a window holding fewer layers is not a faster kernel)"),
        kernels));
    kernelLayout->addWidget(m_filter);
    kernelLayout->addWidget(m_kernels);
    m_tabs->addTab(steps, tr("Step time"));
    m_tabs->addTab(kernels, tr("Kernels"));
    m_tabs->addTab(m_findings, tr("Findings"));
    m_tabs->addTab(m_environment, tr("Environment"));

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(m_verdict);
    layout->addWidget(m_why);
    layout->addWidget(m_anyway);
    layout->addWidget(m_tabs, 1);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
    connect(m_anyway, &QCheckBox::toggled, this, &CompareDialog::setAllowEnvChange);
}

void CompareDialog::setComparison(Comparison comparison) {
    m_model->setResult(nullptr); // it points into the comparison being replaced
    m_comparison = std::move(comparison);
    setWindowTitle(
        tr("Compare: BASE = %1, NEW = %2")
            .arg(QString::fromStdString(m_comparison.baseLabel), QString::fromStdString(m_comparison.newLabel)));
    const QSignalBlocker quiet(m_anyway);
    m_anyway->setChecked(m_comparison.runs && m_comparison.runs->options().allowEnvChange);
    refresh();
}

void CompareDialog::setAllowEnvChange(bool allow) {
    if (!m_comparison.runs || m_comparison.runs->options().allowEnvChange == allow) return;
    m_model->setResult(nullptr);
    CompareOptions options = m_comparison.runs->options();
    options.allowEnvChange = allow;
    m_comparison.runs->recompare(options);
    const QSignalBlocker quiet(m_anyway);
    m_anyway->setChecked(allow);
    refresh();
}

void CompareDialog::refresh() {
    fillVerdict();
    const CompareResult* r = m_comparison.result();
    m_model->setResult(r);
    if (!r) {
        clearCompareTables(m_summary, m_chart, m_findings, m_environment);
        return;
    }
    m_kernels->sortByColumn(-1, Qt::AscendingOrder); // the comparison's order: largest move per step first
    for (int c = CompareKernelModel::Class; c < CompareKernelModel::ColumnCount; ++c)
        m_kernels->resizeColumnToContents(c);
    fillStepTable(m_summary, *r);
    fillBreakdownChart(m_chart, *r);
    fillFindingsTable(m_findings, *r);
    fillEnvironmentTable(m_environment, *r);
    m_tabs->setTabText(2, tr("Findings (%1 appeared, %2 resolved)").arg(r->appeared.size()).arg(r->resolved.size()));
    m_tabs->setTabText(3, r->environment.changed.empty() ? tr("Environment") : tr("Environment (changed)"));
}

void CompareDialog::fillVerdict() {
    const CompareResult* r = m_comparison.result();
    m_anyway->setVisible(m_comparison.environmentChanged());
    if (!r) {
        m_verdict->setText(tr("<span style='font-size:large'><b style='color:#c03030'>Cannot compare</b></span>"));
        m_why->setText(QString::fromStdString(m_comparison.error).toHtmlEscaped());
        return;
    }
    // The same words as `tuneup compare`: the headline, then the sentence that says why this verdict.
    m_verdict->setText(QStringLiteral("<span style='font-size:large'><b style='color:%1'>%2</b>: %3</span><br>%4")
                           .arg(verdictColour(r->verdict), verdictWord(r->verdict),
                               QString::fromStdString(stepTimeHeadline(*r)).toHtmlEscaped(),
                               QString::fromStdString(verdictSentence(*r)).toHtmlEscaped()));
    QString why;
    if (r->verdict == Verdict::Incomparable) {
        std::vector<std::string> changes;
        for (const EnvironmentChange& c : r->environment.changed)
            changes.push_back(std::string(environmentLabel(c.key)) + ": " + c.base + " -> " + c.now);
        why += tr("<b>What changed</b> (a different machine, not a change of the program):<ul>%1</ul>")
                   .arg(bullets(changes));
    } else if (!r->causes.empty())
        why += tr("<b>Why</b><ul>%1</ul>").arg(bullets(r->causes));
    if (r->verdict != Verdict::Incomparable && !r->environment.changed.empty())
        why += tr("<b>Compared anyway</b>: the environment changed (the Environment tab says what).<br>");
    if (!r->notes.empty()) why += tr("<span style='color:#606060'>Notes<ul>%1</ul></span>").arg(bullets(r->notes));
    m_why->setText(why);
}

} // namespace tuneup::gui
