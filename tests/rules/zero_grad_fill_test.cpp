// zero-grad-fill on real traces and synthetic ones. Expected counts were derived with a Python script
// over the JSON, independently of the importer: kernels whose launching runtime call (joined on
// args.correlation) starts inside an Optimizer.zero_grad range on the same pid/tid.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

const char* kResnetDdp = "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/";

const Finding& only(const ruletest::RuleRun& run) {
    EXPECT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    EXPECT_EQ(run.findings(), 1u);
    static const Finding none;
    return run.findings() ? run.outcome.findings[0] : none;
}

std::string fact(const Finding& f, const std::string& label) {
    for (const auto& [k, v] : f.evidence.facts)
        if (k == label) return v;
    return {};
}

} // namespace

TEST(ZeroGradFill, FiresOnResnet50DdpRank1With161FillsPerCall) {
    TUNEUP_REQUIRE_SHARED_TRACE(path, std::string(kResnetDdp) + "worker1_span1.pt.trace.json.gz");
    const auto run = ruletest::runRule("zero-grad-fill", { path });
    const Finding& f = only(run);
    // Python: 644 FillFunctor kernels launched inside the 4 SGD.zero_grad ranges, 161 each.
    EXPECT_EQ(f.evidence.eventsTotal, 644u);
    EXPECT_EQ(f.evidence.events.size(), 50u); // capped
    EXPECT_EQ(fact(f, "fill kernels"), "644");
    EXPECT_NE(f.title.find("161 fill kernels per call"), std::string::npos) << f.title;
    EXPECT_NE(fact(f, "kernels").find("FillFunctor"), std::string::npos);
    EXPECT_EQ(f.evidence.spans.size(), 4u);
    for (const EventRef& e : f.evidence.events) {
        ASSERT_EQ(e.table, EventTable::Kernel);
        EXPECT_NE(run.models[0].str(run.models[0].kernels.name[size_t(e.row)]).find("FillFunctor"), std::string::npos);
    }
    ASSERT_TRUE(f.gain);
    // Python: 978 us of fill kernels + 11.2 ms of launch calls over 4 steps = about 3.0 ms per step,
    // 0.16% of the 1.9 s steps (the step is data-bound): an Info finding.
    EXPECT_GT(f.gain->perStepNs, 2'800'000);
    EXPECT_LT(f.gain->perStepNs, 3'200'000);
    EXPECT_EQ(f.severity, Severity::Info);
    EXPECT_NE(f.fixPython.find("set_to_none=True"), std::string::npos);
    EXPECT_NE(f.fixCpp.find("zero_grad(/*set_to_none=*/true)"), std::string::npos);
}

TEST(ZeroGradFill, FiresOnResnet50DdpRank0WhereOneCallLaunchesNothing) {
    TUNEUP_REQUIRE_SHARED_TRACE(path, std::string(kResnetDdp) + "worker0_span1.pt.trace.json.gz");
    const auto run = ruletest::runRule("zero-grad-fill", { path });
    const Finding& f = only(run);
    // Python: 483 = 3 x 161; the 4th zero_grad range falls where the trace lost its CUDA activity.
    EXPECT_EQ(f.evidence.eventsTotal, 483u);
    EXPECT_NE(f.title.find("161 fill kernels per call"), std::string::npos) << f.title;
    EXPECT_EQ(fact(f, "zero_grad calls"), "4 (3 launch GPU work)");
}

TEST(ZeroGradFill, FiresOnStepBasedTraceWithFourFillsPerCall) {
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz");
    const auto run = ruletest::runRule("zero-grad-fill", { path });
    const Finding& f = only(run);
    // Python: 5 zero_grad calls x 4 FillFunctor kernels (the gpu_user_annotation copies of the ranges
    // are not CPU ranges and do not count twice).
    EXPECT_EQ(f.evidence.eventsTotal, 20u);
    EXPECT_NE(f.title.find("4 fill kernels per call"), std::string::npos) << f.title;
    EXPECT_EQ(fact(f, "zero_grad calls"), "5 (5 launch GPU work)");
    // 8 us of kernels + ~29 us of launch calls per call in a 1.6 ms step: a few percent.
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.severity, Severity::Warning);
}

TEST(ZeroGradFill, QuietWhereZeroGradLaunchesNothing) {
    // Python: the zero_grad ranges of these traces launch no kernel and no memset.
    struct Case {
        const char* path;
        const char* calls;
    };
    for (const Case& c : { Case { "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
                               "5 zero_grad calls" },
             Case { "hta/tests/data/nccl_parser_config/nccl_data.json.gz", "3 zero_grad calls" },
             Case { "param/et_replay/tests/inputs/resnet_kineto.json.gz", "30 zero_grad calls" } }) {
        TUNEUP_REQUIRE_SHARED_TRACE(path, c.path);
        const auto run = ruletest::runRule("zero-grad-fill", { path });
        EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << c.path << ": " << run.outcome.reason;
        EXPECT_NE(run.outcome.reason.find(c.calls), std::string::npos) << run.outcome.reason;
    }
}

