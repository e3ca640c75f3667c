#include "advise/advisor.h"

#include "advise/call_sites.h"
#include "model/parallel_for.h"

#include <algorithm>
#include <thread>

namespace tuneup::analysis {

namespace {

// The inputs a rule needs that `present` says are missing, "; "-separated.
template <class Present> std::string missingInputs(const Rule& rule, Present present) {
    std::string missing;
    for (Input need : rule.info().needs)
        if (!present(need)) missing += (missing.empty() ? "" : "; ") + std::string(inputName(need));
    return missing;
}

// A job's ranks are advised side by side (forEachTrace, one per core): each gets its share of the cores.
unsigned ruleThreads(const AdviseOptions& options, size_t jobRanks, size_t rules) {
    if (options.ruleThreads > 0) return options.ruleThreads;
    constexpr unsigned kMostThreads = 4; // past this the longest rule alone sets the time
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return usefulThreads(rules, std::min<unsigned>(kMostThreads, unsigned(cores / std::max<size_t>(jobRanks, 1))));
}

RuleOutcome notEvaluated(const std::string& missing) {
    RuleOutcome outcome;
    outcome.status = RuleStatus::NotEvaluated;
    outcome.reason = "needs " + missing;
    return outcome;
}

void finish(RuleOutcome& outcome, const Rule& rule) {
    outcome.ruleId = std::string(rule.info().id);
    if (!outcome.findings.empty()) outcome.status = RuleStatus::Raised;
    for (Finding& f : outcome.findings)
        f.ruleId = outcome.ruleId;
}

// The lines behind a finding's events and its watched calls, before the sites the rule gave (sampled).
void addCallSites(Finding& f, const CallSites& sites) {
    std::vector<SourceSite> found = sites.of(f.evidence);
    for (SourceSite& site : sites.ofCalls(f.sourceCalls))
        if (std::none_of(found.begin(), found.end(),
                [&](const SourceSite& s) { return s.file == site.file && s.line == site.line; }))
            found.push_back(std::move(site));
    f.sources.insert(f.sources.begin(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
}

} // namespace

RankAdvice adviseRank(const TraceModel& model, int defaultRank, size_t jobRanks, const RuleSet& rules,
    const AdviseOptions& options, std::vector<LoaderWorker> loaderWorkers) {
    RankAdvice advice;
    advice.analysis = analyzeRank(model, defaultRank, options.stepRange);
    advice.analysis.loaderWorkers = std::move(loaderWorkers);
    advice.summary = summarizeRank(advice.analysis, jobRanks);
    const RuleContext context(advice.analysis, jobRanks);
    std::vector<const Rule*> perRank;
    for (const auto& rule : rules)
        if (!rule->info().jobWide) perRank.push_back(rule.get());
    // Rules only read the trace and its analysis (nothing in them is computed lazily), so they run side
    // by side, each into its own slot: the outcomes keep the rules' order whatever finishes first.
    advice.outcomes.resize(perRank.size());
    parallelFor(perRank.size(), ruleThreads(options, jobRanks, perRank.size()), [&](size_t k) {
        const Rule& rule = *perRank[k];
        const std::string missing = missingInputs(rule, [&](Input need) { return context.has(need); });
        RuleOutcome outcome = missing.empty() ? RuleOutcome {} : notEvaluated(missing);
        if (missing.empty()) rule.evaluate(context, outcome);
        finish(outcome, rule);
        for (Finding& f : outcome.findings)
            if (f.rank < 0 && jobRanks > 1) f.rank = advice.analysis.rank;
        advice.outcomes[k] = std::move(outcome);
    });
    if (!model.pythonFunctions.empty()) {
        const CallSites sites(model);
        for (RuleOutcome& outcome : advice.outcomes)
            for (Finding& f : outcome.findings)
                addCallSites(f, sites);
    }
    return advice;
}

AdviceReport finishAdvice(
    std::vector<RankSummary> ranks, std::vector<std::vector<RuleOutcome>> rankOutcomes, const RuleSet& rules) {
    AdviceReport report;
    report.ranks = std::move(ranks);
    const JobContext job(report.ranks);
    std::vector<size_t> next(rankOutcomes.size(), 0); // per rank, its next per-rank outcome
    for (const auto& rule : rules) {
        if (!rule->info().jobWide) {
            for (size_t r = 0; r < rankOutcomes.size(); ++r) {
                if (next[r] >= rankOutcomes[r].size()) continue;
                report.outcomes.push_back(std::move(rankOutcomes[r][next[r]++]));
                report.outcomeRank.push_back(int(r));
            }
            continue;
        }
        if (report.ranks.empty()) continue;
        const std::string missing = missingInputs(*rule, [&](Input need) {
            return std::any_of(
                report.ranks.begin(), report.ranks.end(), [need](const RankSummary& r) { return r.has(need); });
        });
        RuleOutcome outcome = missing.empty() ? RuleOutcome {} : notEvaluated(missing);
        if (missing.empty()) rule->evaluateJob(job, outcome);
        finish(outcome, *rule);
        report.outcomes.push_back(std::move(outcome));
        report.outcomeRank.push_back(-1);
    }
    return report;
}

AdviceReport advise(const std::vector<TraceModel>& models, const RuleSet& rules, const AdviseOptions& options) {
    std::vector<RankSummary> summaries;
    std::vector<std::vector<RuleOutcome>> outcomes;
    for (size_t i = 0; i < models.size(); ++i) {
        RankAdvice advice = adviseRank(models[i], int(i), models.size(), rules, options);
        summaries.push_back(std::move(advice.summary));
        outcomes.push_back(std::move(advice.outcomes));
    }
    return finishAdvice(std::move(summaries), std::move(outcomes), rules);
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
    for (const RankSummary& r : ranks)
        if (r.steps.medianStepNs() > 0) medians.push_back(r.steps.medianStepNs());
    if (medians.empty()) return 0;
    std::nth_element(medians.begin(), medians.begin() + long(medians.size() / 2), medians.end());
    return medians[medians.size() / 2];
}

} // namespace tuneup::analysis
