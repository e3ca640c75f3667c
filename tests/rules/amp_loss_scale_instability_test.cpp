// amp-loss-scale-instability on the facts tuneup's Python bootstrap records for a GradScaler (each update,
// the running count of skipped steps, the scale). The samples' real recordings are in pattern_samples_test.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

constexpr int64_t kStepNs = 10'000'000;

// A recording of `skips.size()` scaler updates, one per step; skips[i] = whether update i skipped its step.
// The scale starts at 65536 and follows GradScaler's arithmetic (halved on a skip).
TraceModel scalerTrace(const std::vector<bool>& skips, int64_t firstUpdate = 1, int64_t skipFact = 0) {
    TraceModel m = ruletest::syntheticTrace(int(skips.size()), kStepNs).finish();
    int64_t skipped = 0, scale = 65'536'000;
    ruletest::addProgramFact(m, "tuneup.amp.grad_scaler", 1, 0);
    ruletest::addProgramFact(m, "tuneup.amp.scale_milli", scale, 0); // at the first scale(), as the bootstrap does
    for (size_t i = 0; i < skips.size(); ++i) {
        const int64_t t = 1'000'000 + int64_t(i) * kStepNs + kStepNs - 100'000;
        ruletest::addProgramFact(m, "tuneup.amp.updates", firstUpdate + int64_t(i), t);
        if (skipFact < 0) {
            if (i == 0) ruletest::addProgramFact(m, "tuneup.amp.skipped", -1, t + 1000);
            continue;
        }
        if (skips[i]) {
            ++skipped;
            scale /= 2;
        }
        if (i == 0 || skips[i]) {
            ruletest::addProgramFact(m, "tuneup.amp.skipped", skipped, t + 1000);
            ruletest::addProgramFact(m, "tuneup.amp.scale_milli", scale, t + 2000);
        }
    }
    return m;
}

ruletest::RuleRun run(TraceModel m) {
    return ruletest::runRuleOnModel("amp-loss-scale-instability", std::move(m));
}

std::vector<bool> pattern(size_t n, size_t calibration, size_t every) {
    std::vector<bool> skips(n, false);
    for (size_t i = 0; i < n; ++i)
        skips[i] = i < calibration || (every && i >= calibration && (i - calibration) % every == every - 1);
    return skips;
}

TEST(AmpLossScaleInstability, RecurringSkipsAfterCalibrationFire) {
    // 2 calibration skips, then every third step skipped: 10 of 30.
    const auto r = run(scalerTrace(pattern(32, 2, 3)));
    ASSERT_EQ(r.findings(), 1u) << r.outcome.reason;
    const Finding& f = r.outcome.findings[0];
    EXPECT_EQ(f.severity, Severity::Error) << "a third of the steps";
    EXPECT_EQ(f.kind, FindingKind::Correctness);
    EXPECT_NE(f.title.find("skipped 10 of 30"), std::string::npos) << f.title;
    EXPECT_EQ(ruletest::evidenceFact(f, "skipped steps"), "12 (2 while calibrating)");
    EXPECT_EQ(ruletest::evidenceFact(f, "loss scale"), "65536 at first, 16 at its lowest, 16 at the end");
    ASSERT_TRUE(f.gain.has_value());
    EXPECT_NEAR(double(f.gain->perStepNs), 10.0 * kStepNs / 32.0, kStepNs * 0.05) << "10 wasted steps of 32";
    EXPECT_EQ(f.evidence.spans.size(), 12u - 1u) << "each skipped iteration after the first update";
    EXPECT_EQ(f.sourceCalls, std::vector<std::string> { "GradScaler.scale" });
}

TEST(AmpLossScaleInstability, OccasionalSkipsAreAWarning) {
    // 4 skips in 200 steps after calibration: 2 %.
    const auto r = run(scalerTrace(pattern(205, 5, 50)));
    ASSERT_EQ(r.findings(), 1u) << r.outcome.reason;
    EXPECT_EQ(r.outcome.findings[0].severity, Severity::Warning);
}

TEST(AmpLossScaleInstability, AllStepsSkippedFire) {
    const auto r = run(scalerTrace(std::vector<bool>(8, true)));
    ASSERT_EQ(r.findings(), 1u) << r.outcome.reason;
    EXPECT_EQ(r.outcome.findings[0].severity, Severity::Error);
    EXPECT_NE(r.outcome.findings[0].title.find("skipped all 8"), std::string::npos);
}

TEST(AmpLossScaleInstability, CalibrationAloneIsClean) {
    const auto r = run(scalerTrace(pattern(40, 6, 0)));
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean);
    EXPECT_EQ(r.findings(), 0u);
    EXPECT_NE(r.outcome.reason.find("6 skipped (6 while calibrating)"), std::string::npos) << r.outcome.reason;
}

