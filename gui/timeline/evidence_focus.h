#pragma once
// Where the timeline goes when a finding is chosen: its first piece of evidence (its first span, else
// its earliest event) with the evidence events that belong to it, e.g. one optimizer.zero_grad range and
// the fill kernels it launched, which run on the GPU after the range ends. No Qt.

#include "advise/finding.h"
#include "timeline/timeline_data.h"

#include <optional>
#include <vector>

namespace tuneup::gui {

struct EvidenceFocus {
    TimeRange range; // to zoom to (not padded)
    std::vector<EventId> events; // every evidence event, to highlight
    std::vector<TimeRange> spans; // every evidence span, to shade
    EventId select; // the first evidence event in range; invalid when the finding has none
};

// `model`: the model the finding is about. `stepNs`: the median step, 0 when unknown; events that
// follow the first span (or the first event) by less than a step belong to it, up to the next span.
std::optional<EvidenceFocus> evidenceFocus(
    const TimelineData& data, uint32_t model, const analysis::Evidence& evidence, int64_t stepNs);

} // namespace tuneup::gui
