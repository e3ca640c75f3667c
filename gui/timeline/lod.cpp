#include "timeline/lod.h"

#include <algorithm>

namespace tuneup::gui {

size_t firstEndingAfter(std::span<const int64_t> ends, int64_t t) {
    return size_t(std::upper_bound(ends.begin(), ends.end(), t) - ends.begin());
}

IndexRange eventsIn(std::span<const int64_t> starts, std::span<const int64_t> ends, TimeRange range) {
    IndexRange out;
    out.first = firstEndingAfter(ends, range.startNs);
    out.last = size_t(std::lower_bound(starts.begin() + long(out.first), starts.end(), range.endNs) - starts.begin());
    // Zero-length events at range.startNs end "at" it: keep them, they are visible as a line.
    while (out.first > 0 && ends[out.first - 1] == range.startNs && starts[out.first - 1] == range.startNs)
        --out.first;
    out.last = std::max(out.last, out.first);
    return out;
}

void mergeUnderPixel(std::span<const int64_t> starts, std::span<const int64_t> ends, TimeRange visible, int64_t mergeNs,
    std::vector<LodBox>& out) {
    out.clear();
    mergeNs = std::max<int64_t>(mergeNs, 1);
    const size_t n = std::min(starts.size(), ends.size());
    size_t i = eventsIn(starts.first(n), ends.first(n), visible).first;
    while (i < n && starts[i] < visible.endNs) {
        LodBox box { starts[i], ends[i], uint32_t(i), 1, uint32_t(i) };
        if (ends[i] - starts[i] >= mergeNs) { // long enough to be seen alone
            out.push_back(box);
            ++i;
            continue;
        }
        // A run of short events: jump over every event that starts within mergeNs of the run's end.
        // As events do not overlap, all of them are short but perhaps the last, which may reach far:
        // that one closes the run and gets its own box.
        int64_t longest = ends[i] - starts[i];
        size_t next = i + 1;
        for (;;) {
            const auto from = starts.begin() + long(next);
            const size_t j
                = size_t(std::lower_bound(from, starts.begin() + long(n), box.endNs + mergeNs) - starts.begin());
            if (j == next) break; // the next event starts more than mergeNs after the run: the run is complete
            const size_t last = j - 1;
            if (ends[last] - starts[last] >= mergeNs) { // a long one: the run stops before it
                if (last > next) {
                    box.endNs = ends[last - 1];
                    box.count += uint32_t(last - next);
                }
                next = last;
                break;
            }
            box.endNs = ends[last];
            box.count += uint32_t(j - next);
            if (ends[last] - starts[last] > longest) {
                longest = ends[last] - starts[last];
                box.representative = uint32_t(last);
            }
            next = j;
            if (box.endNs >= visible.endNs) break;
        }
        out.push_back(box);
        i = next;
    }
}

} // namespace tuneup::gui
