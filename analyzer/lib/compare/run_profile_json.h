#pragma once
// A RunProfile as JSON and back: how the run history (history.h) keeps a run's summary. Every call's
// duration (KernelStat::callUs) is left out: a summary stays small whatever the run.

#include "compare/run_profile.h"

#include <string>
#include <string_view>

namespace tuneup::analysis {

std::string runProfileToJson(const RunProfile& profile);
// Throws std::runtime_error saying what is missing or wrong.
RunProfile runProfileFromJson(std::string_view json);

} // namespace tuneup::analysis
