#pragma once
// The materiality floor: a finding about time is raised only when the time it would save is worth a
// change — by default at least 0.5% of the median step OR at least 1 ms per step; under both is not
// advice (three microseconds of pageable copies). Requiring both would hide a 5% finding of every step
// shorter than 20 ms. Findings of other kinds (FindingKind: a debug API left on, an
// information) are raised whatever their size, and so are findings that carry no estimate to judge.

#include "advise/finding.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tuneup::analysis {

struct MaterialityFloor {
    double minStepShare = 0.005; // of the median step; not applied where the step time is unknown
    int64_t minPerStepNs = 1'000'000; // per step (per window when no steps were found)
    bool showAll = false; // --all: no floor
};

// Whether `f` clears the floor: not a performance finding, no gain estimate, or a gain at either limit.
bool isMaterial(const Finding& f, const MaterialityFloor& floor);

// "0.5% of the step and 1 ms per step"
std::string floorText(const MaterialityFloor& floor);

// Moves the findings under the floor from each outcome's `findings` to its `belowFloor` (first moving
// back any that an earlier pass set aside, so that a job summary read with --all shows them). An
// outcome left without findings reads as clean, its reason saying what the floor left out.
// Returns how many findings are under the floor.
size_t applyMaterialityFloor(std::vector<RuleOutcome>& outcomes, const MaterialityFloor& floor);

} // namespace tuneup::analysis
