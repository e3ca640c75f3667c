#pragma once
// What the tooltip and the details pane say about one event: its name, when, how long, where it is
// drawn, and the fields of its table that matter to a reader (grid and block of a kernel, bytes and
// bandwidth of a copy, the call that launched it...). No Qt.

#include "timeline/timeline_data.h"

#include <string>
#include <utility>
#include <vector>

namespace tuneup::gui {

struct EventInfo {
    std::string kind; // "kernel", "memory copy", "CUDA API call", "step"...
    std::string name; // full name as recorded
    TimeRange span;
    std::string track; // the track's title, "" when not drawn
    std::vector<std::pair<std::string, std::string>> fields;
    bool valid() const { return !kind.empty(); }
};

// Empty (valid() false) when the id names no row.
EventInfo describeEvent(const TimelineData& data, const EventId& id);

// The span of an event, if the id names a row.
std::optional<TimeRange> eventSpan(const TimelineData& data, const EventId& id);

} // namespace tuneup::gui
