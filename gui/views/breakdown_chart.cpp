#include "views/breakdown_chart.h"

#include "report/report_helpers.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QLegend>
#include <QStackedBarSeries>
#include <QValueAxis>
#include <algorithm>
#include <memory>

namespace tuneup::gui {

using namespace analysis;

namespace {

QString q(std::string_view s) {
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

} // namespace

std::vector<size_t> sampleEvenly(size_t total, size_t n) {
    std::vector<size_t> out;
    if (total == 0 || n == 0) return out;
    if (total <= n) {
        for (size_t i = 0; i < total; ++i)
            out.push_back(i);
        return out;
    }
    for (size_t i = 0; i < n; ++i) {
        const size_t at = n == 1 ? 0 : (i * (total - 1) + (n - 1) / 2) / (n - 1);
        if (out.empty() || out.back() != at) out.push_back(at);
    }
    return out;
}

BreakdownChart::BreakdownChart(QWidget* parent)
    : QChartView(parent) {
    setObjectName(QStringLiteral("breakdownChart"));
    setRenderHint(QPainter::Antialiasing);
    setMinimumHeight(160);
}

void BreakdownChart::setSession(std::shared_ptr<const Session> session) {
    m_session = std::move(session);
    m_steps.clear();
    auto* chart = new QChart();
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setAlignment(Qt::AlignRight);
    chart->setMargins(QMargins(4, 4, 4, 4));
    // The view owns the new chart but hands the previous one back (QChartView::setChart): delete it.
    std::unique_ptr<QChart> previous(QChartView::chart());
    setChart(chart);
    const StepAnalysis* steps = m_session ? m_session->steps() : nullptr;
    if (!steps) {
        chart->setTitle(m_session ? tr("No training steps found: %1")
                                        .arg(QString::fromStdString(m_session->report().ranks.empty()
                                                ? std::string()
                                                : m_session->report().ranks.front().steps.detection.detail))
                                  : QString());
        return;
    }
    m_steps = sampleEvenly(steps->perStep.size(), kMaxBars);
    auto* series = new QStackedBarSeries();
    series->setBarWidth(0.8);
    QStringList categories { tr("median") };
    for (size_t i : m_steps)
        categories << QString::number(steps->detection.steps[i].number);
    double highest = double(steps->median.stepNs);
    for (size_t i : m_steps)
        highest = std::max(highest, double(steps->perStep[i].stepNs));
    // Without GPU activity nothing idled on a GPU: the host's time, in its own parts (no "GPU idle").
    for (const BreakdownPart& part : breakdownParts(*steps)) {
        // A run without CUDA graphs: no empty "inside CUDA graph replays" in the legend.
        const auto none = [&](const StepBreakdown& b) { return b.*part.field == 0; };
        if (part.key == "idle-graph" && none(steps->median)
            && std::all_of(m_steps.begin(), m_steps.end(), [&](size_t i) { return none(steps->perStep[i]); }))
            continue;
        auto* set = new QBarSet(q(part.label));
        set->setColor(QColor(q(part.color)));
        set->setBorderColor(set->color());
        *set << double(steps->median.*part.field) / 1e6;
        for (size_t i : m_steps)
            *set << double(steps->perStep[i].*part.field) / 1e6;
        series->append(set);
        connect(set, &QBarSet::clicked, this, [this](int index) {
            if (index >= 1 && size_t(index - 1) < m_steps.size()) emit stepClicked(m_steps[size_t(index - 1)]);
        });
    }
    chart->addSeries(series);
    auto* x = new QBarCategoryAxis();
    x->append(categories);
    x->setTitleText(m_steps.size() < steps->perStep.size()
            ? tr("step (%1 of %2 shown, evenly spaced)").arg(m_steps.size()).arg(steps->perStep.size())
            : tr("step"));
    if (categories.size() > 25) x->setLabelsAngle(-90);
    auto* y = new QValueAxis();
    y->setTitleText(tr("ms"));
    y->setRange(0, highest / 1e6 * 1.05);
    y->applyNiceNumbers();
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    series->attachAxis(x);
    series->attachAxis(y);
    const QString cpuOnly = steps->gpuActivity() ? QString() : QStringLiteral(" — %1").arg(q(kCpuOnly));
    // Nothing marked steps: the one bar is the whole window, not a step (no median, no "1 steps").
    if (steps->detection.source == StepSource::WholeWindow) {
        x->setTitleText(tr("the whole window"));
        chart->setTitle(tr("No training steps found: the whole window (%1 s) as one span, its breakdown%2")
                            .arg(double(steps->medianStepNs()) / 1e9, 0, 'f', 2)
                            .arg(cpuOnly));
        return;
    }
    chart->setTitle(tr("Step time breakdown: median %1 ms over %2 steps (click a bar to show the step)%3")
                        .arg(double(steps->medianStepNs()) / 1e6, 0, 'f', 2)
                        .arg(steps->perStep.size())
                        .arg(cpuOnly));
}

} // namespace tuneup::gui
