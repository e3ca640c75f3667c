// half-without-master-weights on the facts tuneup's Python bootstrap records; the samples' real recordings
// are in pattern_samples_test.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

ruletest::RuleRun run(std::initializer_list<std::pair<const char*, int64_t>> facts) {
    return ruletest::runRuleOnFacts("half-without-master-weights", facts);
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

namespace {

// A torch.profiler trace of `steps` optimizer steps, each running `ops` in-place updates of `type` inside an
// Optimizer.step range (a per-parameter SGD step: aten::add_ on each parameter).
TraceModel profiledSteps(int steps, int ops, const std::string& type, const std::string& name = "aten::add_") {
    auto b = ruletest::syntheticTrace(steps, 10'000'000);
    const ThreadIndex thread = b.thread(1, 1);
    for (int s = 0; s < steps; ++s) {
        const int64_t t0 = 1'000'000 + int64_t(s) * 10'000'000 + 8'000'000;
        Annotation range;
        range.startNs = t0;
        range.endNs = t0 + 1'000'000;
        range.thread = thread;
        range.name = b.intern("Optimizer.step#SGD.step");
        b.addAnnotation(range);
        for (int i = 0; i < ops; ++i) {
            CpuOp op;
            op.startNs = t0 + 10'000 + i * 20'000;
            op.endNs = op.startNs + 10'000;
            op.thread = thread;
            op.name = b.intern(name);
            op.inputTypes = b.intern(type);
            b.addCpuOp(op);
        }
    }
    return b.finish();
}

ruletest::RuleRun runOn(TraceModel m) {
    return ruletest::runRuleOnModel("half-without-master-weights", std::move(m));
}

TEST(HalfWithoutMasterWeights, ProfiledUpdatesOfFp16TensorsFire) {
    const auto r = runOn(profiledSteps(3, 10, "c10::Half,c10::Half,Scalar"));
    ASSERT_EQ(r.findings(), 1u) << r.outcome.reason;
    const Finding& f = r.outcome.findings[0];
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_EQ(ruletest::evidenceFact(f, "in-place ops in Optimizer.step writing fp16"), "30 of 30");
    EXPECT_EQ(f.evidence.events.size(), 30u);
    EXPECT_NE(f.detail.find("c10::Half"), std::string::npos);
}

TEST(HalfWithoutMasterWeights, ProfiledFp32UpdatesAreCleanAndForeachIsNotEvaluated) {
    const auto fp32 = runOn(profiledSteps(3, 10, "float,c10::Half,Scalar")); // fp32 weights, fp16 gradients
    EXPECT_EQ(fp32.outcome.status, RuleStatus::Clean);
    EXPECT_EQ(fp32.outcome.reason, "30 in-place ops in Optimizer.step ranges, none writing fp16");
    const auto foreach = runOn(profiledSteps(3, 2, "TensorList,TensorList,Scalar", "aten::_foreach_add_"));
    EXPECT_EQ(foreach.outcome.status, RuleStatus::NotEvaluated) << foreach.outcome.reason;
}

} // namespace
