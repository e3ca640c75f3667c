#include "views/compare_dialog.h"

#include "models/compare_kernel_model.h"
#include "report/report_helpers.h"
#include "timeline/time_mapping.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QLegend>
#include <QLineEdit>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTableView>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <memory>

namespace tuneup::gui {

using namespace analysis;

CompareDialog::CompareDialog(QWidget* parent)
    : QDialog(parent)
    , m_model(new CompareKernelModel(this))
    , m_proxy(new QSortFilterProxyModel(this))
    , m_summary(new QTableWidget(this))
    , m_chart(new QChartView(this))
    , m_filter(new QLineEdit(this))
    , m_kernels(new QTableView(this)) {
    setObjectName(QStringLiteral("compareDialog"));
    setWindowTitle(tr("Compare runs"));
    resize(1200, 820);
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
    m_summary->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_summary->setSelectionMode(QAbstractItemView::NoSelection);
    m_summary->setFocusPolicy(Qt::NoFocus);
    m_summary->verticalHeader()->hide();
    m_summary->verticalHeader()->setDefaultSectionSize(m_summary->fontMetrics().height() + 6);
    m_summary->horizontalHeader()->setStretchLastSection(false);
    m_chart->setRenderHint(QPainter::Antialiasing);
    m_chart->setMinimumHeight(170);

    auto* top = new QSplitter(Qt::Horizontal, this);
    top->addWidget(m_summary);
    top->addWidget(m_chart);
    top->setStretchFactor(0, 1);
    top->setStretchFactor(1, 1);
    top->setSizes({ 520, 660 });
    auto* bottom = new QWidget(this);
    auto* bottomLayout = new QVBoxLayout(bottom);
    bottomLayout->setContentsMargins(0, 0, 0, 0);
    bottomLayout->addWidget(new QLabel(tr("<b>Kernels</b>, largest change first"), bottom));
    bottomLayout->addWidget(m_filter);
    bottomLayout->addWidget(m_kernels);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(top);
    split->addWidget(bottom);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 1);
    split->setSizes({ 360, 400 });
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(split);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_filter, &QLineEdit::textChanged, m_proxy, &QSortFilterProxyModel::setFilterFixedString);
}

const Comparison& CompareDialog::comparison() const {
    return m_model->comparison();
}

void CompareDialog::setComparison(Comparison comparison) {
    setWindowTitle(tr("Compare: A = %1, B = %2")
                       .arg(QString::fromStdString(comparison.aLabel), QString::fromStdString(comparison.bLabel)));
    m_model->setComparison(std::move(comparison));
    m_kernels->sortByColumn(-1, Qt::AscendingOrder); // the model's order: largest change first
    for (int c = CompareKernelModel::Class; c < CompareKernelModel::ColumnCount; ++c)
        m_kernels->resizeColumnToContents(c);
    fillSummary();
    fillChart();
}

void CompareDialog::fillSummary() {
    const Comparison& c = comparison();
    struct Line {
        QString label;
        int64_t a, b;
    };
    std::vector<Line> lines = {
        { tr("median step"), c.a.medianNs, c.b.medianNs },
        { tr("mean step"), c.a.meanNs, c.b.meanNs },
        { tr("10th percentile"), c.a.p10Ns, c.b.p10Ns },
        { tr("90th percentile"), c.a.p90Ns, c.b.p90Ns },
    };
    for (const BreakdownPart& part : kBreakdownParts)
        lines.push_back({ tr("  %1").arg(QString::fromUtf8(part.label.data(), qsizetype(part.label.size()))),
            c.a.median.*part.field, c.b.median.*part.field });
    m_summary->clear();
    m_summary->setColumnCount(5);
    m_summary->setHorizontalHeaderLabels({ tr("step time"), tr("A"), tr("B"), tr("Δ"), tr("change") });
    m_summary->setRowCount(int(lines.size()) + 1);
    auto cell = [this](int row, int column, const QString& text, bool right = true) {
        auto* item = new QTableWidgetItem(text);
        if (right) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        m_summary->setItem(row, column, item);
    };
    cell(0, 0, tr("steps"), false);
    cell(0, 1, QString::number(c.a.count));
    cell(0, 2, QString::number(c.b.count));
    for (size_t i = 0; i < lines.size(); ++i) {
        const int row = int(i) + 1;
        const Line& l = lines[i];
        cell(row, 0, l.label, false);
        cell(row, 1, c.a.count ? QString::fromStdString(formatDuration(l.a)) : QStringLiteral("—"));
        cell(row, 2, c.b.count ? QString::fromStdString(formatDuration(l.b)) : QStringLiteral("—"));
        if (c.a.count && c.b.count) {
            const int64_t d = l.b - l.a;
            cell(row, 3, QString::fromStdString((d > 0 ? "+" : d < 0 ? "−" : "") + formatDuration(d < 0 ? -d : d)));
            cell(row, 4, changeText(l.a, l.b));
            if (i == 0 && l.a > 0) { // the headline: the median step, coloured by direction
                const QColor colour = l.b > l.a * 101 / 100 ? QColor(0xc0, 0x30, 0x30)
                    : l.b < l.a * 99 / 100                  ? QColor(0x2a, 0x8a, 0x3a)
                                                            : QColor(0x30, 0x30, 0x30);
                for (int col = 3; col < 5; ++col) {
                    m_summary->item(row, col)->setForeground(colour);
                    QFont f = m_summary->font();
                    f.setBold(true);
                    m_summary->item(row, col)->setFont(f);
                }
            }
        }
    }
    m_summary->resizeColumnsToContents();
    m_summary->horizontalHeader()->setSectionResizeMode(0, QHeaderView::Stretch);
}

void CompareDialog::fillChart() {
    const Comparison& c = comparison();
    auto* chart = new QChart();
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->legend()->setAlignment(Qt::AlignRight);
    // The view owns the new chart but hands the previous one back (QChartView::setChart): delete it.
    std::unique_ptr<QChart> previous(m_chart->chart());
    m_chart->setChart(chart);
    if (!c.a.count && !c.b.count) {
        chart->setTitle(tr("Neither run has steps: kernels are compared over the whole trace"));
        return;
    }
    auto* series = new QHorizontalStackedBarSeries();
    for (const BreakdownPart& part : kBreakdownParts) {
        auto* set = new QBarSet(QString::fromUtf8(part.label.data(), qsizetype(part.label.size())));
        set->setColor(QColor(QString::fromUtf8(part.color.data(), qsizetype(part.color.size()))));
        set->setBorderColor(set->color());
        // Bottom to top: B then A, so that A reads first.
        *set << double(c.b.median.*part.field) / 1e6 << double(c.a.median.*part.field) / 1e6;
        series->append(set);
    }
    chart->addSeries(series);
    auto* y = new QBarCategoryAxis();
    y->append({ tr("B"), tr("A") });
    auto* x = new QValueAxis();
    x->setTitleText(tr("median step (ms)"));
    x->setRange(0, double(std::max({ c.a.median.stepNs, c.b.median.stepNs, int64_t(1) })) / 1e6 * 1.05);
    x->applyNiceNumbers();
    chart->addAxis(y, Qt::AlignLeft);
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(y);
    series->attachAxis(x);
    chart->setTitle(tr("Median step: A %1, B %2")
                        .arg(QString::fromStdString(formatDuration(c.a.medianNs)),
                            QString::fromStdString(formatDuration(c.b.medianNs))));
}

} // namespace tuneup::gui
