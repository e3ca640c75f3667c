// gpu-idle on real traces and synthetic ones. Gaps were derived with a Python script over the JSON
// (idle intervals between the merged kernels, copies and sets of the busiest device inside
// ProfilerStep ranges, and the CPU events overlapping them), independently of the importer.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

std::string fact(const Finding& f, const std::string& label) {
    for (const auto& [k, v] : f.evidence.facts)
        if (k == label) return v;
    return {};
}

} // namespace

TEST(GpuIdle, FiresOnTimesformerPreprocessing) {
    // Python: ProfilerStep#6 (382.5 ms) opens with a 218.1 ms GPU gap while the training thread runs
    // transformers' video pre-processing (image_processing_videomae.py preprocess) on the CPU.
    TUNEUP_REQUIRE_SHARED_TRACE(
        path, "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz");
    const auto run = ruletest::runRule("gpu-idle", { path });
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_NE(f.title.find("biggest gap 218 ms"), std::string::npos) << f.title;
    EXPECT_NE(f.title.find("preprocess"), std::string::npos) << f.title;
    EXPECT_NE(fact(f, "gap 1").find("at 0 ns into step 6"), std::string::npos) << fact(f, "gap 1");
    ASSERT_TRUE(f.gain);
    EXPECT_NEAR(f.gain->stepShare, 0.58, 0.02);
    EXPECT_EQ(f.severity, Severity::Error);
    ASSERT_FALSE(f.evidence.spans.empty());
    EXPECT_NEAR(double(f.evidence.spans[0].durationNs()), 218.12e6, 0.1e6);
}

TEST(GpuIdle, LeavesOutTheEndOfATraceThatStoppedRecordingCuda) {
    // ResNet-50 DDP rank 0: the trace has no CUDA call or kernel after 1.426 s into ProfilerStep#8 while
    // its CPU operators go on for 423.4 ms: missing data, not idle. The data wait is dataloader-stall's.
    TUNEUP_REQUIRE_SHARED_TRACE(path,
        "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz");
    const auto run = ruletest::runRule("gpu-idle", { path });
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_NE(fact(f, "left out").find("423 ms"), std::string::npos) << fact(f, "left out");
    EXPECT_EQ(f.title.find("423"), std::string::npos) << f.title;
    ASSERT_TRUE(f.gain);
    EXPECT_LT(f.gain->stepShare, 0.15);
}

TEST(GpuIdle, QuietOnBusyGpusAndWhereOtherRulesExplainTheIdle) {
    // ns_resolution: the GPU is busy 98% of the step. step_based_trace and the b200 eager decode are
    // launch-bound: their short gaps are low-gpu-utilization's. resnet_kineto's idle is the DataLoader's.
    for (const char* file :
        { "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
            "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz",
            "tracelens/tests/traces/b200/eager_trace.json.gz", "param/et_replay/tests/inputs/resnet_kineto.json.gz" }) {
        TUNEUP_REQUIRE_SHARED_TRACE(path, file);
        const auto run = ruletest::runRule("gpu-idle", { path });
        EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << file << ": " << run.outcome.reason;
    }
}

TEST(GpuIdle, DoesNotCountIdleThatOtherRulesClaim) {
    // ResNet-50 DDP rank 1: the GPU is idle 85% of the median step; the DataLoader's part (70%) is
    // dataloader-stall's, so gpu-idle keeps the rest.
    TUNEUP_REQUIRE_SHARED_TRACE(path,
        "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker1_span1.pt.trace.json.gz");
    const auto idle = ruletest::runRule("gpu-idle", { path });
    const auto data = ruletest::runRule("dataloader-stall", { path });
    ASSERT_EQ(idle.findings(), 1u) << idle.outcome.reason;
    ASSERT_EQ(data.findings(), 1u);
    const double both = idle.outcome.findings[0].gain->stepShare + data.outcome.findings[0].gain->stepShare;
    const auto& median = idle.report.ranks[0].steps.median;
    EXPECT_LE(both, double(median.idleNs) / double(median.stepNs) + 0.02);
    EXPECT_LT(idle.outcome.findings[0].gain->stepShare, 0.20);
}

