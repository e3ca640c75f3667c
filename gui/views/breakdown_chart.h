#pragma once
// Where each step's time goes, as stacked bars: GPU compute, communication, copies, memset, and idle
// time by cause, in the colours of the reports (report_helpers.h kBreakdownParts); for a trace without
// GPU activity, the host's time (waiting for data or not) under "CPU only". The median step first, then
// the steps (evenly sampled when there are more than fit). Clicking a bar shows that step.

#include "app/session.h"

#include <QChartView>
#include <vector>

namespace tuneup::gui {

class BreakdownChart : public QChartView {
    Q_OBJECT
public:
    static constexpr size_t kMaxBars = 60;

    explicit BreakdownChart(QWidget* parent = nullptr);
    void setSession(std::shared_ptr<const Session> session);
    // The steps shown, as indices into the first file's steps (after the median bar).
    const std::vector<size_t>& shownSteps() const { return m_steps; }

signals:
    void stepClicked(size_t step);

private:
    std::shared_ptr<const Session> m_session;
    std::vector<size_t> m_steps;
};

// `n` items sampled evenly from `total` (all when total <= n), first and last included.
std::vector<size_t> sampleEvenly(size_t total, size_t n);

} // namespace tuneup::gui
