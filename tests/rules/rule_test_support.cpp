#include "rule_test_support.h"

#include "all_rules.h"
#include "import/importer.h"

#include <filesystem>

namespace tuneup::ruletest {

std::string sharedTrace(const std::string& relative) {
    const std::filesystem::path root(TUNEUP_SHARED_TRACES);
    if (!std::filesystem::is_directory(root)) return {};
    const auto path = root / relative;
    EXPECT_TRUE(std::filesystem::exists(path)) << path << " is missing from ../shared/traces";
    return path.string();
}

RuleRun runRuleOnModels(const std::string& ruleId, std::vector<analysis::TraceModel> models) {
    RuleRun run;
    run.models = std::move(models);
    std::vector<std::unique_ptr<analysis::Rule>> rules;
    for (auto& rule : rules::builtinRules())
        if (rule->info().id == ruleId) rules.push_back(std::move(rule));
    EXPECT_EQ(rules.size(), 1u) << "no built-in rule " << ruleId;
    run.report = analysis::advise(run.models, rules, {});
    if (!run.report.outcomes.empty()) run.outcome = run.report.outcomes.front();
    return run;
}

RuleRun runRule(const std::string& ruleId, const std::vector<std::string>& paths, const std::string& stepRange) {
    std::vector<analysis::TraceModel> models;
    for (const auto& path : paths)
        models.push_back(analysis::importTrace(path));
    if (stepRange.empty()) return runRuleOnModels(ruleId, std::move(models));
    RuleRun run;
    run.models = std::move(models);
    std::vector<std::unique_ptr<analysis::Rule>> rules;
    for (auto& rule : rules::builtinRules())
        if (rule->info().id == ruleId) rules.push_back(std::move(rule));
    analysis::AdviseOptions options;
    options.stepRange = stepRange;
    run.report = analysis::advise(run.models, rules, options);
    if (!run.report.outcomes.empty()) run.outcome = run.report.outcomes.front();
    return run;
}

RuleRun runRuleOnModel(const std::string& ruleId, analysis::TraceModel model) {
    std::vector<analysis::TraceModel> models;
    models.push_back(std::move(model));
    return runRuleOnModels(ruleId, std::move(models));
}

RuleRun runRuleOnFacts(const std::string& ruleId, std::initializer_list<std::pair<const char*, int64_t>> facts) {
    analysis::TraceModel model = syntheticTrace(4, 10'000'000).finish();
    for (const auto& [name, value] : facts)
        addProgramFact(model, name, value);
    return runRuleOnModel(ruleId, std::move(model));
}

analysis::TraceBuilder syntheticTrace(int steps, int64_t stepNs) {
    analysis::TraceBuilder builder(analysis::SourceFormat::KinetoJson, "synthetic");
    const analysis::ThreadIndex thread = builder.thread(1, 1);
    for (int s = 0; s < steps; ++s) {
        analysis::Annotation a;
        a.startNs = 1'000'000 + s * stepNs;
        a.endNs = a.startNs + stepNs;
        a.thread = thread;
        a.name = builder.intern("ProfilerStep#" + std::to_string(s));
        builder.addAnnotation(a);
    }
    return builder;
}

void addProgramFact(analysis::TraceModel& model, std::string_view name, int64_t value, int64_t timeNs) {
    analysis::ProgramFact fact;
    fact.timeNs = timeNs;
    fact.name = model.strings.intern(name);
    fact.value = value;
    model.programFacts.append(fact);
}

std::string evidenceFact(const analysis::Finding& finding, const std::string& label) {
    for (const auto& [key, value] : finding.evidence.facts)
        if (key == label) return value;
    return {};
}

} // namespace tuneup::ruletest
