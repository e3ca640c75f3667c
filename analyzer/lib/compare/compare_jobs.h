#pragma once
// Two opened jobs compared: what `tuneup compare BASE NEW` and the GUI's compare dialog both do once each
// side is open (openJob) — each side's RunProfile, the check that both have steps to measure, and the
// comparison — so that the two front ends cannot compare differently (tests/gui/same_comparison_test.cpp).

#include "compare/comparison.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tuneup::analysis {

// A side that cannot be compared per step; the message names the side, its input and what to do.
class CompareInputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Why `p` (the side called `side`, opened from `path`) cannot be compared per step: no training steps, or
// one that runs to the end of the recording; with what to do. "" when it can.
std::string missingStepsReason(const std::string& side, const std::string& path, const RunProfile& p);

// Both sides' profiles and their comparison. The result points into the profiles, so this object neither
// copies nor moves; `recompare` judges the same profiles again with other options (the GUI's "compare
// anyway" is --allow-env-change).
class JobComparison {
public:
    JobComparison(RunProfile base, RunProfile now, const CompareOptions& options);
    JobComparison(const JobComparison&) = delete;
    JobComparison& operator=(const JobComparison&) = delete;

    const RunProfile& base() const { return m_base; }
    const RunProfile& now() const { return m_now; }
    const CompareResult& result() const { return m_result; }
    const CompareOptions& options() const { return m_options; }
    void recompare(const CompareOptions& options);

private:
    RunProfile m_base, m_now;
    CompareOptions m_options;
    CompareResult m_result;
};

// BASE and NEW, opened through the job core, compared as `tuneup compare` compares them. `*Inputs`: the
// paths given for each side (the reports name them). Throws CompareInputError when a side has no steps.
std::unique_ptr<JobComparison> compareJobs(const Job& base, std::vector<std::string> baseInputs, const Job& now,
    std::vector<std::string> newInputs, const CompareOptions& options = {});

} // namespace tuneup::analysis
