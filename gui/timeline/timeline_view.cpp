// TimelineView: its state, the view range, selection, and mouse and keyboard input.

#include "timeline/timeline_view.h"

#include "timeline/event_info.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QScrollBar>
#include <QToolTip>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace tuneup::gui {

namespace {
constexpr double kKeyZoom = 0.7; // W/S: one press zooms by this much
constexpr double kKeyPan = 0.15; // A/D: one press pans this fraction of the width
constexpr int kDragThreshold = 4; // pixels before a press becomes a drag
} // namespace

TimelineView::TimelineView(QWidget* parent)
    : QWidget(parent)
    , m_scrollBar(new QScrollBar(Qt::Vertical, this)) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setAttribute(Qt::WA_OpaquePaintEvent); // every pixel is painted: no background fill by Qt first
    setMinimumSize(400, 120);
    m_scrollBar->hide();
    connect(m_scrollBar, &QScrollBar::valueChanged, this, [this](int value) {
        if (value == m_scrollY) return;
        m_scrollY = value;
        update();
    });
}

TimelineView::~TimelineView() = default;

void TimelineView::setSession(std::shared_ptr<const Session> session) {
    m_session = std::move(session);
    m_data = m_session ? &m_session->timeline : nullptr;
    m_selected = {};
    m_evidence.clear();
    m_evidenceSpans.clear();
    m_range.reset();
    m_collapsed.clear();
    m_scrollY = 0;
    relayout();
    if (!m_filterText.isEmpty())
        rebuildFilter();
    else
        m_filtered.clear();
    if (m_data) setVisibleRange(initialRange(*m_data));
    update();
}

TimeMapping TimelineView::mapping() const {
    return TimeMapping(m_visible, double(trackArea().width()));
}

void TimelineView::changeVisible(TimeRange range) {
    if (!m_data) return;
    // At most one nanosecond per pixel: deeper zoom shows nothing new.
    const int64_t minDuration = std::max<int64_t>(trackArea().width(), 100);
    range = clampVisible(range, m_data->span, minDuration);
    if (range == m_visible) return;
    m_visible = range;
    update();
    emit visibleRangeChanged(m_visible);
}

void TimelineView::setVisibleRange(TimeRange range) {
    changeVisible(range);
}

void TimelineView::fitAll() {
    if (m_data) changeVisible(padded(m_data->span, 0.01));
}

void TimelineView::zoomToSelection() {
    if (!m_data) return;
    if (m_range) {
        changeVisible(*m_range);
        return;
    }
    if (m_selected.valid())
        if (const auto span = eventSpan(*m_data, m_selected)) {
            changeVisible(padded(*span, 0.1));
            return;
        }
    // The evidence of the chosen finding: everything highlighted.
    std::optional<TimeRange> all;
    auto add = [&all](TimeRange r) {
        all = all ? TimeRange { std::min(all->startNs, r.startNs), std::max(all->endNs, r.endNs) } : r;
    };
    for (const EventId& id : m_evidence)
        if (const auto span = eventSpan(*m_data, id)) add(*span);
    for (const TimeRange& r : m_evidenceSpans)
        add(r);
    if (all) changeVisible(padded(*all, 0.05));
}

std::optional<double> TimelineView::cursorX() const {
    const QPoint pos = mapFromGlobal(QCursor::pos());
    if (!trackArea().contains(pos)) return std::nullopt;
    return double(pos.x() - trackArea().left());
}

void TimelineView::zoomBy(double factor) {
    const TimeMapping m = mapping();
    changeVisible(zoomAround(m, cursorX().value_or(m.widthPx() / 2), factor));
}

void TimelineView::panBy(double fractionOfWidth) {
    const TimeMapping m = mapping();
    changeVisible(panByPixels(m, fractionOfWidth * m.widthPx()));
}

void TimelineView::selectEvent(const EventId& id, bool scrollTo) {
    const EventId wanted = m_data && id.valid() ? m_data->canonical(id) : EventId {};
    if (scrollTo && m_data && wanted.valid())
        if (const auto place = m_data->place(wanted))
            if (const Row* row = laneRow(place->track, place->lane)) ensureRowVisible(*row);
    if (wanted == m_selected) return;
    m_selected = wanted;
    update();
    emit eventSelected(m_selected);
}

void TimelineView::setEvidence(const std::vector<EventId>& events, std::vector<TimeRange> spans) {
    m_evidence.clear();
    if (m_data)
        for (const EventId& id : events)
            m_evidence.push_back(m_data->canonical(id));
    m_evidenceSpans = std::move(spans);
    update();
}

void TimelineView::setSelectedRange(std::optional<TimeRange> range) {
    m_range = range;
    update();
}

