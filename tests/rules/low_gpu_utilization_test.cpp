// low-gpu-utilization on real traces and synthetic ones. Kernel counts and medians were derived with a
// Python script over the JSON (kernels on the busiest device; idle gaps between the merged kernel,
// copy and set intervals), independently of the importer.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

TEST(LowGpuUtilization, FiresOnTinyLinearModel) {
    // step_based_trace: 130 kernels in 5 steps (26 each), all shorter than 10 us (median 2 us); the
    // GPU is busy 4% of the time, and gaps shorter than 1 ms hold 96% of it.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz");
    const auto run = ruletest::runRule("low-gpu-utilization", { path });
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_NE(f.title.find("26 kernels per step (median 2 us)"), std::string::npos) << f.title;
    ASSERT_TRUE(f.gain);
    EXPECT_GT(f.gain->stepShare, 0.90);
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_EQ(f.evidence.events.size(), 26u); // the kernels of the median step
    EXPECT_NE(f.fixPython.find("torch.compile(model, mode=\"reduce-overhead\")"), std::string::npos);
    EXPECT_NE(f.fixPython.find("torch.cuda.CUDAGraph()"), std::string::npos);
    EXPECT_NE(f.fixCpp.find("at::cuda::CUDAGraph"), std::string::npos);
}

TEST(LowGpuUtilization, FiresOnEagerDecodeAndSmallBertInference) {
    // b200 eager vLLM decode: median kernel 6.3 us, 84% of the time in gaps shorter than 1 ms.
    // bert-small on H100: 60 kernels, median 4.6 us, GPU busy 7% of the step, gaps < 1 ms 89.5%.
    for (const char* file : { "tracelens/tests/traces/b200/eager_trace.json.gz",
             "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz" }) {
        TUNEUP_REQUIRE_SHARED_TRACE(path, file);
        const auto run = ruletest::runRule("low-gpu-utilization", { path });
        ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << file << ": " << run.outcome.reason;
        ASSERT_TRUE(run.outcome.findings[0].gain);
        EXPECT_GT(run.outcome.findings[0].gain->stepShare, 0.75) << file;
    }
}

TEST(LowGpuUtilization, QuietOnComputeHeavySteps) {
    // Python: ns_resolution ResNet (median kernel 28 us, GPU busy 98%), timesformer (median 59 us),
    // resnet_kineto (median 194 us); ResNet-50 DDP rank 1 has small kernels but only 13% of its step in
    // short gaps (its idle is the DataLoader's).
    for (const char* file : { "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
             "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
             "param/et_replay/tests/inputs/resnet_kineto.json.gz",
             "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/"
             "worker1_span1.pt.trace.json.gz" }) {
        TUNEUP_REQUIRE_SHARED_TRACE(path, file);
        const auto run = ruletest::runRule("low-gpu-utilization", { path });
        EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << file << ": " << run.outcome.reason;
        EXPECT_NE(run.outcome.reason.find("not launch-bound"), std::string::npos) << run.outcome.reason;
    }
}

TEST(LowGpuUtilization, WithoutStepsTheWholeWindowIsEvaluated) {
    // AlexNet benchmark: no step ranges; the 43.4 s window is one span, and its kernels are not small.
    TUNEUP_REQUIRE_SHARED_TRACE(
        path, "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz");
    const auto run = ruletest::runRule("low-gpu-utilization", { path });
    EXPECT_EQ(run.report.ranks[0].steps.detection.source, StepSource::WholeWindow);
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("kernels are not small"), std::string::npos) << run.outcome.reason;
}

namespace {

// Synthetic: 5 steps of `kernels` kernels of `kernelNs` each, `gapNs` apart, starting at the step.
TraceModel syntheticKernels(int kernels, int64_t kernelNs, int64_t gapNs) {
    const int64_t stepNs = kernels * (kernelNs + gapNs);
    auto b = ruletest::syntheticTrace(5, stepNs);
    for (int s = 0; s < 5; ++s)
        for (int i = 0; i < kernels; ++i) {
            Kernel k;
            k.startNs = 1'000'000 + s * stepNs + i * (kernelNs + gapNs);
            k.endNs = k.startNs + kernelNs;
            k.device = 0;
            k.name = b.intern("void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>>");
            b.addKernel(k);
        }
    return b.finish();
}

} // namespace

TEST(LowGpuUtilization, SyntheticLaunchBoundStepFires) {
    // 100 kernels of 5 us, 30 us apart: 3 ms of gaps in a 3.5 ms step (86%).
    std::vector<TraceModel> models;
    models.push_back(syntheticKernels(100, 5'000, 30'000));
    const auto run = ruletest::runRuleOnModels("low-gpu-utilization", std::move(models));
    ASSERT_EQ(run.findings(), 1u) << run.outcome.reason;
    ASSERT_TRUE(run.outcome.findings[0].gain);
    EXPECT_EQ(run.outcome.findings[0].gain->perStepNs, 100 * 30'000);
    EXPECT_NE(run.outcome.findings[0].title.find("100 kernels per step (median 5 us)"), std::string::npos)
        << run.outcome.findings[0].title;
}

TEST(LowGpuUtilization, SyntheticLargeKernelsAreClean) {
    // 100 kernels of 1 ms with the same 30 us gaps: compute-bound.
    std::vector<TraceModel> models;
    models.push_back(syntheticKernels(100, 1'000'000, 30'000));
    const auto run = ruletest::runRuleOnModels("low-gpu-utilization", std::move(models));
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean);
    EXPECT_NE(run.outcome.reason.find("kernels are not small"), std::string::npos) << run.outcome.reason;
}

TEST(LowGpuUtilization, SyntheticSmallKernelsOnABusyGpuAreClean) {
    // 5 us kernels with 1 us gaps: small, but the GPU is busy 83% of the step.
    std::vector<TraceModel> models;
    models.push_back(syntheticKernels(100, 5'000, 1'000));
    const auto run = ruletest::runRuleOnModels("low-gpu-utilization", std::move(models));
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean);
    EXPECT_NE(run.outcome.reason.find("the GPU is busy 83%"), std::string::npos) << run.outcome.reason;
}
