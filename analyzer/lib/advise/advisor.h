#pragma once
// Runs the rules over a job (one trace per rank) and collects the outcome: per rank its steps and
// breakdown, per rule its findings or why it found nothing or could not be evaluated.

#include "advise/rule_context.h"

#include <memory>
#include <string>
#include <vector>

namespace tuneup::analysis {

class SqlRule; // user rules (advise/sql_rule.h)

struct AdviseOptions {
    std::string stepRange; // --step-range NAME
};

struct AdviceReport {
    std::vector<RankAnalysis> ranks; // one per trace, in the order given
    std::vector<RuleOutcome> outcomes; // per rule (per rank for per-rank rules), in rule order
    std::vector<const Finding*> ranked() const; // raised findings, largest gain first
    int64_t medianStepNs() const; // over ranks: the median of their medians
};

// Runs `rules` (the built-in ones from rules/all_rules.h, then user rules) in order.
// `models` must outlive the report.
AdviceReport advise(const std::vector<TraceModel>& models, const std::vector<std::unique_ptr<Rule>>& rules,
    const AdviseOptions& options);

} // namespace tuneup::analysis