TEST(AmpLossScaleInstability, ALeadingRunLongerThanCalibrationCounts) {
    // 30 skips from the first update before the first applied step: more than the 24 halvings calibration takes.
    const auto r = run(scalerTrace(pattern(40, 30, 0)));
    ASSERT_EQ(r.findings(), 1u) << r.outcome.reason;
    EXPECT_EQ(ruletest::evidenceFact(r.outcome.findings[0], "skipped steps"), "30 (0 while calibrating)");
}

TEST(AmpLossScaleInstability, SkipsOnceInAGrowthIntervalAreClean) {
    // A scaler that grows its scale now and then and backs off once: 2 skips in 400 steps.
    const auto r = run(scalerTrace(pattern(402, 2, 200)));
    EXPECT_EQ(r.findings(), 0u);
}

TEST(AmpLossScaleInstability, SkipsAtTheStartOfAWindowThatMissedTheFirstUpdateCount) {
    // The recording starts at update 100: a leading run of skips is no calibration.
    const auto r = run(scalerTrace(pattern(20, 4, 0), 100));
    ASSERT_EQ(r.findings(), 1u) << r.outcome.reason;
    EXPECT_NE(r.outcome.findings[0].title.find("skipped 4 of 20"), std::string::npos) << r.outcome.findings[0].title;
}

TEST(AmpLossScaleInstability, NotEvaluatedWithoutFactsOrWithFusedSkips) {
    EXPECT_EQ(run(ruletest::syntheticTrace(4, kStepNs).finish()).outcome.status, RuleStatus::NotEvaluated)
        << "steps without CPU ops or optimizer ranges";
    const auto fused = run(scalerTrace(pattern(20, 0, 2), 1, -1));
    EXPECT_EQ(fused.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(fused.outcome.reason.find("fused"), std::string::npos) << fused.outcome.reason;
}

// A torch.profiler trace: each step updates the scaler; the skipped ones hold no Optimizer.step range.
TraceModel profiledTrace(const std::vector<bool>& skips) {
    auto b = ruletest::syntheticTrace(int(skips.size()), kStepNs);
    const ThreadIndex thread = b.thread(1, 1);
    for (size_t i = 0; i < skips.size(); ++i) {
        const int64_t t0 = 1'000'000 + int64_t(i) * kStepNs;
        CpuOp update;
        update.startNs = t0 + 7'000'000;
        update.endNs = update.startNs + 50'000;
        update.thread = thread;
        update.name = b.intern("aten::_amp_update_scale_");
        b.addCpuOp(update);
        if (skips[i]) continue;
        Annotation step;
        step.startNs = t0 + 6'000'000;
        step.endNs = t0 + 6'900'000;
        step.thread = thread;
        step.name = b.intern("Optimizer.step#SGD.step");
        b.addAnnotation(step);
    }
    return b.finish();
}

TEST(AmpLossScaleInstability, ProfiledStepsWithoutAnOptimizerStepAreSkips) {
    const auto r = run(profiledTrace(pattern(12, 0, 3)));
    ASSERT_EQ(r.findings(), 1u) << r.outcome.reason;
    const Finding& f = r.outcome.findings[0];
    EXPECT_NE(f.title.find("skipped 4 of 12"), std::string::npos) << f.title;
    EXPECT_NE(f.detail.find("aten::_amp_update_scale"), std::string::npos);
    EXPECT_EQ(ruletest::evidenceFact(f, "loss scale"), "") << "a trace does not hold the scale";
    EXPECT_EQ(run(profiledTrace(pattern(12, 0, 0))).outcome.status, RuleStatus::Clean);
}

TEST(AmpLossScaleInstability, RealFp16TraceSkippedOneOfItsTwoSteps) {
    // BERT fp16 DDP (tb_plugin): ProfilerStep#3 updates the scaler without an Optimizer.step#AdamW.step range,
    // ProfilerStep#4 steps: one skip, under the three that make a finding.
    TUNEUP_REQUIRE_SHARED_TRACE(path,
        "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/bert_newAPI_fp16_ddp_4dataloader/"
        "worker0_round1.pt.trace.json.gz");
    const auto r = ruletest::runRule("amp-loss-scale-instability", { path });
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean);
    EXPECT_EQ(r.outcome.reason, "2 scaler updates, 1 skipped (0 while calibrating)");
}

TEST(AmpLossScaleInstability, DisabledScalerIsNotApplicable) {
    TraceModel m = ruletest::syntheticTrace(4, kStepNs).finish();
    ruletest::addProgramFact(m, "tuneup.amp.grad_scaler", 0);
    EXPECT_EQ(run(std::move(m)).outcome.status, RuleStatus::NotApplicable);
}

} // namespace