TEST(ZeroGradFill, NotEvaluatedWithOnlyOptimizerStepRanges) {
    // trace_filter/sampled_rank-0 has Optimizer.step#Shampoo.step ranges but no zero_grad range.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/trace_filter/sampled_rank-0.json.gz");
    const auto run = ruletest::runRule("zero-grad-fill", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(run.outcome.reason.find("Optimizer.zero_grad"), std::string::npos);
}

TEST(ZeroGradFill, NotEvaluatedWithoutOptimizerRanges) {
    // The tracelens H100 traces are inference: no optimizer at all.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz");
    const auto run = ruletest::runRule("zero-grad-fill", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(run.outcome.reason.find("optimizer ranges"), std::string::npos) << run.outcome.reason;
}

namespace {

// Synthetic: `steps` steps of 10 ms; each opens a zero_grad range on thread 1 that launches `fills`
// memsets (from C++: cudaMemsetAsync per gradient), and a cuBLAS workspace memset plus a loss
// FillFunctor outside the range.
TraceModel syntheticZeroGrad(int steps, int fills) {
    auto b = ruletest::syntheticTrace(steps, 10'000'000);
    const ThreadIndex thread = b.thread(1, 1);
    uint64_t correlation = 1;
    auto launch = [&](int64_t t, const char* api) {
        ApiCall call;
        call.startNs = t;
        call.endNs = t + 4'000;
        call.thread = thread;
        call.name = b.intern(api);
        call.correlation = correlation;
        b.addApiCall(call);
        return correlation++;
    };
    for (int s = 0; s < steps; ++s) {
        const int64_t t0 = 1'000'000 + s * 10'000'000;
        Annotation zg;
        zg.startNs = t0 + 10'000;
        zg.endNs = zg.startNs + 500'000;
        zg.thread = thread;
        zg.name = b.intern("Optimizer.zero_grad#Adam.zero_grad");
        b.addAnnotation(zg);
        for (int i = 0; i < fills; ++i) {
            Memset m;
            m.correlation = launch(zg.startNs + 1'000 + i * 10'000, "cudaMemsetAsync");
            m.startNs = zg.startNs + 5'000 + i * 10'000;
            m.endNs = m.startNs + 2'000;
            m.device = 0;
            m.bytes = 4096;
            b.addMemset(m);
        }
        Memset workspace; // cuBLAS, in the forward pass: not zero_grad's
        workspace.correlation = launch(t0 + 1'000'000, "cudaMemsetAsync");
        workspace.startNs = t0 + 1'010'000;
        workspace.endNs = workspace.startNs + 3'000;
        workspace.device = 0;
        b.addMemset(workspace);
        Kernel lossFill; // a FillFunctor from the loss: not zero_grad's either
        lossFill.correlation = launch(t0 + 2'000'000, "cudaLaunchKernel");
        lossFill.startNs = t0 + 2'010'000;
        lossFill.endNs = lossFill.startNs + 2'000;
        lossFill.device = 0;
        lossFill.name = b.intern("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>");
        b.addKernel(lossFill);
        Kernel gemm;
        gemm.correlation = launch(t0 + 3'000'000, "cudaLaunchKernel");
        gemm.startNs = t0 + 3'010'000;
        gemm.endNs = gemm.startNs + 5'000'000;
        gemm.device = 0;
        gemm.name = b.intern("ampere_sgemm_128x64_nn");
        b.addKernel(gemm);
    }
    return b.finish();
}

} // namespace

TEST(ZeroGradFill, SyntheticMemsetsInsideZeroGradOnlyCount) {
    std::vector<TraceModel> models;
    models.push_back(syntheticZeroGrad(4, 30));
    const auto run = ruletest::runRuleOnModels("zero-grad-fill", std::move(models));
    const Finding& f = only(run);
    EXPECT_EQ(f.evidence.eventsTotal, 120u); // 4 x 30; the workspace memsets and the loss fills are out
    EXPECT_EQ(fact(f, "memsets"), "120");
    EXPECT_EQ(fact(f, "fill kernels"), "0");
    EXPECT_NE(f.title.find("30 fill memsets per call"), std::string::npos) << f.title;
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 30 * (2'000 + 4'000)); // GPU time + launch call time, per step
}

TEST(ZeroGradFill, SyntheticRecordedSetToNoneIsEvidence) {
    std::vector<TraceModel> plain;
    plain.push_back(syntheticZeroGrad(4, 30));
    EXPECT_EQ(fact(only(ruletest::runRuleOnModels("zero-grad-fill", std::move(plain))),
                  "zero_grad(set_to_none=…) (recorded)"),
        "");
    std::vector<TraceModel> models;
    models.push_back(syntheticZeroGrad(4, 30));
    ruletest::addProgramFact(models[0], "tuneup.zero_grad.set_to_none", 0);
    const auto run = ruletest::runRuleOnModels("zero-grad-fill", std::move(models));
    EXPECT_EQ(fact(only(run), "zero_grad(set_to_none=…) (recorded)"), "False");
}

TEST(ZeroGradFill, TheFixFollowsTheRecordedPyTorchVersion) {
    auto fixFor = [](std::optional<int64_t> version) {
        std::vector<TraceModel> models;
        models.push_back(syntheticZeroGrad(4, 30));
        ruletest::addProgramFact(models[0], "tuneup.zero_grad.set_to_none", 0);
        if (version) ruletest::addProgramFact(models[0], "tuneup.torch.version", *version);
        const auto run = ruletest::runRuleOnModels("zero-grad-fill", std::move(models));
        return std::pair { only(run).fixPython, fact(only(run), "PyTorch (recorded)") };
    };
    // 2.x sets gradients to None by default: the code asks for zeros, and should stop asking.
    const auto [fix2, version2] = fixFor(21100);
    EXPECT_EQ(version2, "2.11.0");
    EXPECT_NE(fix2.find("optimizer.zero_grad()  # PyTorch 2.x"), std::string::npos) << fix2;
    EXPECT_NE(fix2.find("drop set_to_none=False"), std::string::npos) << fix2;
    // 1.x zeroes by default: ask for None.
    const auto [fix1, version1] = fixFor(11300);
    EXPECT_EQ(version1, "1.13.0");
    EXPECT_NE(fix1.find("optimizer.zero_grad(set_to_none=True)  # PyTorch 1.x"), std::string::npos) << fix1;
    // Unknown: the general advice.
    const auto [fix, version] = fixFor(std::nullopt);
    EXPECT_EQ(version, "");
    EXPECT_NE(fix.find("zero_grad(set_to_none=True)  # default since PyTorch 2.0"), std::string::npos) << fix;
}

TEST(ZeroGradFill, SyntheticCleanWhenZeroGradLaunchesNothing) {
    std::vector<TraceModel> models;
    models.push_back(syntheticZeroGrad(3, 0));
    const auto run = ruletest::runRuleOnModels("zero-grad-fill", std::move(models));
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean);
    EXPECT_NE(run.outcome.reason.find("3 zero_grad calls launch no GPU work"), std::string::npos) << run.outcome.reason;
}

