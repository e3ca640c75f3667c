// TimelineView's search: the events whose name contains the text, kept per lane as a lane of their own
// (built once per search, drawn with its own level of detail), and stepping from match to match.

#include "timeline/event_info.h"
#include "timeline/timeline_view.h"

#include <algorithm>
#include <unordered_map>

namespace tuneup::gui {

namespace {

std::string lowerAscii(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return out;
}

} // namespace

void TimelineView::setFilter(const QString& text) {
    const QString trimmed = text.trimmed();
    if (trimmed == m_filterText) return;
    m_filterText = trimmed;
    rebuildFilter();
    update();
}

void TimelineView::rebuildFilter() {
    m_filtered.clear();
    m_filterMatches = 0;
    if (!m_data || m_filterText.isEmpty()) return;
    const std::string needle = lowerAscii(m_filterText.toStdString());
    // Names repeat: decide each (model, name) once.
    std::vector<std::unordered_map<uint32_t, bool>> matches(m_data->modelCount());
    m_filtered.resize(m_data->tracks.size());
    for (size_t t = 0; t < m_data->tracks.size(); ++t) {
        const Track& track = m_data->tracks[t];
        auto& known = matches[track.model];
        m_filtered[t].resize(track.lanes.size());
        for (size_t l = 0; l < track.lanes.size(); ++l) {
            const Lane& lane = track.lanes[l];
            FilteredLane& f = m_filtered[t][l];
            for (size_t i = 0; i < lane.size(); ++i) {
                auto it = known.find(lane.names[i]);
                if (it == known.end())
                    it = known
                             .emplace(lane.names[i],
                                 lowerAscii(m_data->name(track.model, lane.names[i])).find(needle) != std::string::npos)
                             .first;
                if (!it->second) continue;
                f.starts.push_back(lane.starts[i]);
                f.ends.push_back(lane.ends[i]);
                f.index.push_back(uint32_t(i));
            }
            m_filterMatches += f.index.size();
        }
    }
}

bool TimelineView::selectNextMatch(bool backwards) {
    if (!m_data || m_filtered.empty() || m_filterMatches == 0) return false;
    // From the selected event if there is one, else from the view's start (end when going back).
    int64_t from = backwards ? m_visible.endNs : m_visible.startNs - 1;
    if (m_selected.valid())
        if (const auto span = eventSpan(*m_data, m_selected)) from = span->startNs;
    std::optional<EventId> best;
    int64_t bestStart = 0;
    for (size_t t = 0; t < m_filtered.size(); ++t)
        for (size_t l = 0; l < m_filtered[t].size(); ++l) {
            const FilteredLane& f = m_filtered[t][l];
            size_t i;
            if (backwards) {
                i = size_t(std::lower_bound(f.starts.begin(), f.starts.end(), from) - f.starts.begin());
                if (i == 0) continue;
                --i;
            } else {
                i = size_t(std::upper_bound(f.starts.begin(), f.starts.end(), from) - f.starts.begin());
                if (i == f.starts.size()) continue;
            }
            if (best && (backwards ? f.starts[i] <= bestStart : f.starts[i] >= bestStart)) continue;
            const Lane& lane = m_data->tracks[t].lanes[l];
            best = EventId { m_data->tracks[t].model, lane.sources[f.index[i]], lane.rows[f.index[i]] };
            bestStart = f.starts[i];
        }
    if (!best) return false;
    selectEvent(*best);
    // Keep the zoom, centred on the match, unless the match is wider than the view.
    if (const auto span = eventSpan(*m_data, *best)) {
        if (span->duration() > m_visible.duration())
            changeVisible(padded(*span, 0.1));
        else if (!m_visible.contains(*span)) {
            const int64_t half = m_visible.duration() / 2;
            const int64_t centre = span->startNs + span->duration() / 2;
            changeVisible({ centre - half, centre - half + m_visible.duration() });
        }
    }
    return true;
}

} // namespace tuneup::gui
