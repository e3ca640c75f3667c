// half-without-master-weights on the facts tuneup's Python bootstrap records; the samples' real recordings
// are in pattern_samples_test.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

ruletest::RuleRun run(std::initializer_list<std::pair<const char*, int64_t>> facts) {
    std::vector<TraceModel> models;
    models.push_back(ruletest::syntheticTrace(4, 10'000'000).finish());
    for (const auto& [name, value] : facts)
        ruletest::addProgramFact(models[0], name, value);
    return ruletest::runRuleOnModels("half-without-master-weights", std::move(models));
}

TEST(HalfWithoutMasterWeights, Fp16ParametersOfATorchOptimizerAreAnError) {
    const auto r = run({ { "tuneup.optimizer.family", 1 }, { "tuneup.optimizer.params", 12 },
        { "tuneup.optimizer.params_fp16", 12 }, { "tuneup.optimizer.params_bf16", 0 } });
    ASSERT_EQ(r.findings(), 1u) << r.outcome.reason;
    const Finding& f = r.outcome.findings[0];
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_EQ(f.kind, FindingKind::Correctness);
    EXPECT_FALSE(f.gain.has_value()) << "a correctness finding has no time gain";
    EXPECT_NE(f.title.find("12 fp16 parameters"), std::string::npos) << f.title;
    EXPECT_NE(f.fixPython.find("GradScaler(\"cuda\")"), std::string::npos);
    EXPECT_EQ(f.sourceCalls, std::vector<std::string> { "torch.nn.Module.half" });
}

TEST(HalfWithoutMasterWeights, ThirdPartyOptimizerIsAWarning) {
    const auto r = run({ { "tuneup.optimizer.family", 0 }, { "tuneup.optimizer.params_fp16", 3 } });
    ASSERT_EQ(r.findings(), 1u);
    EXPECT_EQ(r.outcome.findings[0].severity, Severity::Warning);
    EXPECT_NE(r.outcome.findings[0].detail.find("master weights"), std::string::npos);
}

TEST(HalfWithoutMasterWeights, Fp32AndBf16ParametersAreClean) {
    const auto r = run({ { "tuneup.optimizer.family", 1 }, { "tuneup.optimizer.params", 8 },
        { "tuneup.optimizer.params_fp16", 0 }, { "tuneup.optimizer.params_bf16", 8 } });
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean);
    EXPECT_EQ(r.outcome.reason, "no fp16 parameters in the optimizers' steps (8 parameters, 8 in bf16)");
}

TEST(HalfWithoutMasterWeights, NotEvaluatedWithoutTheFact) {
    EXPECT_EQ(run({ { "tuneup.optimizer.params", 8 } }).outcome.status, RuleStatus::NotEvaluated);
}

} // namespace