namespace {

// Synthetic, CPU only (no GPU activity): 4 steps of 10 ms, each with a 300 us zero_grad range.
TraceModel syntheticHostZeroGrad() {
    auto b = ruletest::syntheticTrace(4, 10'000'000);
    const ThreadIndex thread = b.thread(1, 1);
    for (int s = 0; s < 4; ++s) {
        Annotation zg;
        zg.startNs = 1'000'000 + s * 10'000'000;
        zg.endNs = zg.startNs + 300'000;
        zg.thread = thread;
        zg.name = b.intern("Optimizer.zero_grad#SGD.zero_grad");
        b.addAnnotation(zg);
    }
    return b.finish();
}

} // namespace

TEST(ZeroGradFill, SyntheticCpuOnlyTraceUsesTheRecordedSetToNone) {
    std::vector<TraceModel> models;
    models.push_back(syntheticHostZeroGrad());
    ruletest::addProgramFact(models[0], "tuneup.zero_grad.set_to_none", 0);
    const auto run = ruletest::runRuleOnModels("zero-grad-fill", std::move(models));
    const Finding& f = only(run);
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 300'000);
    EXPECT_EQ(f.gain->confidence, "medium");
    EXPECT_EQ(fact(f, "zero_grad(set_to_none=…) (recorded)"), "False");
    EXPECT_EQ(f.severity, Severity::Warning); // 3% of the step
}

TEST(ZeroGradFill, SyntheticCpuOnlyTraceCleanWithSetToNone) {
    std::vector<TraceModel> models;
    models.push_back(syntheticHostZeroGrad());
    ruletest::addProgramFact(models[0], "tuneup.zero_grad.set_to_none", 1);
    const auto run = ruletest::runRuleOnModels("zero-grad-fill", std::move(models));
    EXPECT_EQ(run.findings(), 0u);
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean);
}

TEST(ZeroGradFill, SyntheticCpuOnlyTraceWithoutTheSettingIsNotEvaluated) {
    std::vector<TraceModel> models;
    models.push_back(syntheticHostZeroGrad());
    const auto run = ruletest::runRuleOnModels("zero-grad-fill", std::move(models));
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(run.outcome.reason.find("set_to_none"), std::string::npos) << run.outcome.reason;
}
