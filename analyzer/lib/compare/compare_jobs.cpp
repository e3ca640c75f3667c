#include "compare/compare_jobs.h"

namespace tuneup::analysis {

namespace {

std::string joined(const std::vector<std::string>& paths) {
    std::string out;
    for (const std::string& p : paths)
        out += (out.empty() ? "" : " ") + p;
    return out;
}

} // namespace

std::string missingStepsReason(const std::string& side, const std::string& path, const RunProfile& p) {
    if (!p.stepMs.empty()) return {};
    const std::string found = p.lastStepDropped
        ? "only one step was found (" + p.stepSource + "), and it runs to the end of the recording"
        : "no training steps found";
    return side + " " + path + ": " + found
        + ", so step times cannot be compared. Record more steps, or name the range that marks a step with "
          "--step-range NAME (tuneup advise "
        + path + " shows how steps were looked for)";
}

JobComparison::JobComparison(RunProfile base, RunProfile now, const CompareOptions& options)
    : m_base(std::move(base))
    , m_now(std::move(now)) {
    recompare(options);
}

void JobComparison::recompare(const CompareOptions& options) {
    m_options = options;
    m_result = compareProfiles(m_base, m_now, m_options);
}

std::unique_ptr<JobComparison> compareJobs(const Job& base, std::vector<std::string> baseInputs, const Job& now,
    std::vector<std::string> newInputs, const CompareOptions& options) {
    const std::string basePath = joined(baseInputs), newPath = joined(newInputs);
    RunProfile b = profileJob(base, std::move(baseInputs));
    RunProfile n = profileJob(now, std::move(newInputs));
    for (const auto& [side, path, p] : { std::tuple { "BASE", &basePath, &b }, std::tuple { "NEW", &newPath, &n } })
        if (std::string why = missingStepsReason(side, *path, *p); !why.empty()) throw CompareInputError(why);
    return std::make_unique<JobComparison>(std::move(b), std::move(n), options);
}

} // namespace tuneup::analysis