QRectF TimelineView::eventRect(const EventId& id) const {
    if (!m_data) return {};
    const auto place = m_data->place(id);
    const auto span = eventSpan(*m_data, id);
    const Row* row = place ? laneRow(place->track, place->lane) : nullptr;
    if (!span || !row) return {};
    const TimeMapping m = mapping();
    const double x0 = trackArea().left() + m.toX(span->startNs);
    const double x1 = trackArea().left() + m.toX(span->endNs);
    return QRectF(x0, rowTop(*row), std::max(x1 - x0, 1.0), row->height);
}

std::optional<EventId> TimelineView::eventAt(QPoint pos, uint32_t* folded) const {
    if (!m_data || !trackArea().contains(pos)) return std::nullopt;
    const Row* row = rowAt(pos.y());
    if (!row || row->type != Row::Lane) return std::nullopt;
    const Lane& lane = m_data->tracks[row->track].lanes[row->lane];
    const TimeMapping m = mapping();
    const double x = pos.x() - trackArea().left();
    // Two pixels either side: thin boxes are hard to hit exactly.
    const TimeRange near { m.toTime(x - 2), m.toTime(x + 2) + 1 };
    const IndexRange hits = eventsIn(lane.starts, lane.ends, near);
    if (hits.size() == 0) return std::nullopt;
    // The event under the cursor itself if there is one, else the nearest; look at a bounded number,
    // as a folded box may hide thousands.
    const int64_t t = m.toTime(x);
    size_t best = hits.first;
    int64_t bestDistance = INT64_MAX;
    const size_t last = std::min(hits.last, hits.first + 256);
    for (size_t i = hits.first; i < last; ++i) {
        const int64_t d = t < lane.starts[i] ? lane.starts[i] - t : t > lane.ends[i] ? t - lane.ends[i] : 0;
        if (d < bestDistance) {
            bestDistance = d;
            best = i;
        }
    }
    if (folded) *folded = uint32_t(hits.size());
    return EventId { m_data->tracks[row->track].model, lane.sources[best], lane.rows[best] };
}

void TimelineView::resizeEvent(QResizeEvent*) {
    updateScrollBar();
}

void TimelineView::mousePressEvent(QMouseEvent* event) {
    setFocus(Qt::MouseFocusReason);
    m_pressPos = m_lastPos = event->position().toPoint();
    m_moved = false;
    const bool rangeDrag = event->button() == Qt::RightButton
        || (event->button() == Qt::LeftButton && (event->modifiers() & Qt::ShiftModifier));
    if (rangeDrag && trackArea().contains(m_pressPos)) {
        m_drag = Drag::Range;
        m_rangeAnchor = mapping().toTime(m_pressPos.x() - trackArea().left());
    } else if (event->button() == Qt::LeftButton) {
        m_drag = Drag::Pan;
    }
}

void TimelineView::mouseMoveEvent(QMouseEvent* event) {
    const QPoint pos = event->position().toPoint();
    if (m_drag != Drag::None && (pos - m_pressPos).manhattanLength() >= kDragThreshold) m_moved = true;
    if (m_drag == Drag::Pan && m_moved) {
        const QPoint delta = pos - m_lastPos;
        if (delta.x()) changeVisible(panByPixels(mapping(), -delta.x()));
        if (delta.y()) {
            m_scrollY = std::clamp(m_scrollY - delta.y(), 0, m_scrollBar->maximum());
            m_scrollBar->setValue(m_scrollY);
            update();
        }
        setCursor(Qt::ClosedHandCursor);
    } else if (m_drag == Drag::Range && m_moved) {
        const int64_t t
            = mapping().toTime(std::clamp(pos.x(), trackArea().left(), trackArea().right()) - trackArea().left());
        m_range = TimeRange { std::min(t, m_rangeAnchor), std::max(t, m_rangeAnchor) };
        update();
    }
    m_lastPos = pos;
}

void TimelineView::mouseReleaseEvent(QMouseEvent* event) {
    const QPoint pos = event->position().toPoint();
    const Drag drag = std::exchange(m_drag, Drag::None);
    unsetCursor();
    if (m_moved) return;
    if (drag == Drag::Range && event->button() == Qt::RightButton) {
        setSelectedRange(std::nullopt);
        return;
    }
    if (event->button() != Qt::LeftButton) return;
    // A click on a track's title folds or unfolds its nested rows.
    if (pos.x() < kLabelWidth) {
        const Row* row = rowAt(pos.y());
        if (row && row->type == Row::Lane && !row->pinned && m_data->tracks[row->track].lanes.size() > 1)
            setCollapsed(row->track, !m_collapsed[row->track]);
        return;
    }
    const auto hit = eventAt(pos);
    selectEvent(hit.value_or(EventId {}), false);
}

