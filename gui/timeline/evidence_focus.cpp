#include "timeline/evidence_focus.h"

#include "timeline/event_info.h"

#include <algorithm>
#include <limits>

namespace tuneup::gui {

std::optional<EvidenceFocus> evidenceFocus(
    const TimelineData& data, uint32_t model, const analysis::Evidence& evidence, int64_t stepNs) {
    EvidenceFocus out;
    struct Timed {
        EventId id;
        TimeRange span;
    };
    std::vector<Timed> events;
    for (const analysis::EventRef& ref : evidence.events) {
        const EventId id { model, sourceOf(ref.table), ref.row };
        if (const auto span = eventSpan(data, id)) {
            events.push_back({ id, *span });
            out.events.push_back(id);
        }
    }
    for (const analysis::TimeSpan& s : evidence.spans)
        if (s.endNs >= s.startNs) out.spans.push_back({ s.startNs, s.endNs });
    if (events.empty() && out.spans.empty()) return std::nullopt;
    std::sort(out.spans.begin(), out.spans.end(),
        [](const TimeRange& a, const TimeRange& b) { return a.startNs < b.startNs; });
    std::stable_sort(
        events.begin(), events.end(), [](const Timed& a, const Timed& b) { return a.span.startNs < b.span.startNs; });

    TimeRange focus = out.spans.empty() ? events.front().span : out.spans.front();
    int64_t limit = std::numeric_limits<int64_t>::max();
    if (out.spans.size() > 1) limit = out.spans[1].startNs;
    const int64_t reach = stepNs > 0 ? stepNs : std::max<int64_t>(focus.duration() * 10, 1000);
    limit = std::min(limit, focus.startNs + std::max(reach, focus.duration()));

    out.range = focus;
    for (const Timed& e : events)
        if (e.span.startNs >= focus.startNs && e.span.startNs < limit) {
            out.range.startNs = std::min(out.range.startNs, e.span.startNs);
            out.range.endNs = std::max(out.range.endNs, e.span.endNs);
            if (!out.select.valid()) out.select = e.id;
        }
    if (!out.select.valid() && !events.empty() && out.spans.empty()) out.select = events.front().id;
    if (out.range.empty()) out.range.endNs = out.range.startNs + 1;
    return out;
}

} // namespace tuneup::gui
