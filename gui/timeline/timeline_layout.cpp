// TimelineView's vertical layout: which lane is drawn at which height, the steps pinned under the
// ruler, headings where the process changes, and the vertical scroll bar.

#include "timeline/timeline_view.h"

#include <QScrollBar>
#include <algorithm>

namespace tuneup::gui {

namespace {
constexpr int kTrackGap = 3; // between tracks, so that neighbouring lanes of two tracks do not merge
}

void TimelineView::relayout() {
    m_rows.clear();
    m_rowOfLane.clear();
    m_pinnedHeight = 0;
    m_contentHeight = 0;
    if (!m_data) {
        updateScrollBar();
        return;
    }
    m_collapsed.resize(m_data->tracks.size(), false);
    m_rowOfLane.resize(m_data->tracks.size());
    // The steps tracks first, pinned.
    for (uint32_t t = 0; t < m_data->tracks.size(); ++t) {
        const Track& track = m_data->tracks[t];
        m_rowOfLane[t].assign(track.lanes.size(), -1);
        if (track.type != TrackType::Steps) continue;
        for (uint32_t l = 0; l < track.lanes.size(); ++l) {
            m_rowOfLane[t][l] = int(m_rows.size());
            m_rows.push_back({ Row::Lane, t, l, m_pinnedHeight, kLaneHeight, true });
            m_pinnedHeight += kLaneHeight;
        }
        m_pinnedHeight += kTrackGap;
    }
    const std::string* group = nullptr;
    for (uint32_t t = 0; t < m_data->tracks.size(); ++t) {
        const Track& track = m_data->tracks[t];
        if (track.type == TrackType::Steps) continue;
        if (!group || *group != track.group) {
            group = &track.group;
            m_rows.push_back({ Row::Heading, t, 0, m_contentHeight, kGroupHeight, false });
            m_contentHeight += kGroupHeight;
        }
        const uint32_t shown
            = m_collapsed[t] ? std::min<uint32_t>(1, uint32_t(track.lanes.size())) : uint32_t(track.lanes.size());
        const int laneHeight = track.type == TrackType::Memory ? kMemoryHeight : kLaneHeight;
        for (uint32_t l = 0; l < shown; ++l) {
            m_rowOfLane[t][l] = int(m_rows.size());
            m_rows.push_back({ Row::Lane, t, l, m_contentHeight, laneHeight, false });
            m_contentHeight += laneHeight;
        }
        m_contentHeight += kTrackGap;
    }
    updateScrollBar();
}

int TimelineView::rowTop(const Row& row) const {
    return row.pinned ? kRulerHeight + row.y : kRulerHeight + m_pinnedHeight + row.y - m_scrollY;
}

const TimelineView::Row* TimelineView::rowAt(int y) const {
    if (y < kRulerHeight) return nullptr;
    const bool pinned = y < kRulerHeight + m_pinnedHeight;
    // Rows are in y order within the pinned and the scrolled part: binary search the right part.
    const auto firstScrolled = std::find_if(m_rows.begin(), m_rows.end(), [](const Row& r) { return !r.pinned; });
    const auto begin = pinned ? m_rows.begin() : firstScrolled;
    const auto end = pinned ? firstScrolled : m_rows.end();
    const int content = pinned ? y - kRulerHeight : y - kRulerHeight - m_pinnedHeight + m_scrollY;
    auto it = std::upper_bound(begin, end, content, [](int c, const Row& r) { return c < r.y; });
    if (it == begin) return nullptr;
    --it;
    return content < it->y + it->height ? &*it : nullptr;
}

const TimelineView::Row* TimelineView::laneRow(uint32_t track, uint32_t lane) const {
    if (track >= m_rowOfLane.size() || m_rowOfLane[track].empty()) return nullptr;
    // A lane hidden in a collapsed track is shown in the track's first row.
    const int row = lane < m_rowOfLane[track].size() && m_rowOfLane[track][lane] >= 0 ? m_rowOfLane[track][lane]
                                                                                      : m_rowOfLane[track][0];
    return row >= 0 ? &m_rows[size_t(row)] : nullptr;
}

void TimelineView::updateScrollBar() {
    const int visible = std::max(0, height() - kRulerHeight - m_pinnedHeight);
    const int maximum = std::max(0, m_contentHeight - visible);
    m_scrollY = std::clamp(m_scrollY, 0, maximum);
    m_scrollBar->setRange(0, maximum);
    m_scrollBar->setPageStep(std::max(visible, 1));
    m_scrollBar->setSingleStep(kLaneHeight);
    m_scrollBar->setValue(m_scrollY);
    m_scrollBar->setGeometry(width() - m_scrollBar->sizeHint().width(), kRulerHeight + m_pinnedHeight,
        m_scrollBar->sizeHint().width(), visible);
    m_scrollBar->setVisible(maximum > 0);
}

void TimelineView::ensureRowVisible(const Row& row) {
    if (row.pinned) return;
    const int visible = std::max(0, height() - kRulerHeight - m_pinnedHeight);
    if (row.y < m_scrollY)
        m_scrollY = std::max(0, row.y - kGroupHeight);
    else if (row.y + row.height > m_scrollY + visible)
        m_scrollY = row.y + row.height - visible + kLaneHeight;
    updateScrollBar();
}

void TimelineView::setCollapsed(uint32_t track, bool collapsed) {
    if (track >= m_collapsed.size()) return;
    m_collapsed[track] = collapsed;
    relayout();
    update();
}

QRect TimelineView::trackArea() const {
    // The scroll bar's room is kept even when it is hidden, so that showing it never rescales time.
    const int right = width() - m_scrollBar->sizeHint().width();
    return QRect(QPoint(kLabelWidth, kRulerHeight), QPoint(std::max(right, kLabelWidth + 1) - 1, height() - 1));
}

} // namespace tuneup::gui
