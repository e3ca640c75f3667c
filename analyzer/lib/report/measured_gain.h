#pragma once
// `tuneup advise run.db --bench bench.json`: the gain `tuneup bench` measured for a finding (the
// candidate whose fix answers it), shown beside the finding's estimate in every report format.

#include "report/report.h"

#include <string>

namespace tuneup::analysis {

// The candidate of context.bench that answers `f`, or null (no --bench, or no candidate for it).
const BenchCandidate* measuredFor(const ReportContext& context, const Finding& f);

// One line for people: "3.10x faster (95% CI 2.90x-3.40x, p < 0.001) with dataloader-workers=4, measured by
// tuneup bench; estimated 1.72x". Empty when nothing was measured for `f`.
std::string measuredGainText(const ReportContext& context, const Finding& f);

} // namespace tuneup::analysis
