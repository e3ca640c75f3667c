// unfused-pointwise on real traces and synthetic ones. The Qwen figures were derived with a Python script
// over the JSON (no tuneup code): kernels per (pid, tid) GPU row in time order; members are elementwise
// (elementwise_kernel/elementwise/pointwise names) or reduction (reduce_kernel, softmax, norm) kernels
// under 100 us, not Triton; a run is >= 4 consecutive members less than 50 us apart, at least half
// elementwise; saving per run = max(0, kernel time - 2 x longest) + gaps capped at 10 us each.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

const char* kAdd = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>, "
                   "at::detail::Array<char*, 3> >(int, at::native::AddFunctor<float>, at::detail::Array<char*, 3>)";

// `count` elementwise kernels of 3 us, 5 us apart, launched from thread 1 at `t`, then a GEMM.
void addChain(TraceBuilder& b, int64_t t, int count, uint64_t& correlation) {
    for (int i = 0; i < count + 1; ++i) {
        ApiCall call;
        call.startNs = t - 50'000 + i * 4'000;
        call.endNs = call.startNs + 3'000;
        call.thread = b.thread(1, 1);
        call.name = b.intern("cudaLaunchKernel");
        call.correlation = ++correlation;
        b.addApiCall(call);
        Kernel k;
        k.startNs = t + i * 8'000;
        k.endNs = k.startNs + (i < count ? 3'000 : 40'000);
        k.device = 0;
        k.stream = 7;
        k.correlation = correlation;
        k.name = b.intern(i < count ? kAdd : "ampere_sgemm_128x64_nn");
        b.addKernel(k);
    }
}

} // namespace

TEST(UnfusedPointwise, FiresOnQwenEagerInference) {
    // Qwen1.5-0.5B generation in eager bf16 (RMSNorm, rotary embedding, SiLU as separate kernels):
    // 139 runs, 941 kernels, saving 12107 us over the trace.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz");
    const auto run = ruletest::runRule("unfused-pointwise", { path });
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings.at(0);
    EXPECT_EQ(f.evidence.eventsTotal, 941u);
    EXPECT_EQ(f.evidence.events.size(), 50u);
    EXPECT_EQ(f.evidence.spans.size(), 10u);
    ASSERT_FALSE(f.evidence.facts.empty());
    EXPECT_EQ(f.evidence.facts[0].second.rfind("139 ", 0), 0u) << f.evidence.facts[0].second;
    const size_t steps = std::max<size_t>(run.report.ranks[0].steps.detection.steps.size(), 1);
    ASSERT_TRUE(f.gain);
    EXPECT_NEAR(double(f.gain->perStepNs) * double(steps), 12'107'000.0, 150'000.0);
    EXPECT_NE(f.fixPython.find("torch.compile"), std::string::npos);
    EXPECT_GE(f.severity, Severity::Warning);
}

TEST(UnfusedPointwise, QuietOnTracesWithoutElementwiseChains) {
    // ResNet DDP with a foreach SGD (multi_tensor_apply), and ViT inference: no run of 4.
    for (const char* relative : { "hta/tests/data/nccl_parser_config/nccl_data.json.gz",
             "tracelens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz" }) {
        TUNEUP_REQUIRE_SHARED_TRACE(path, relative);
        const auto run = ruletest::runRule("unfused-pointwise", { path });
        EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << relative << ": " << run.outcome.reason;
        EXPECT_NE(run.outcome.reason.find("no run of 4"), std::string::npos) << run.outcome.reason;
    }
    // ResNet-50 with a per-parameter SGD: runs exist but the 1.9 s steps are data-loader bound (0.1%).
    TUNEUP_REQUIRE_SHARED_TRACE(resnet,
        "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz");
    const auto run = ruletest::runRule("unfused-pointwise", { resnet });
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("negligible"), std::string::npos) << run.outcome.reason;
}

TEST(UnfusedPointwise, NotEvaluatedWithoutKernels) {
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/rank_non_gpu/rank_non_gpu.json.gz");
    const auto run = ruletest::runRule("unfused-pointwise", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated);
}

TEST(UnfusedPointwise, SyntheticOptimizerChainAdvisesFusedOptimizer) {
    // Synthetic: per 1 ms step, 5 elementwise kernels of 3 us, 5 us apart, launched inside Optimizer.step.
    // Saving per run: (15 - 2 x 3) us of kernels + 4 gaps of 5 us = 29 us.
    auto b = ruletest::syntheticTrace(3, 1'000'000);
    uint64_t correlation = 0;
    for (int s = 0; s < 3; ++s) {
        const int64_t t = 1'000'000 + s * 1'000'000 + 400'000;
        Annotation opt;
        opt.startNs = t - 100'000;
        opt.endNs = t;
        opt.thread = b.thread(1, 1);
        opt.name = b.intern("Optimizer.step#SGD.step");
        b.addAnnotation(opt);
        addChain(b, t, 5, correlation);
    }
    std::vector<TraceModel> models;
    models.push_back(b.finish());
    const auto run = ruletest::runRuleOnModels("unfused-pointwise", std::move(models));
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_EQ(f.evidence.eventsTotal, 15u);
    EXPECT_EQ(f.gain->perStepNs, 29'000);
    EXPECT_EQ(f.severity, Severity::Warning); // 2.9% of the step
    EXPECT_NE(f.title.find("mostly in the optimizer"), std::string::npos) << f.title;
    EXPECT_NE(f.fixPython.find("fused=True"), std::string::npos);
    EXPECT_NE(f.fixCpp.find("_foreach_add_"), std::string::npos);
}

TEST(UnfusedPointwise, SyntheticShortChainIsClean) {
    // Synthetic: chains of 3 elementwise kernels only.
    auto b = ruletest::syntheticTrace(3, 1'000'000);
    uint64_t correlation = 0;
    for (int s = 0; s < 3; ++s)
        addChain(b, 1'000'000 + s * 1'000'000 + 400'000, 3, correlation);
    std::vector<TraceModel> models;
    models.push_back(b.finish());
    const auto run = ruletest::runRuleOnModels("unfused-pointwise", std::move(models));
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
}
