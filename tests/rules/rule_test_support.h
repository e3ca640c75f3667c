#pragma once
// Running one rule on a real trace from ../shared/traces, or on a synthetic trace built in the test.

#include "advise/advisor.h"
#include "model/trace_builder.h"
#include "shared_traces.h"

#include <gtest/gtest.h>
#include <initializer_list>
#include <string>
#include <vector>

namespace tuneup::ruletest {

// Absolute path of a file under ../shared/traces, or "" when the folder is absent (a user's clone).
std::string sharedTrace(const std::string& relative);

// Skips the test with a clear message when ../shared/traces is absent (fails under CI=true).
#define TUNEUP_REQUIRE_SHARED_TRACE(var, relative)                                                                     \
    TUNEUP_REQUIRE_SHARED_TRACES(std::filesystem::path(TUNEUP_SHARED_TRACES));                                         \
    const std::string var = ::tuneup::ruletest::sharedTrace(relative);

// The outcome of the built-in rule `ruleId` on these traces (one per rank), and the report it came from.
struct RuleRun {
    std::vector<analysis::TraceModel> models;
    analysis::AdviceReport report;
    analysis::RuleOutcome outcome; // for a per-rank rule on several ranks: the first rank's outcome
    size_t findings() const { return outcome.findings.size(); }
};
RuleRun runRule(const std::string& ruleId, const std::vector<std::string>& paths, const std::string& stepRange = {});
RuleRun runRuleOnModels(const std::string& ruleId, std::vector<analysis::TraceModel> models);
RuleRun runRuleOnModel(const std::string& ruleId, analysis::TraceModel model);
// The rule on a four-step synthetic trace that holds only these facts of the Python bootstrap.
RuleRun runRuleOnFacts(const std::string& ruleId, std::initializer_list<std::pair<const char*, int64_t>> facts);

// A synthetic trace: steps of `stepNs` marked by ProfilerStep#N annotations on thread 1.
analysis::TraceBuilder syntheticTrace(int steps, int64_t stepNs);

// Adds a fact as the Python bootstrap records it (ProgramFactTable) to a finished model.
void addProgramFact(analysis::TraceModel& model, std::string_view name, int64_t value, int64_t timeNs = 0);

// The value of an evidence fact of `finding` by its label, "" when absent.
std::string evidenceFact(const analysis::Finding& finding, const std::string& label);

} // namespace tuneup::ruletest
