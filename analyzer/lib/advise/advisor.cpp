#include "advise/advisor.h"

#include <algorithm>

namespace tuneup::analysis {

namespace {

void run(const Rule& rule, const RankAnalysis& rank, std::span<const RankAnalysis> job, std::vector<RuleOutcome>& out) {
    RuleOutcome outcome;
    outcome.ruleId = std::string(rule.info().id);
    std::string missing;
    for (Input need : rule.info().needs)
        if (!hasInput(rank, job, need)) missing += (missing.empty() ? "" : "; ") + std::string(inputName(need));
    if (!missing.empty()) {
        outcome.status = RuleStatus::NotEvaluated;
        outcome.reason = "needs " + missing;
    } else {
        rule.evaluate(RuleContext(rank, job), outcome);
        if (!outcome.findings.empty()) outcome.status = RuleStatus::Raised;
    }
    const int rankId = rule.info().jobWide || job.size() < 2 ? -1 : rank.rank;
    for (Finding& f : outcome.findings) {
        f.ruleId = outcome.ruleId;
        if (f.rank < 0) f.rank = rankId;
    }
    out.push_back(std::move(outcome));
}

} // namespace

AdviceReport advise(const std::vector<TraceModel>& models, const std::vector<std::unique_ptr<Rule>>& rules,
    const AdviseOptions& options) {
    AdviceReport report;
    report.ranks.reserve(models.size());
    for (size_t i = 0; i < models.size(); ++i) {
        RankAnalysis rank;
        rank.model = &models[i];
        rank.steps = analyzeSteps(models[i], options.stepRange);
        rank.kernelClasses = classifyKernels(models[i]);
        rank.rank = models[i].info.rank.value_or(int(i));
        report.ranks.push_back(std::move(rank));
    }
    const std::span<const RankAnalysis> job(report.ranks);
    for (const auto& rule : rules) {
        if (rule->info().jobWide) {
            if (!report.ranks.empty()) run(*rule, report.ranks.front(), job, report.outcomes);
            continue;
        }
        for (const RankAnalysis& rank : report.ranks)
            run(*rule, rank, job, report.outcomes);
    }
    return report;
}

std::vector<const Finding*> AdviceReport::ranked() const {
    std::vector<const Finding*> findings;
    for (const RuleOutcome& o : outcomes)
        for (const Finding& f : o.findings)
            findings.push_back(&f);
    std::stable_sort(findings.begin(), findings.end(), [](const Finding* a, const Finding* b) {
        const int64_t ga = a->gain ? a->gain->perStepNs : 0, gb = b->gain ? b->gain->perStepNs : 0;
        if (ga != gb) return ga > gb;
        return a->severity > b->severity;
    });
    return findings;
}

int64_t AdviceReport::medianStepNs() const {
    std::vector<int64_t> medians;
    for (const RankAnalysis& r : ranks)
        if (r.steps.medianStepNs() > 0) medians.push_back(r.steps.medianStepNs());
    if (medians.empty()) return 0;
    std::nth_element(medians.begin(), medians.begin() + long(medians.size() / 2), medians.end());
    return medians[medians.size() / 2];
}

} // namespace tuneup::analysis
