// TimelineView's painting: the ruler, step bands, lanes from their level-of-detail boxes, labels, and
// overlays (evidence, search matches, selection, selected range). Only visible rows are visited and
// each lane costs O(boxes · log n), so a paint does not grow with the trace.

#include "timeline/event_info.h"
#include "timeline/timeline_view.h"

#include <QPaintEvent>
#include <QPainter>
#include <algorithm>
#include <chrono>

namespace tuneup::gui {

namespace {

const QColor kBackground(0xff, 0xff, 0xff);
const QColor kLabelBackground(0xf4, 0xf5, 0xf7);
const QColor kRulerBackground(0xe9, 0xeb, 0xee);
const QColor kGrid(0x00, 0x00, 0x00, 0x18);
const QColor kStepBand(0x4e, 0x79, 0xa7, 0x0d);
const QColor kEvidenceBand(0xff, 0xd4, 0x00, 0x50);
const QColor kEvidenceOutline(0xe6, 0x00, 0x7e);
const QColor kRangeBand(0x2f, 0x6f, 0xd6, 0x30);

QColor color(EventKind kind) {
    return QColor::fromRgb(kindStyle(kind).rgb);
}

// Faded towards white: what does not match a search.
QColor faded(const QColor& c) {
    return QColor((c.red() + 3 * 255) / 4, (c.green() + 3 * 255) / 4, (c.blue() + 3 * 255) / 4);
}

QColor textOn(const QColor& fill) {
    return qGray(fill.rgb()) > 140 ? QColor(0x20, 0x20, 0x20) : QColor(0xff, 0xff, 0xff);
}

} // namespace

void TimelineView::paintEvent(QPaintEvent*) {
    const auto started = std::chrono::steady_clock::now();
    QPainter p(this);
    p.fillRect(rect(), kBackground);
    const QRect area = trackArea();
    if (!m_data) {
        p.setPen(QColor(0x70, 0x70, 0x70));
        p.drawText(rect(), Qt::AlignCenter, tr("Open a tuneup recording or a PyTorch profiler trace (Ctrl+O)"));
        return;
    }
    const TimeMapping m = mapping();

    // Scrolled rows, clipped below the pinned ones, then the pinned ones.
    const int scrolledTop = kRulerHeight + m_pinnedHeight;
    paintStepBands(p, m, scrolledTop, area.bottom());
    // The chosen finding's time spans, under the events so that their colours stay true.
    for (const TimeRange& r : m_evidenceSpans)
        if (r.overlaps(m.visible())) {
            const double x0 = std::max(-1.0, m.toX(r.startNs)), x1 = std::min(m.widthPx() + 1, m.toX(r.endNs));
            p.fillRect(QRectF(area.left() + x0, kRulerHeight, std::max(x1 - x0, 2.0), area.bottom() - kRulerHeight + 1),
                kEvidenceBand);
        }
    p.save();
    p.setClipRect(QRect(QPoint(area.left(), scrolledTop), area.bottomRight()));
    for (const Row& row : m_rows) {
        if (row.pinned || row.type != Row::Lane) continue;
        const int y = rowTop(row);
        if (y + row.height < scrolledTop) continue;
        if (y > area.bottom()) break;
        paintLane(p, m, row, y);
    }
    p.restore();
    p.save();
    p.setClipRect(QRect(QPoint(area.left(), kRulerHeight), QPoint(area.right(), scrolledTop - 1)));
    for (const Row& row : m_rows)
        if (row.pinned) paintLane(p, m, row, rowTop(row));
    p.restore();
    if (m_pinnedHeight > 0) {
        p.setPen(QColor(0xc8, 0xcc, 0xd2));
        p.drawLine(0, scrolledTop - 1, width(), scrolledTop - 1);
    }
    paintOverlays(p, m);
    paintLabels(p);
    paintRuler(p, m);

    ++m_paints;
    m_lastPaintMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
}

void TimelineView::paintRuler(QPainter& p, const TimeMapping& m) {
    const QRect area = trackArea();
    p.fillRect(QRect(0, 0, width(), kRulerHeight), kRulerBackground);
    const QFontMetrics fm(font());
    // Room for the widest label the step may need.
    const int64_t step = tickStepNs(m.nsPerPx(), fm.horizontalAdvance(QStringLiteral("0.0000000 ms")) + 12);
    const int64_t origin = m_session->originNs();
    p.setPen(QColor(0x40, 0x40, 0x40));
    for (const int64_t t : tickTimes(m.visible(), step, origin)) {
        const int x = area.left() + int(m.toX(t));
        p.drawLine(x, kRulerHeight - 6, x, kRulerHeight - 1);
        p.drawText(QRect(x + 3, 0, 200, kRulerHeight - 4), Qt::AlignLeft | Qt::AlignVCenter,
            QString::fromStdString(formatTickLabel(t - origin, step)));
    }
    // Small ticks in between, five per step.
    p.setPen(QColor(0x90, 0x90, 0x90));
    for (const int64_t t : tickTimes(m.visible(), std::max<int64_t>(step / 5, 1), origin)) {
        const int x = area.left() + int(m.toX(t));
        p.drawLine(x, kRulerHeight - 3, x, kRulerHeight - 1);
    }
    // The left corner says what is shown: the visible span.
    p.fillRect(QRect(0, 0, kLabelWidth, kRulerHeight), kRulerBackground);
    p.setPen(QColor(0x30, 0x30, 0x30));
    p.drawText(QRect(6, 0, kLabelWidth - 12, kRulerHeight), Qt::AlignLeft | Qt::AlignVCenter,
        tr("%1 shown").arg(QString::fromStdString(formatDuration(m.visible().duration()))));
    if (m_range) { // the selected range's length, on the ruler
        const double x0 = area.left() + m.toX(m_range->startNs), x1 = area.left() + m.toX(m_range->endNs);
        const QString text = QString::fromStdString(formatDuration(m_range->duration()));
        const QRectF box(
            (x0 + x1) / 2 - fm.horizontalAdvance(text) / 2.0 - 4, 2, fm.horizontalAdvance(text) + 8, kRulerHeight - 4);
        p.fillRect(box, QColor(0x2f, 0x6f, 0xd6));
        p.setPen(Qt::white);
        p.drawText(box, Qt::AlignCenter, text);
    }
    p.setPen(QColor(0xc8, 0xcc, 0xd2));
    p.drawLine(0, kRulerHeight - 1, width(), kRulerHeight - 1);
}

void TimelineView::paintStepBands(QPainter& p, const TimeMapping& m, int top, int bottom) {
    // Every other step shaded across the scrolled tracks, so that a kernel's step is seen at a glance.
    const auto it = std::find_if(
        m_data->tracks.begin(), m_data->tracks.end(), [](const Track& t) { return t.type == TrackType::Steps; });
    if (it == m_data->tracks.end() || it->lanes.empty()) return;
    const Lane& steps = it->lanes[0];
    mergeUnderPixel(steps.starts, steps.ends, m.visible(), int64_t(m.nsPerPx() * 4) + 1, m_boxes);
    const int left = trackArea().left();
    for (const LodBox& b : m_boxes) {
        if (b.count != 1 || (b.first & 1)) continue;
        const double x0 = std::max(0.0, m.toX(b.startNs)), x1 = std::min(m.widthPx(), m.toX(b.endNs));
        p.fillRect(QRectF(left + x0, top, x1 - x0, bottom - top + 1), kStepBand);
    }
}

void TimelineView::paintLane(QPainter& p, const TimeMapping& m, const Row& row, int y) {
    const Track& track = m_data->tracks[row.track];
    if (track.type == TrackType::Memory) {
        paintMemoryLane(p, m, row, y);
        return;
    }
    const Lane& lane = track.lanes[row.lane];
    const bool filtering = !m_filterText.isEmpty();
    const double left = trackArea().left();
    const double h = row.height - 2;
    const QFontMetrics fm(font());
    mergeUnderPixel(lane.starts, lane.ends, m.visible(), int64_t(m.nsPerPx()) + 1, m_boxes);
    for (const LodBox& b : m_boxes) {
        const double x0 = std::max(-1.0, m.toX(b.startNs));
        const double x1 = std::min(m.widthPx() + 1, m.toX(b.endNs));
        const double w = std::max(x1 - x0, 1.0);
        QColor c = color(lane.kinds[b.representative]);
        if (filtering) c = faded(c);
        const QRectF box(left + x0, y + 1, w, h);
        p.fillRect(box, c);
        // Names in boxes wide enough to read one: single events only (a folded box has no one name).
        if (b.count == 1 && w > 40 && !filtering) {
            p.setPen(textOn(c));
            const QString name = QString::fromUtf8(m_data->name(track.model, lane.names[b.first]).data(),
                qsizetype(m_data->name(track.model, lane.names[b.first]).size()));
            p.drawText(box.adjusted(3, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter,
                fm.elidedText(name, Qt::ElideRight, int(w) - 5));
        }
    }
    // Search matches over the faded lane, in their colours, with their own level of detail.
    if (filtering && row.track < m_filtered.size() && row.lane < m_filtered[row.track].size()) {
        const FilteredLane& f = m_filtered[row.track][row.lane];
        mergeUnderPixel(f.starts, f.ends, m.visible(), int64_t(m.nsPerPx()) + 1, m_boxes);
        for (const LodBox& b : m_boxes) {
            const double x0 = std::max(-1.0, m.toX(b.startNs));
            const double x1 = std::min(m.widthPx() + 1, m.toX(b.endNs));
            const double w = std::max(x1 - x0, 2.0);
            const uint32_t i = f.index[b.representative];
            const QColor c = color(lane.kinds[i]);
            const QRectF box(left + x0, y + 1, w, h);
            p.fillRect(box, c);
            if (b.count == 1 && w > 40) {
                p.setPen(textOn(c));
                const std::string_view n = m_data->name(track.model, lane.names[i]);
                p.drawText(box.adjusted(3, 0, -2, 0), Qt::AlignLeft | Qt::AlignVCenter,
                    fm.elidedText(QString::fromUtf8(n.data(), qsizetype(n.size())), Qt::ElideRight, int(w) - 5));
            }
        }
    }
}

// A memory track: the allocated level filled from the bottom, the reserved level as a line above it; a
// box folding many events shows their highest levels.
void TimelineView::paintMemoryLane(QPainter& p, const TimeMapping& m, const Row& row, int y) {
    const Track& track = m_data->tracks[row.track];
    const Lane& lane = track.lanes[row.lane];
    const MemoryLevels& levels = track.memory;
    const double left = trackArea().left();
    const double bottom = y + row.height - 1, height = row.height - 3;
    auto top = [&](int64_t bytes) { return bottom - height * double(bytes) / double(levels.scaleBytes); };
    QColor fill = color(EventKind::Memory);
    if (!m_filterText.isEmpty()) fill = faded(fill);
    const QColor line = fill.darker(150);
    mergeUnderPixel(lane.starts, lane.ends, m.visible(), int64_t(m.nsPerPx()) + 1, m_boxes);
    for (const LodBox& b : m_boxes) {
        int64_t allocated = 0, reserved = -1;
        for (uint32_t i = b.first; i < b.first + b.count; ++i) {
            allocated = std::max(allocated, levels.allocated[i]);
            reserved = std::max(reserved, levels.reserved[i]);
        }
        const double x0 = left + std::max(-1.0, m.toX(b.startNs));
        const double x1 = left + std::min(m.widthPx() + 1, m.toX(b.endNs));
        const double w = std::max(x1 - x0, 1.0);
        p.fillRect(QRectF(x0, top(allocated), w, bottom - top(allocated)), fill);
        if (reserved >= 0) p.fillRect(QRectF(x0, top(reserved), w, 1.5), line);
    }
    // The allocator's peak of each step: a bar across the step at its level (allocated, else reserved).
    const QColor bar = m_filterText.isEmpty() ? QColor(kMemoryPeakRgb) : faded(QColor(kMemoryPeakRgb));
    const TimeRange visible = m.visible();
    for (const WindowPeak& w : levels.windowPeaks) {
        if (w.startNs > visible.endNs) break;
        const int64_t level = w.allocated >= 0 ? w.allocated : w.reserved;
        if (w.endNs < visible.startNs || level < 0) continue;
        const double x0 = left + std::max(-1.0, m.toX(w.startNs));
        const double x1 = left + std::min(m.widthPx() + 1, m.toX(w.endNs));
        p.fillRect(QRectF(x0, top(level) - 1, std::max(x1 - x0, 1.0), 2), bar);
    }
}

void TimelineView::paintLabels(QPainter& p) {
    const int scrolledTop = kRulerHeight + m_pinnedHeight;
    p.fillRect(QRect(0, kRulerHeight, kLabelWidth, height() - kRulerHeight), kLabelBackground);
    const QFontMetrics fm(font());
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics boldMetrics(bold);
    auto paintRow = [&](const Row& row) {
        const int y = rowTop(row);
        const Track& track = m_data->tracks[row.track];
        if (row.type == Row::Heading) {
            // The heading spans the track area too, as a thin band.
            p.fillRect(QRect(0, y, width(), row.height), QColor(0xe3, 0xe7, 0xed));
            p.setFont(bold);
            p.setPen(QColor(0x20, 0x30, 0x40));
            p.drawText(QRect(6, y, width() - 12, row.height), Qt::AlignLeft | Qt::AlignVCenter,
                boldMetrics.elidedText(QString::fromStdString(track.group), Qt::ElideMiddle, width() - 12));
            p.setFont(font());
            return;
        }
        if (row.lane != 0) return;
        if (track.type == TrackType::Memory && !track.memory.detail.empty()) { // two lines: title, detail
            p.setPen(QColor(0x30, 0x30, 0x30));
            p.drawText(QRect(6, y + 2, kLabelWidth - 10, kLaneHeight), Qt::AlignLeft | Qt::AlignVCenter,
                fm.elidedText(QString::fromStdString(track.title), Qt::ElideRight, kLabelWidth - 10));
            p.setPen(QColor(0x70, 0x70, 0x70));
            p.drawText(QRect(18, y + 2 + kLaneHeight, kLabelWidth - 22, kLaneHeight), Qt::AlignLeft | Qt::AlignVCenter,
                fm.elidedText(QString::fromStdString(track.memory.detail), Qt::ElideRight, kLabelWidth - 22));
            return;
        }
        QString title = QString::fromStdString(track.title);
        if (track.lanes.size() > 1 && !row.pinned)
            title = (m_collapsed[row.track] ? QStringLiteral("▸ ") : QStringLiteral("▾ ")) + title;
        p.setPen(QColor(0x30, 0x30, 0x30));
        p.drawText(QRect(6, y, kLabelWidth - 10, row.height), Qt::AlignLeft | Qt::AlignVCenter,
            fm.elidedText(title, Qt::ElideRight, kLabelWidth - 10));
        if (row.pinned && track.lanes.size() > 1) {
            p.setPen(QColor(0x70, 0x70, 0x70));
            p.drawText(QRect(18, y + row.height, kLabelWidth - 22, row.height), Qt::AlignLeft | Qt::AlignVCenter,
                tr("GPU idle"));
        }
    };
    p.save();
    p.setClipRect(QRect(0, scrolledTop, width(), height() - scrolledTop));
    for (const Row& row : m_rows) {
        if (row.pinned) continue;
        const int y = rowTop(row);
        if (y + row.height < scrolledTop) continue;
        if (y > height()) break;
        paintRow(row);
    }
    p.restore();
    for (const Row& row : m_rows)
        if (row.pinned) paintRow(row);
    p.setPen(QColor(0xc8, 0xcc, 0xd2));
    p.drawLine(kLabelWidth - 1, kRulerHeight, kLabelWidth - 1, height());
}

void TimelineView::paintOverlays(QPainter& p, const TimeMapping& m) {
    const QRect area = trackArea();
    p.save();
    p.setClipRect(area);
    auto band = [&](const TimeRange& r, const QColor& c) {
        const double x0 = std::max(-1.0, m.toX(r.startNs)), x1 = std::min(m.widthPx() + 1, m.toX(r.endNs));
        if (x1 >= 0 && x0 <= m.widthPx())
            p.fillRect(QRectF(area.left() + x0, area.top(), std::max(x1 - x0, 2.0), area.height()), c);
    };
    if (m_range) band(*m_range, kRangeBand);
    // Evidence events framed in magenta, the selection in black; at least 3 px wide so that a short
    // kernel under a wide view is still found. Cut to the track area first: the raster engine's fixed-point
    // coordinates overflow for an event millions of pixels away.
    auto visibleRect = [&](const EventId& id) -> QRectF {
        QRectF r = eventRect(id);
        if (r.isNull() || r.right() < area.left() - 2 || r.left() > area.right() + 2 || r.bottom() < area.top())
            return {};
        r.setLeft(std::max(r.left(), double(area.left() - 2)));
        r.setRight(std::min(r.right(), double(area.right() + 2)));
        if (r.width() < 3) r.adjust(-(3 - r.width()) / 2, 0, (3 - r.width()) / 2, 0);
        return r;
    };
    p.setRenderHint(QPainter::Antialiasing, false);
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(kEvidenceOutline, 2));
    for (const EventId& id : m_evidence)
        if (const QRectF r = visibleRect(id); !r.isNull()) p.drawRect(r.adjusted(0, 1, 0, -1));
    if (m_selected.valid())
        if (const QRectF r = visibleRect(m_selected); !r.isNull()) {
            p.setPen(QPen(Qt::black, 2));
            p.setBrush(QColor(0, 0, 0, 0x30));
            p.drawRect(r);
        }
    p.restore();
}

} // namespace tuneup::gui