void TimelineView::mouseDoubleClickEvent(QMouseEvent* event) {
    if (const auto hit = eventAt(event->position().toPoint())) {
        selectEvent(*hit, false);
        if (const auto span = eventSpan(*m_data, *hit)) changeVisible(padded(*span, 0.1));
    }
}

void TimelineView::wheelEvent(QWheelEvent* event) {
    const QPoint angle = event->angleDelta();
    if (event->modifiers() & Qt::ShiftModifier) {
        // Shift+wheel scrolls the tracks (some systems turn it into a horizontal delta).
        const int dy = angle.y() ? angle.y() : angle.x();
        m_scrollY = std::clamp(m_scrollY - dy / 2, 0, m_scrollBar->maximum());
        m_scrollBar->setValue(m_scrollY);
        update();
    } else if (angle.y()) {
        // Plain or Ctrl+wheel zooms around the cursor: 120 (a notch) zooms by about 0.8.
        const double factor = std::pow(0.9981, double(angle.y()));
        const double x = std::clamp(event->position().x() - trackArea().left(), 0.0, double(trackArea().width()));
        changeVisible(zoomAround(mapping(), x, factor));
    } else if (angle.x()) {
        changeVisible(panByPixels(mapping(), -angle.x() / 2.0));
    }
    event->accept();
}

void TimelineView::keyPressEvent(QKeyEvent* event) {
    switch (event->key()) {
    case Qt::Key_W:
        zoomBy(kKeyZoom);
        break;
    case Qt::Key_S:
        zoomBy(1 / kKeyZoom);
        break;
    case Qt::Key_A:
    case Qt::Key_Left:
        panBy(-kKeyPan);
        break;
    case Qt::Key_D:
    case Qt::Key_Right:
        panBy(kKeyPan);
        break;
    case Qt::Key_F:
        fitAll();
        break;
    case Qt::Key_Z:
        zoomToSelection();
        break;
    case Qt::Key_Up:
        m_scrollBar->setValue(m_scrollY - kLaneHeight * 3);
        break;
    case Qt::Key_Down:
        m_scrollBar->setValue(m_scrollY + kLaneHeight * 3);
        break;
    case Qt::Key_PageUp:
        m_scrollBar->setValue(m_scrollY - m_scrollBar->pageStep());
        break;
    case Qt::Key_PageDown:
        m_scrollBar->setValue(m_scrollY + m_scrollBar->pageStep());
        break;
    case Qt::Key_Home:
        m_scrollBar->setValue(0);
        break;
    case Qt::Key_End:
        m_scrollBar->setValue(m_scrollBar->maximum());
        break;
    case Qt::Key_Escape:
        if (m_range)
            setSelectedRange(std::nullopt);
        else
            selectEvent({}, false);
        break;
    default:
        QWidget::keyPressEvent(event);
        return;
    }
    event->accept();
}

bool TimelineView::event(QEvent* event) {
    if (event->type() != QEvent::ToolTip) return QWidget::event(event);
    auto* help = static_cast<QHelpEvent*>(event);
    uint32_t folded = 0;
    const auto hit = m_data ? eventAt(help->pos(), &folded) : std::nullopt;
    if (!hit) {
        QToolTip::hideText();
        event->ignore();
        return true;
    }
    const EventInfo info = describeEvent(*m_data, *hit);
    QString text
        = QStringLiteral("<b>%1</b><br>%2 · %3")
              .arg(QString::fromStdString(info.name).toHtmlEscaped().left(300), QString::fromStdString(info.kind),
                  QString::fromStdString(formatDuration(info.span.duration())));
    if (hit->source == Source::IdleGap) {
        // What the host did while the GPU sat idle, the largest part first: the question a gap raises.
        const analysis::StepAnalysis& steps = *m_data->steps(hit->model);
        const analysis::IdleGap& gap = steps.gaps[size_t(hit->row)];
        const std::string cause = analysis::describeIdleGap(
            gap, steps.hostStateDuring(size_t(hit->row)), m_data->model(hit->model).info.machine);
        text = QStringLiteral("<b>GPU idle %1</b> — %2")
                   .arg(QString::fromStdString(formatDuration(gap.span.durationNs())),
                       QString::fromStdString(cause).toHtmlEscaped());
        for (const auto& [label, value] : info.fields)
            if (value != "0 ns")
                text += QStringLiteral("<br>%1: %2").arg(QString::fromStdString(label), QString::fromStdString(value));
    }
    if (!info.track.empty())
        text += QStringLiteral("<br><i>%1</i>").arg(QString::fromStdString(info.track).toHtmlEscaped());
    if (folded > 1) text += QStringLiteral("<br>%1 events under the cursor: zoom in to tell them apart").arg(folded);
    QToolTip::showText(help->globalPos(), text, this);
    return true;
}

} // namespace tuneup::gui