TEST(GpuIdle, NotEvaluatedWithoutGpuActivity) {
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/rank_non_gpu/rank_non_gpu.json.gz");
    const auto run = ruletest::runRule("gpu-idle", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(run.outcome.reason.find("GPU kernel activity"), std::string::npos) << run.outcome.reason;
}

namespace {

// Synthetic: 4 steps of 10 ms; the GPU computes for 7 ms, then idles 3 ms while the training thread
// runs a CPU op `hostOp` (when given); a DataLoader wait covers `dataNs` at the start of the idle.
// With `sampled`, the agent's thread samples say the main thread sleeps (nanosleep) for the first 2 ms
// of each gap and runs for the last 1 ms.
TraceModel syntheticHostGap(const char* hostOp, int64_t dataNs, bool sampled = false) {
    auto b = ruletest::syntheticTrace(4, 10'000'000);
    const ThreadIndex thread = b.thread(1, 1);
    uint64_t correlation = 1;
    for (int s = 0; s < 4; ++s) {
        const int64_t t0 = 1'000'000 + s * 10'000'000;
        ApiCall launch;
        launch.startNs = t0;
        launch.endNs = t0 + 5'000;
        launch.thread = thread;
        launch.name = b.intern("cudaLaunchKernel");
        launch.correlation = correlation;
        b.addApiCall(launch);
        Kernel k;
        k.startNs = t0;
        k.endNs = t0 + 7'000'000;
        k.device = 0;
        k.correlation = correlation++;
        k.name = b.intern("volta_sgemm_128x64_nn");
        b.addKernel(k);
        if (hostOp) {
            CpuOp op;
            op.startNs = t0 + 7'100'000;
            op.endNs = t0 + 9'900'000;
            op.thread = thread;
            op.name = b.intern(hostOp);
            b.addCpuOp(op);
        }
        if (sampled) {
            b.addThreadState({ .timeNs = t0, .thread = thread, .state = 'R', .syscall = -1 });
            b.addThreadState({ .timeNs = t0 + 7'000'000, .thread = thread, .state = 'S', .syscall = 35 });
            b.addThreadState({ .timeNs = t0 + 9'000'000, .thread = thread, .state = 'R', .syscall = -1 });
            // The bootstrap's Python samples, every 1 ms: in the gap, two in the augmentation, one in the step.
            for (int64_t ms = 0; ms < 10; ++ms)
                b.addPythonSample({ t0 + ms * 1'000'000 + 500'000, thread,
                    b.intern(ms < 7  ? "train.py(57): train_step"
                            : ms < 9 ? "data/augment.py(88): resize"
                                     : "train.py(60): train_step") });
        }
        if (dataNs > 0) {
            Annotation next;
            next.startNs = t0 + 7'000'000;
            next.endNs = next.startNs + dataNs;
            next.thread = thread;
            next.name = b.intern("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
            b.addAnnotation(next);
        }
    }
    ApiCall last; // the trace records CUDA calls to its end
    last.startNs = 1'000'000 + 4 * 10'000'000 - 1'000;
    last.endNs = last.startNs + 500;
    last.thread = thread;
    last.name = b.intern("cudaEventQuery");
    b.addApiCall(last);
    return b.finish();
}

} // namespace

TEST(GpuIdle, SyntheticHostGapFiresAndNamesTheOperator) {
    std::vector<TraceModel> models;
    models.push_back(syntheticHostGap("aten::_unique2", 0));
    const auto run = ruletest::runRuleOnModels("gpu-idle", std::move(models));
    ASSERT_EQ(run.findings(), 1u) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 3'000'000);
    EXPECT_NEAR(f.gain->stepShare, 0.30, 1e-9);
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_NE(f.title.find("biggest gap 3 ms, training thread in aten::_unique2"), std::string::npos) << f.title;
    EXPECT_EQ(f.evidence.eventsTotal, 4u);
    EXPECT_EQ(f.evidence.spans.size(), 4u);
}

TEST(GpuIdle, SyntheticSampledThreadStatesSayWhatTheMainThreadDid) {
    // A tuneup recording samples the main thread: 2 of each 3 ms gap asleep, 1 running.
    std::vector<TraceModel> models;
    models.push_back(syntheticHostGap("aten::_unique2", 0, true));
    const auto run = ruletest::runRuleOnModels("gpu-idle", std::move(models));
    ASSERT_EQ(run.findings(), 1u) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_EQ(fact(f, "main thread in these gaps (sampled)"), "67% sleeping, 33% running");
    EXPECT_NE(f.detail.find("The main thread was mostly sleeping"), std::string::npos) << f.detail;
    EXPECT_NE(
        fact(f, "gap 1").find("training thread in aten::_unique2; main thread sleeping (nanosleep)"), std::string::npos)
        << fact(f, "gap 1");
}

TEST(GpuIdle, SyntheticSampledPythonNamesTheLineTheMainThreadWasAt) {
    // The samples in the gaps: 8 at data/augment.py:88, 4 at train.py:60; those while the GPU ran do not count.
    std::vector<TraceModel> models;
    models.push_back(syntheticHostGap("aten::_unique2", 0, true));
    const auto run = ruletest::runRuleOnModels("gpu-idle", std::move(models));
    ASSERT_EQ(run.findings(), 1u) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_EQ(fact(f, "main thread's code in these gaps (sampled)"),
        "67% data/augment.py:88 in resize; 33% train.py:60 in train_step (12 samples)");
    ASSERT_EQ(f.sources.size(), 2u);
    EXPECT_TRUE(f.sources[0].sampled);
    EXPECT_EQ(f.sources[0].file, "data/augment.py");
    EXPECT_EQ(f.sources[0].line, 88);
    EXPECT_EQ(f.sources[0].events, 8u);
    EXPECT_NE(f.detail.find("The main thread's code was mostly at data/augment.py:88 (resize), 67% of the samples"),
        std::string::npos)
        << f.detail;
}

TEST(GpuIdle, SyntheticWithoutSamplesSaysNothingOfThem) {
    std::vector<TraceModel> models;
    models.push_back(syntheticHostGap("aten::_unique2", 0));
    const auto run = ruletest::runRuleOnModels("gpu-idle", std::move(models));
    ASSERT_EQ(run.findings(), 1u) << run.outcome.reason;
    EXPECT_EQ(fact(run.outcome.findings[0], "main thread in these gaps (sampled)"), "");
    EXPECT_EQ(fact(run.outcome.findings[0], "gap 1").find("main thread"), std::string::npos);
    EXPECT_EQ(run.outcome.findings[0].detail.find("The main thread"), std::string::npos);
    EXPECT_TRUE(run.outcome.findings[0].sources.empty());
}

TEST(GpuIdle, SyntheticDataWaitIsNotCountedTwice) {
    // 2.5 ms of the 3 ms gap is a DataLoader wait: 0.5 ms (5%) is left, below the threshold.
    std::vector<TraceModel> models;
    models.push_back(syntheticHostGap(nullptr, 2'500'000));
    const auto run = ruletest::runRuleOnModels("gpu-idle", std::move(models));
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("500 us in the median step (5%"), std::string::npos) << run.outcome.reason;
}

