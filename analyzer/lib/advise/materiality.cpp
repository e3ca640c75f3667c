#include "advise/materiality.h"

#include "units.h"

#include <algorithm>

namespace tuneup::analysis {

bool isMaterial(const Finding& f, const MaterialityFloor& floor) {
    if (floor.showAll || f.kind != FindingKind::Performance || !f.gain) return true;
    // Either limit clears it: a large share of a short step (a 5% sync in a 17 ms step is 0.9 ms) and a large
    // time in a long one are both worth a change; under both is not. stepShare is 0 where the rank's step
    // time is unknown: then the time alone decides.
    if (f.gain->perStepNs <= 0) return false;
    return f.gain->stepShare >= floor.minStepShare || f.gain->perStepNs >= floor.minPerStepNs;
}

std::string floorText(const MaterialityFloor& floor) {
    if (floor.showAll) return "none (--all)";
    char share[32];
    snprintf(share, sizeof share, "%g%%", floor.minStepShare * 100);
    return std::string(share) + " of the step and " + formatDuration(floor.minPerStepNs) + " per step";
}

namespace {

std::string shareText(const Gain& gain) {
    if (gain.stepShare <= 0) return "share of the step unknown";
    if (gain.stepShare < 0.001) return "under 0.1% of the step";
    return formatPercent(gain.stepShare) + " of the step";
}

} // namespace

size_t applyMaterialityFloor(std::vector<RuleOutcome>& outcomes, const MaterialityFloor& floor) {
    size_t below = 0;
    for (RuleOutcome& o : outcomes) {
        if (!o.belowFloor.empty()) {
            for (Finding& f : o.belowFloor)
                o.findings.push_back(std::move(f));
            o.belowFloor.clear();
            o.status = RuleStatus::Raised;
            o.reason.clear();
        }
        if (o.status != RuleStatus::Raised) continue;
        std::vector<Finding> kept;
        for (Finding& f : o.findings)
            (isMaterial(f, floor) ? kept : o.belowFloor).push_back(std::move(f));
        o.findings = std::move(kept);
        below += o.belowFloor.size();
        if (!o.findings.empty() || o.belowFloor.empty()) continue;
        const auto largest = std::max_element(o.belowFloor.begin(), o.belowFloor.end(),
            [](const Finding& a, const Finding& b) { return a.gain->perStepNs < b.gain->perStepNs; });
        o.status = RuleStatus::Clean;
        o.reason = std::to_string(o.belowFloor.size()) + (o.belowFloor.size() == 1 ? " finding" : " findings")
            + " under the materiality floor (" + floorText(floor) + "), the largest "
            + formatDuration(largest->gain->perStepNs) + " per step, " + shareText(*largest->gain)
            + "; --all shows them";
    }
    return below;
}

} // namespace tuneup::analysis
