// low-gpu-utilization on real traces and synthetic ones. Kernel counts and medians were derived with a
// Python script over the JSON (kernels on the busiest device; idle gaps between the merged kernel,
// copy and set intervals), independently of the importer.

#include "advise/rank_analysis.h"
#include "import/importer.h"
#include "launch_profile.h"
#include "rule_test_support.h"

#include <algorithm>

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

// ---- CUDA graphs: a replay is one launch ---------------------------------------------------------------

namespace {

std::string kinetoFixture(const std::string& name) {
    return std::string(TUNEUP_KINETO_FIXTURES) + "/" + name;
}

} // namespace

TEST(LowGpuUtilization, ACudaGraphReplayIsOneLaunch) {
    // tests/fixtures/kineto/cuda_graph_replay.json: each 1 ms step replays one graph (a memset node and 40
    // Triton kernels of 4 us) and launches 3 kernels of 5 us one by one; the GPU is busy 17.7%. Counted
    // kernel by kernel (43 kernels, median 4 us, 82% of the step in gaps shorter than 1 ms) it would read
    // launch-bound and advise capturing in a CUDA graph a step that replays one already.
    const auto run = ruletest::runRule("low-gpu-utilization", { kinetoFixture("cuda_graph_replay.json") });
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("4.0 launches (1.0 CUDA graph replays of 40.0 kernels, 3.0 kernels launched "
                                      "one by one) per step: too few to be launch-bound"),
        std::string::npos)
        << run.outcome.reason;
}

TEST(LowGpuUtilization, LaunchProfileOfGraphReplays) {
    const TraceModel model = importTrace(kinetoFixture("cuda_graph_replay.json"));
    const RankAnalysis rank = analyzeRank(model, 0);
    const RuleContext context(rank, 1);
    const rules::LaunchProfile p = rules::launchProfile(context);
    ASSERT_EQ(p.steps, 4u);
    EXPECT_EQ(p.kernels, 12u);
    EXPECT_EQ(p.graphReplays, 4u);
    EXPECT_EQ(p.graphKernels, 160u);
    EXPECT_DOUBLE_EQ(p.launchesPerStep, 4.0);
    // Twelve kernels of 5 us and four replays of 243 us (the memset node's start to the last kernel's end).
    EXPECT_EQ(p.medianLaunchNs, 5'000);
    // The kernels' cudaLaunchKernel calls (8 us); the graph launches (30 us) are not a kernel's launch cost.
    EXPECT_EQ(p.medianLaunchCallNs, 8'000);
    // The graph kernels are GPU work: 2 us memset, 160 us of graph kernels, 15 us of eager kernels.
    EXPECT_EQ(p.medianBusyNs, 177'000);
    EXPECT_EQ(rank.steps.median.computeNs, 175'000);
    // Per step, the gaps between the replay's own nodes (3 us after the memset, 39 of 2 us) are neither
    // launch gaps nor other host idle; the launch gaps are the step's head (95 us), the gaps before and
    // between the eager kernels (82, 45, 45 us) and its tail (475 us).
    EXPECT_EQ(
        std::count_if(rank.steps.gaps.begin(), rank.steps.gaps.end(), [](const IdleGap& g) { return g.inGraph; }), 160);
    for (size_t s = 0; s < p.steps; ++s) {
        EXPECT_EQ(p.graphGapNs[s], 81'000) << s;
        EXPECT_EQ(p.launchGapNs[s], 742'000) << s;
        EXPECT_EQ(p.otherHostNs[s], 0) << s;
    }
}

namespace {

// 5 steps; each replays a graph of 10 kernels of 50 us, then launches 100 kernels of 5 us one by one, 30 us
// apart: launch-bound outside the graph.
TraceModel launchBoundBesideAGraph() {
    const int64_t stepNs = 10'000 + 500'000 + 100 * 35'000;
    auto b = ruletest::syntheticTrace(5, stepNs);
    const ThreadIndex thread = b.thread(1, 1);
    uint64_t correlation = 1;
    auto call = [&](int64_t start, int64_t durationNs, const char* name) {
        ApiCall c;
        c.startNs = start;
        c.endNs = start + durationNs;
        c.thread = thread;
        c.name = b.intern(name);
        c.correlation = correlation;
        b.addApiCall(c);
    };
    auto kernel = [&](int64_t start, int64_t durationNs, const char* name) {
        Kernel k;
        k.startNs = start;
        k.endNs = start + durationNs;
        k.device = 0;
        k.stream = 7;
        k.correlation = correlation;
        k.name = b.intern(name);
        b.addKernel(k);
    };
    for (int s = 0; s < 5; ++s) {
        const int64_t start = 1'000'000 + s * stepNs;
        call(start + 1'000, 20'000, "cudaGraphLaunch");
        for (int i = 0; i < 10; ++i)
            kernel(start + 10'000 + i * 50'000, 50'000, "ampere_sgemm_128x64_tn");
        ++correlation;
        for (int i = 0; i < 100; ++i) {
            const int64_t at = start + 510'000 + 30'000 + i * 35'000;
            call(at - 10'000, 4'000, "cudaLaunchKernel");
            kernel(at, 5'000, "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float>>");
            ++correlation;
        }
    }
    return b.finish();
}

} // namespace

TEST(LowGpuUtilization, SyntheticLaunchBoundBesideGraphsAdvisesExtendingThem) {
    std::vector<TraceModel> models;
    models.push_back(launchBoundBesideAGraph());
    const auto run = ruletest::runRuleOnModels("low-gpu-utilization", std::move(models));
    ASSERT_EQ(run.findings(), 1u) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_NE(f.title.find("launch-bound outside CUDA graphs"), std::string::npos) << f.title;
    EXPECT_NE(f.title.find("100 kernels per step launched one by one beside 1 graph replays"), std::string::npos)
        << f.title;
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 10'000 + 100 * 30'000); // the step's head and the gaps before each eager kernel
    EXPECT_EQ(ruletest::evidenceFact(f, "median launch call (CPU)"), "4 us");
    EXPECT_EQ(ruletest::evidenceFact(f, "launches per step"),
        "101 launches (1 CUDA graph replays of 10 kernels, 100 kernels launched one by one)");
    // Not "capture the step in a CUDA graph": it replays one; bring the rest into graphs.
    EXPECT_NE(f.fixPython.find("make_graphed_callables"), std::string::npos) << f.fixPython;
    EXPECT_NE(f.fixPython.find("TORCH_LOGS=\"graph_breaks,perf_hints\""), std::string::npos) << f.fixPython;
    EXPECT_EQ(f.fixPython.find("torch.cuda.CUDAGraph()"), std::string::npos) << f.fixPython;
    EXPECT_NE(f.detail.find("already replays CUDA graphs"), std::string::npos) << f.detail;
}
