// pageable-memcpy on real traces (counts from MANIFEST.md, checked with a JSON script) and synthetic ones.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

TEST(PageableMemcpy, FiresOnResnetWithPageableInputCopies) {
    TUNEUP_REQUIRE_SHARED_TRACE(path, "param/et_replay/tests/inputs/resnet_kineto.json.gz");
    const auto run = ruletest::runRule("pageable-memcpy", { path });
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    ASSERT_EQ(run.findings(), 1u);
    EXPECT_EQ(run.outcome.findings[0].evidence.eventsTotal, 61u); // 61 "Memcpy HtoD (Pageable -> Device)"
    ASSERT_TRUE(run.outcome.findings[0].gain);
    EXPECT_GT(run.outcome.findings[0].gain->perStepNs, 0);
}

TEST(PageableMemcpy, FiresOnStepBasedTraceAndAlexnet) {
    TUNEUP_REQUIRE_SHARED_TRACE(steps, "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz");
    TUNEUP_REQUIRE_SHARED_TRACE(
        alexnet, "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz");
    const auto a = ruletest::runRule("pageable-memcpy", { steps });
    ASSERT_EQ(a.findings(), 1u);
    EXPECT_EQ(a.outcome.findings[0].evidence.eventsTotal, 10u);
    const auto b = ruletest::runRule("pageable-memcpy", { alexnet });
    ASSERT_EQ(b.findings(), 1u);
    EXPECT_EQ(b.outcome.findings[0].evidence.eventsTotal, 16u);
}

TEST(PageableMemcpy, QuietOnPinnedInputCopies) {
    // ResNet-50 DDP: 8 pinned HtoD copies; its 3 pageable DtoH reads are scalars.
    TUNEUP_REQUIRE_SHARED_TRACE(path,
        "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz");
    const auto run = ruletest::runRule("pageable-memcpy", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
}

TEST(PageableMemcpy, NotEvaluatedWithoutCopyActivity) {
    // Synthetic: steps and no memory copies at all.
    auto builder = ruletest::syntheticTrace(3, 10'000'000);
    std::vector<TraceModel> models;
    models.push_back(builder.finish());
    const auto run = ruletest::runRuleOnModels("pageable-memcpy", std::move(models));
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(run.outcome.reason.find("memory copy"), std::string::npos);
}

TEST(PageableMemcpy, SyntheticLargePageableReadBackFires) {
    // Synthetic: a 4 MB device-to-pageable read each step fires; a 4-byte one (loss.item()) does not.
    auto builder = ruletest::syntheticTrace(4, 10'000'000);
    for (int s = 0; s < 4; ++s) {
        Memcpy big;
        big.startNs = 1'000'000 + s * 10'000'000 + 100'000;
        big.endNs = big.startNs + 400'000;
        big.device = 0;
        big.bytes = 4'000'000;
        big.copyKind = CopyKind::DtoH;
        big.srcKind = MemoryKind::Device;
        big.dstKind = MemoryKind::Pageable;
        builder.addMemcpy(big);
        Memcpy scalar = big;
        scalar.startNs += 1'000'000;
        scalar.endNs = scalar.startNs + 5'000;
        scalar.bytes = 4;
        builder.addMemcpy(scalar);
    }
    std::vector<TraceModel> models;
    models.push_back(builder.finish());
    const auto run = ruletest::runRuleOnModels("pageable-memcpy", std::move(models));
    ASSERT_EQ(run.findings(), 1u);
    EXPECT_EQ(run.outcome.findings[0].evidence.eventsTotal, 4u);
    ASSERT_TRUE(run.outcome.findings[0].gain);
    EXPECT_EQ(run.outcome.findings[0].gain->perStepNs, 200'000); // half of 400 us per step
}
