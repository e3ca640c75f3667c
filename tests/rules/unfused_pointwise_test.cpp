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

// ---- torch.compile regions ----------------------------------------------------------------------------

namespace {

// A compiled region on thread 1 around the launches of addChain(b, t, ...), and optionally a Triton
// kernel launched from it (Inductor's regions launch Triton kernels; a non-fusing backend's do not).
void addCompiledRegion(TraceBuilder& b, int64_t t, bool withTriton, uint64_t& correlation) {
    CpuOp region;
    region.startNs = t - 60'000;
    region.endNs = t - 20'000;
    region.thread = b.thread(1, 1);
    region.name = b.intern("CompiledFunction");
    b.addCpuOp(region);
    if (!withTriton) return;
    ApiCall call;
    call.startNs = t - 58'000;
    call.endNs = call.startNs + 1'000;
    call.thread = b.thread(1, 1);
    call.name = b.intern("cuLaunchKernel");
    call.correlation = ++correlation;
    b.addApiCall(call);
    Kernel k;
    k.startNs = t - 30'000;
    k.endNs = k.startNs + 10'000;
    k.device = 0;
    k.stream = 7;
    k.correlation = correlation;
    k.name = b.intern("triton_poi_fused_add_mul_0");
    b.addKernel(k);
}

// 3 steps of 1 ms, each a chain of 6 elementwise kernels (then a GEMM); `region`: launched from a
// CompiledFunction, `triton`: which also launched a Triton kernel.
ruletest::RuleRun chainRun(bool region, bool triton) {
    auto b = ruletest::syntheticTrace(3, 1'000'000);
    uint64_t correlation = 0;
    for (int s = 0; s < 3; ++s) {
        const int64_t t = 1'000'000 + s * 1'000'000 + 400'000;
        if (region) addCompiledRegion(b, t, triton, correlation);
        addChain(b, t, 6, correlation);
    }
    std::vector<TraceModel> models;
    models.push_back(b.finish());
    return ruletest::runRuleOnModels("unfused-pointwise", std::move(models));
}

} // namespace

TEST(UnfusedPointwise, SyntheticChainInsideAnInductorRegionIsTheCompilersChoice) {
    // Launched from a region that also runs Triton kernels (Inductor fuses): the chain is what the
    // compiler left unfused (library calls, fallbacks), not advice.
    const auto compiled = chainRun(true, true);
    EXPECT_EQ(compiled.outcome.status, RuleStatus::Clean) << compiled.outcome.reason;
    EXPECT_NE(compiled.outcome.reason.find("18 elementwise kernels launched inside torch.compile regions left out"),
        std::string::npos)
        << compiled.outcome.reason;
    // The same chain in eager code: a run per step, advice to compile.
    const auto eager = chainRun(false, false);
    ASSERT_EQ(eager.outcome.status, RuleStatus::Raised) << eager.outcome.reason;
    EXPECT_NE(eager.outcome.findings[0].fixPython.find("model = torch.compile(model)"), std::string::npos);
}

TEST(UnfusedPointwise, SyntheticChainInsideANonFusingBackendsRegionCounts) {
    // Compiled regions that run no Triton kernel at all: a backend that does not fuse (cudagraphs,
    // aot_eager). The chain counts, and the advice is the fusing backend.
    const auto run = chainRun(true, false);
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_EQ(f.evidence.eventsTotal, 18u);
    EXPECT_EQ(ruletest::evidenceFact(f, "in torch.compile regions"),
        "100% of the saving (no Triton kernels: the backend does not fuse)");
    EXPECT_NE(f.detail.find("the backend in use does not fuse"), std::string::npos) << f.detail;
    EXPECT_NE(f.fixPython.find("use Inductor, the default"), std::string::npos) << f.fixPython;
    EXPECT_NE(f.fixPython.find("backend=\"cudagraphs\""), std::string::npos) << f.fixPython;
}

TEST(UnfusedPointwise, RealTraceCompiledWithANonFusingBackend) {
    // HTA trace_diff/test: CompiledFunction(Backward) regions replay aten kernels through CUDA graphs and no
    // Triton kernel runs anywhere (4812 kernels launched in the regions, 0 Triton: kernel_origin_test).
    // Their elementwise chains are real fusion work: the finding keeps them (48 runs, 594 kernels per step)
    // and says which share of the saving is in the compiled regions.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/trace_diff/test/test.json.gz");
    const auto run = ruletest::runRule("unfused-pointwise", { path });
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_NE(f.title.find("48 runs of back-to-back elementwise kernels per step (594 kernels"), std::string::npos)
        << f.title;
    EXPECT_NE(ruletest::evidenceFact(f, "in torch.compile regions").find("of the saving (no Triton kernels"),
        std::string::npos);
    EXPECT_NE(f.detail.find("the backend in use does not fuse"), std::string::npos) << f.detail;
}

TEST(UnfusedPointwise, RealTraceCompiledWithInductorKeepsItsEagerRuns) {
    // HTA negative_queue rank 0: Inductor (75 Triton kernels launched from CompiledFunction regions); its
    // eager code outside the regions still runs 28 runs of elementwise kernels per step.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/negative_queue_length_values_check/rank0.json.gz");
    const auto run = ruletest::runRule("unfused-pointwise", { path });
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_NE(f.title.find("28 runs"), std::string::npos) << f.title;
    EXPECT_NE(f.detail.find("81 Triton kernels"), std::string::npos) << f.detail;
    EXPECT_EQ(f.detail.find("does not fuse"), std::string::npos) << f.detail;
    EXPECT_NE(f.fixPython.find("model = torch.compile(model)"), std::string::npos);
}
