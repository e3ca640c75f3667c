#pragma once
// Level of detail: what one lane of the timeline draws at the current zoom. Events shorter than a
// pixel are folded, with the short gaps between them, into one box; only the visible part of the lane
// is visited, by binary search, so a repaint costs O(boxes · log n) whatever the number of events
// (Tracy's MinVisSize folding). Pure functions, no Qt.

#include "timeline/time_mapping.h"

#include <cstdint>
#include <span>
#include <vector>

namespace tuneup::gui {

/** One box to draw: a single event (count == 1) or a run of events folded together. */
struct LodBox {
    int64_t startNs = 0;
    int64_t endNs = 0;
    uint32_t first = 0; // index of the first event in the lane
    uint32_t count = 0; // events folded into the box
    uint32_t representative = 0; // the longest event among those the search landed on: its colour
};

// Boxes for a lane of events that do not overlap, sorted by start (so their ends are sorted too), in
// `visible`. An event at least `mergeNs` long is a box of its own; a run of shorter events whose gaps
// are shorter than `mergeNs` becomes one box. `out` is cleared first.
void mergeUnderPixel(std::span<const int64_t> starts, std::span<const int64_t> ends, TimeRange visible, int64_t mergeNs,
    std::vector<LodBox>& out);

// The first event that ends after `t` (the first one visible from t on); ends must be sorted.
size_t firstEndingAfter(std::span<const int64_t> ends, int64_t t);

// The events of such a lane under [t0, t1): their index range [first, last).
struct IndexRange {
    size_t first = 0;
    size_t last = 0;
    size_t size() const { return last - first; }
};
IndexRange eventsIn(std::span<const int64_t> starts, std::span<const int64_t> ends, TimeRange range);

} // namespace tuneup::gui
