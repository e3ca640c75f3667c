// clip-before-unscale on the facts tuneup's Python bootstrap records; the samples' real recordings are in
// pattern_samples_test.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

ruletest::RuleRun run(std::initializer_list<std::pair<const char*, int64_t>> facts) {
    return ruletest::runRuleOnFacts("clip-before-unscale", facts);
}

TEST(ClipBeforeUnscale, ClippingScaledGradientsFires) {
    const auto r = run({ { "tuneup.amp.grad_scaler", 1 }, { "tuneup.amp.clip_before_unscale", 4 } });
    ASSERT_EQ(r.findings(), 1u) << r.outcome.reason;
    const Finding& f = r.outcome.findings[0];
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_EQ(f.kind, FindingKind::Correctness);
    EXPECT_NE(f.title.find("4 of 4 gradient clippings ran before GradScaler.unscale_"), std::string::npos) << f.title;
    EXPECT_NE(f.fixPython.find("scaler.unscale_(optimizer)"), std::string::npos);
    EXPECT_EQ(f.sourceCalls.front(), "torch.nn.utils.clip_grad_norm_");
}

TEST(ClipBeforeUnscale, SomeClippingsInTheWrongOrderFire) {
    const auto r = run({ { "tuneup.amp.grad_scaler", 1 }, { "tuneup.amp.clip_after_unscale", 10 },
        { "tuneup.amp.clip_before_unscale", 1 } });
    ASSERT_EQ(r.findings(), 1u);
    EXPECT_EQ(ruletest::evidenceFact(r.outcome.findings[0], "clippings after unscale_"), "10");
}

TEST(ClipBeforeUnscale, ClippingAfterUnscaleIsClean) {
    const auto r = run({ { "tuneup.amp.grad_scaler", 1 }, { "tuneup.amp.clip_after_unscale", 4 } });
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean);
    EXPECT_EQ(r.outcome.reason, "4 gradient clippings, all after unscale_");
    EXPECT_EQ(run({ { "tuneup.amp.grad_scaler", 1 } }).outcome.status, RuleStatus::Clean);
}

TEST(ClipBeforeUnscale, DisabledScalerOrNoFacts) {
    EXPECT_EQ(run({ { "tuneup.amp.grad_scaler", 0 }, { "tuneup.amp.clip_after_unscale", 4 } }).outcome.status,
        RuleStatus::NotApplicable);
    EXPECT_EQ(run({}).outcome.status, RuleStatus::NotEvaluated);
}

} // namespace