// No steps is not no analysis (issue 16): a GPU busy 2% of a one-second window, with nothing that marks
// steps, is a finding, and the report says the window was analysed as one span.
TEST(GpuIdle, GpuBusyTwoPercentOfAWindowWithoutSteps) {
    TraceBuilder b(SourceFormat::KinetoJson, "window.json");
    const StringId op = b.intern("aten::mm"), kernel = b.intern("ampere_sgemm_128x64_nn");
    for (int i = 0; i < 10; ++i) {
        const int64_t at = i * 100'000'000; // one 2 ms kernel every 100 ms, from an op on the training thread
        CpuOp o;
        o.startNs = at;
        o.endNs = at + 50'000;
        o.name = op;
        o.thread = b.thread(1, 1);
        b.addCpuOp(o);
        Kernel k;
        k.startNs = at + 60'000;
        k.endNs = k.startNs + 2'000'000;
        k.device = 0;
        k.stream = 7;
        k.name = kernel;
        b.addKernel(k);
    }
    std::vector<TraceModel> models;
    models.push_back(b.finish());
    const auto run = ruletest::runRuleOnModels("gpu-idle", std::move(models));
    const StepDetection& steps = run.report.ranks[0].steps.detection;
    ASSERT_EQ(steps.source, StepSource::WholeWindow);
    ASSERT_EQ(steps.steps.size(), 1u);
    EXPECT_EQ(steps.steps[0].durationNs(), 902'060'000);
    EXPECT_NE(steps.detail.find("the whole window, 902 ms, is analysed as one span"), std::string::npos)
        << steps.detail;
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    EXPECT_GT(run.outcome.findings[0].gain->stepShare, 0.9);
}

TEST(GpuIdle, CountsHostIdleAroundCudaGraphReplaysButNotInsideThem) {
    // tests/fixtures/kineto/cuda_graph_replay.json: one graph replay and 3 eager kernels per 1 ms step, too
    // few launches to be launch-bound, so every host-caused gap is gpu-idle's: 742 us per step (74%). The
    // 81 us between the replay's own nodes are not: the host had queued the whole graph.
    const auto run = ruletest::runRule("gpu-idle", { std::string(TUNEUP_KINETO_FIXTURES) + "/cuda_graph_replay.json" });
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 742'000);
    EXPECT_EQ(
        fact(f, "inside CUDA graph replays (not counted)"), "81 us per step: the host had queued the whole graph");
    // 5 per step, none between the graph's nodes; the last step's 475 us tail comes after the trace's last
    // CUDA call and is left out: (4 x 742 - 475) / 4 = 623 us per step.
    EXPECT_EQ(fact(f, "shorter gaps"), "19, 623 us per step");
}
