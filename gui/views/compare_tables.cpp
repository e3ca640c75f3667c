#include "views/compare_tables.h"

#include "compare/compare_report.h"
#include "report/report_helpers.h"
#include "units.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLegend>
#include <QTableWidget>
#include <QValueAxis>
#include <cmath>
#include <memory>

namespace tuneup::gui {

using namespace analysis;

namespace {

const QColor kSlower(0xc0, 0x30, 0x30);
const QColor kFaster(0x2a, 0x8a, 0x3a);

QString qs(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

QString duration(int64_t ns) {
    return QString::fromStdString(formatDuration(ns));
}

QString signedDuration(int64_t ns) {
    return (ns > 0 ? QStringLiteral("+") : ns < 0 ? QStringLiteral("−") : QString()) + duration(std::llabs(ns));
}

QString milliseconds(double ms) {
    return duration(int64_t(std::llround(ms * 1e6)));
}

void setRow(QTableWidget* table, int row, const QStringList& cells, const QColor& colour = {}) {
    for (int c = 0; c < cells.size(); ++c) {
        auto* item = new QTableWidgetItem(cells[c]);
        if (c > 0 && table->property("rightFrom").toInt() <= c)
            item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        if (colour.isValid()) item->setForeground(colour);
        table->setItem(row, c, item);
    }
}

void reset(QTableWidget* table, const QStringList& headers, int rows, int rightFrom) {
    table->clear();
    table->setColumnCount(int(headers.size()));
    table->setHorizontalHeaderLabels(headers);
    table->setRowCount(rows);
    table->setProperty("rightFrom", rightFrom);
}

void fit(QTableWidget* table, int stretch) {
    table->resizeColumnsToContents();
    table->horizontalHeader()->setSectionResizeMode(stretch, QHeaderView::Stretch);
}

} // namespace

void fillStepTable(QTableWidget* table, const CompareResult& r) {
    const StepTimeComparison& s = r.stepTime;
    const int parts = r.breakdownRecorded ? int(r.breakdown.size()) : 1;
    reset(table,
        { QObject::tr("per step"), QObject::tr("BASE"), QObject::tr("NEW"), QObject::tr("Δ"),
            QObject::tr("NEW / BASE") },
        6 + parts, 1);
    const QColor stepColour = r.stepVerdict == Verdict::Regressed ? kSlower
        : r.stepVerdict == Verdict::Improved                      ? kFaster
                                                                  : QColor();
    const bool measured = s.ratio > 0;
    setRow(table, 0,
        { QObject::tr("median step"), measured ? milliseconds(s.baseMs) : QStringLiteral("—"),
            measured ? milliseconds(s.newMs) : QStringLiteral("—"),
            measured ? signedDuration(std::llround((s.newMs - s.baseMs) * 1e6)) : QString(),
            measured ? QString::fromStdString(ratioText(s.ratio)) : QStringLiteral("—") },
        stepColour);
    setRow(table, 1,
        { QObject::tr("%1 interval").arg(QString::fromStdString(formatPercent(s.confidence))), {}, {}, {},
            QString::fromStdString(ratioIntervalText(s)) });
    setRow(table, 2,
        { QObject::tr("threshold (%1)").arg(QString::fromStdString(s.thresholdFrom)), {}, {}, {},
            QStringLiteral("±%1").arg(QString::fromStdString(formatPercent(s.threshold))) });
    setRow(
        table, 3, { QObject::tr("measured steps"), QString::number(s.baseSteps), QString::number(s.newSteps), {}, {} });
    setRow(table, 4,
        { QObject::tr("warm-up steps left out"), QString::number(r.base ? r.base->warmupSteps : 0),
            QString::number(r.now ? r.now->warmupSteps : 0), {}, {} });
    setRow(table, 5, { QObject::tr("rank test p"), {}, {}, {}, QString::number(s.pValue, 'g', 3) });
    if (!r.breakdownRecorded)
        setRow(table, 6, { QObject::tr("breakdown: neither run recorded GPU work"), {}, {}, {}, {} });
    else
        for (size_t i = 0; i < r.breakdown.size(); ++i) {
            const BreakdownDelta& b = r.breakdown[i];
            const QColor colour = partRegressed(r, b.baseNs, b.newNs) ? kSlower : QColor();
            setRow(table, 6 + int(i),
                { QStringLiteral("  ") + QString::fromStdString(b.label), duration(b.baseNs), duration(b.newNs),
                    signedDuration(b.newNs - b.baseNs),
                    b.baseNs > 0 ? QString::fromStdString(ratioText(double(b.newNs) / double(b.baseNs)))
                                 : QStringLiteral("—") },
                colour);
        }
    fit(table, 0);
}

void fillBreakdownChart(QChartView* view, const CompareResult& r) {
    auto* chart = new QChart();
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->setMargins(QMargins(4, 4, 4, 4));
    chart->legend()->setAlignment(Qt::AlignRight);
    // The view owns the new chart but hands the previous one back (QChartView::setChart): delete it.
    std::unique_ptr<QChart> previous(view->chart());
    view->setChart(chart);
    if (!r.breakdownRecorded) {
        chart->setTitle(QObject::tr("No GPU work recorded: no breakdown to compare"));
        return;
    }
    auto* series = new QHorizontalStackedBarSeries();
    int64_t longest = 1;
    for (const BreakdownDelta& b : r.breakdown)
        for (const BreakdownPart& part : kBreakdownParts)
            if (part.key == b.key) {
                auto* set = new QBarSet(QString::fromStdString(b.label));
                set->setColor(QColor(qs(part.color)));
                set->setBorderColor(set->color());
                // Bottom to top: NEW then BASE, so that BASE reads first.
                *set << double(b.newNs) / 1e6 << double(b.baseNs) / 1e6;
                series->append(set);
            }
    if (r.base) longest = std::max(longest, r.base->perStep.stepNs);
    if (r.now) longest = std::max(longest, r.now->perStep.stepNs);
    chart->addSeries(series);
    auto* y = new QBarCategoryAxis();
    y->append({ QObject::tr("NEW"), QObject::tr("BASE") });
    auto* x = new QValueAxis();
    x->setTitleText(QObject::tr("mean measured step (ms)"));
    x->setRange(0, double(longest) / 1e6 * 1.05);
    x->applyNiceNumbers();
    chart->addAxis(y, Qt::AlignLeft);
    chart->addAxis(x, Qt::AlignBottom);
    series->attachAxis(y);
    series->attachAxis(x);
    chart->setTitle(QObject::tr("Where a step's time goes"));
}

void fillFindingsTable(QTableWidget* table, const CompareResult& r) {
    const size_t rows = r.appeared.size() + r.resolved.size() + r.persisting.size();
    reset(table,
        { QObject::tr("change"), QObject::tr("rule"), QObject::tr("severity"), QObject::tr("gain / step"),
            QObject::tr("finding") },
        int(rows), 3);
    int row = 0;
    const auto add = [&](const std::vector<FindingRef>& list, const QString& change, const QColor& colour) {
        for (const FindingRef& f : list)
            setRow(table, row++,
                { change, QString::fromStdString(f.ruleId), qs(severityName(f.severity)),
                    f.gainPerStepNs ? duration(f.gainPerStepNs) : QStringLiteral("—"),
                    QString::fromStdString(f.title) },
                colour);
    };
    add(r.appeared, QObject::tr("appeared"), kSlower);
    add(r.resolved, QObject::tr("resolved"), kFaster);
    add(r.persisting, QObject::tr("persisting"), {});
    fit(table, 4);
}

void fillEnvironmentTable(QTableWidget* table, const CompareResult& r) {
    std::vector<QStringList> rows;
    std::vector<bool> changed;
    for (const EnvironmentKey& k : kEnvironmentKeys) {
        const std::string a = environmentValue(r.baseEnvironment, k.key), b = environmentValue(r.newEnvironment, k.key);
        if (a.empty() && b.empty()) continue;
        const bool differs = !a.empty() && !b.empty() && a != b;
        rows.push_back({ qs(k.label), a.empty() ? QObject::tr("(not recorded)") : QString::fromStdString(a),
            b.empty() ? QObject::tr("(not recorded)") : QString::fromStdString(b),
            differs                      ? QObject::tr("changed: not comparable")
                : a.empty() || b.empty() ? QObject::tr("one side only: not compared")
                                         : QString() });
        changed.push_back(differs);
    }
    for (const SettingChange& s : r.settings) {
        rows.push_back({ QObject::tr("setting %1").arg(QString::fromStdString(s.key)),
            s.base.empty() ? QObject::tr("(not recorded)") : QString::fromStdString(s.base),
            s.now.empty() ? QObject::tr("(not recorded)") : QString::fromStdString(s.now),
            QObject::tr("changed by the program: a likely cause") });
        changed.push_back(false);
    }
    reset(
        table, { QObject::tr("fact"), QObject::tr("BASE"), QObject::tr("NEW"), QObject::tr("") }, int(rows.size()), 99);
    for (size_t i = 0; i < rows.size(); ++i)
        setRow(table, int(i), rows[i], changed[i] ? kSlower : QColor());
    fit(table, 3);
}

void clearCompareTables(QTableWidget* step, QChartView* chart, QTableWidget* findings, QTableWidget* environment) {
    for (QTableWidget* t : { step, findings, environment }) {
        t->clear();
        t->setRowCount(0);
        t->setColumnCount(0);
    }
    std::unique_ptr<QChart> previous(chart->chart());
    chart->setChart(new QChart());
}

} // namespace tuneup::gui
