// cudnn-autotuner-off: not evaluated on real Kineto traces (they carry no torch settings); positive and
// negative cases on synthetic traces with the settings the torch probes record.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

constexpr int kSteps = 4;
constexpr int64_t kStepNs = 10'000'000;

// Per step: a 3 ms convolution kernel and a 1 ms GEMM on GPU 0.
TraceBuilder convTrace() {
    auto b = ruletest::syntheticTrace(kSteps, kStepNs);
    for (int s = 0; s < kSteps; ++s) {
        Kernel conv;
        conv.startNs = 1'000'000 + s * kStepNs + 1'000'000;
        conv.endNs = conv.startNs + 3'000'000;
        conv.device = 0;
        conv.stream = 7;
        conv.name = b.intern("void cudnn::winograd_nonfused::winogradForwardData4x4<float, float>(...)");
        b.addKernel(conv);
        Kernel gemm = conv;
        gemm.startNs = conv.endNs + 100'000;
        gemm.endNs = gemm.startNs + 1'000'000;
        gemm.name = b.intern("volta_sgemm_128x64_nn");
        b.addKernel(gemm);
    }
    return b;
}

void addFlag(TraceBuilder& b, std::string_view name, int64_t value, int64_t timeNs) {
    FrameworkFlag f;
    f.timeNs = timeNs;
    f.name = b.intern(name);
    f.value = value;
    b.addFrameworkFlag(f);
}

ruletest::RuleRun run(TraceBuilder& b) {
    std::vector<TraceModel> models;
    models.push_back(b.finish());
    return ruletest::runRuleOnModels("cudnn-autotuner-off", std::move(models));
}

} // namespace

TEST(CudnnAutotunerOff, NotEvaluatedOnRealKinetoTraces) {
    // Kineto traces hold no torch settings: nothing can prove cudnn.benchmark is off.
    TUNEUP_REQUIRE_SHARED_TRACE(resnet, "param/et_replay/tests/inputs/resnet_kineto.json.gz");
    TUNEUP_REQUIRE_SHARED_TRACE(
        ddp, "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz");
    for (const auto& path : { resnet, ddp }) {
        const auto r = ruletest::runRule("cudnn-autotuner-off", { path });
        EXPECT_EQ(r.outcome.status, RuleStatus::NotEvaluated) << path << ": " << r.outcome.reason;
        EXPECT_NE(r.outcome.reason.find("needs torch settings"), std::string::npos) << r.outcome.reason;
    }
}

TEST(CudnnAutotunerOff, NotApplicableWithoutConvolutions) {
    // BERT (transformer) has no convolution kernels: the setting would not matter.
    TUNEUP_REQUIRE_SHARED_TRACE(bert,
        "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/bert_newAPI_fp16_ddp_4dataloader/"
        "worker0_round1.pt.trace.json.gz");
    const auto r = ruletest::runRule("cudnn-autotuner-off", { bert });
    EXPECT_EQ(r.outcome.status, RuleStatus::NotApplicable) << r.outcome.reason;
}

TEST(CudnnAutotunerOff, SyntheticFiresWhenBenchmarkProvenOff) {
    auto b = convTrace();
    addFlag(b, "cudnn.benchmark", 0, 500'000);
    addFlag(b, "cudnn.benchmark", 0, 30'000'000);
    addFlag(b, "cudnn.deterministic", 0, 500'000);
    const auto r = run(b);
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    ASSERT_EQ(r.findings(), 1u);
    const Finding& f = r.outcome.findings[0];
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 300'000); // 10% of 3 ms of convolution per step
    EXPECT_NEAR(f.gain->stepShare, 0.03, 1e-9);
    EXPECT_EQ(f.gain->confidence, "low");
    EXPECT_EQ(f.severity, Severity::Warning);
    EXPECT_EQ(f.evidence.eventsTotal, 4u);
    EXPECT_NE(f.title.find("3 ms per step"), std::string::npos) << f.title;
    EXPECT_NE(f.title.find("75%"), std::string::npos) << f.title; // 3 of 4 ms of kernels
    EXPECT_NE(f.fixPython.find("torch.backends.cudnn.benchmark = True"), std::string::npos);
    EXPECT_NE(f.fixCpp.find("setBenchmarkCuDNN(true)"), std::string::npos);
}

TEST(CudnnAutotunerOff, SyntheticQuietWhenBenchmarkOn) {
    auto b = convTrace();
    addFlag(b, "cudnn.benchmark", 1, 500'000);
    EXPECT_EQ(run(b).outcome.status, RuleStatus::Clean);
    auto switched = convTrace();
    addFlag(switched, "cudnn.benchmark", 0, 500'000);
    addFlag(switched, "cudnn.benchmark", 1, 20'000'000);
    const auto r = run(switched);
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean);
    EXPECT_NE(r.outcome.reason.find("switched on"), std::string::npos) << r.outcome.reason;
}

TEST(CudnnAutotunerOff, SyntheticNotProvenWhenProbeCouldNotRead) {
    // Only unreadable values: not evaluated. One unreadable among offs: not proven, no finding.
    auto unknown = convTrace();
    addFlag(unknown, "cudnn.benchmark", -1, 500'000);
    EXPECT_EQ(run(unknown).outcome.status, RuleStatus::NotEvaluated);
    auto partly = convTrace();
    addFlag(partly, "cudnn.benchmark", 0, 500'000);
    addFlag(partly, "cudnn.benchmark", -1, 20'000'000);
    EXPECT_EQ(run(partly).outcome.status, RuleStatus::Clean);
    // Settings recorded, but not this one.
    auto other = convTrace();
    addFlag(other, "tf32.cublas", 1, 500'000);
    const auto r = run(other);
    EXPECT_EQ(r.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(r.outcome.reason.find("cudnn.benchmark"), std::string::npos);
}

TEST(CudnnAutotunerOff, SyntheticQuietWithoutConvolutionsOrWithNegligibleOnes) {
    auto none = ruletest::syntheticTrace(kSteps, kStepNs);
    Kernel gemm;
    gemm.startNs = 2'000'000;
    gemm.endNs = 3'000'000;
    gemm.device = 0;
    gemm.name = none.intern("volta_sgemm_128x64_nn");
    none.addKernel(gemm);
    addFlag(none, "cudnn.benchmark", 0, 500'000);
    const auto a = run(none);
    EXPECT_EQ(a.outcome.status, RuleStatus::NotApplicable);
    EXPECT_NE(a.outcome.reason.find("no convolution"), std::string::npos) << a.outcome.reason;

    // 20 us of convolution in a 10 ms step: 2 us of gain (0.02%), below the threshold.
    auto tiny = ruletest::syntheticTrace(kSteps, kStepNs);
    Kernel conv;
    conv.startNs = 2'000'000;
    conv.endNs = conv.startNs + 80'000;
    conv.device = 0;
    conv.name = tiny.intern("implicit_convolve_sgemm");
    tiny.addKernel(conv);
    addFlag(tiny, "cudnn.benchmark", 0, 500'000);
    const auto t = run(tiny);
    EXPECT_EQ(t.outcome.status, RuleStatus::Clean) << t.outcome.reason;
    EXPECT_NE(t.outcome.reason.find("would save little"), std::string::npos) << t.outcome.reason;
}

TEST(CudnnAutotunerOff, SyntheticAutotunerSearchMeansBenchmarkOn) {
    // No settings recorded, but the first call of a convolution shape launches 6 different
    // convolution kernels (cudnnFind timing algorithms) and the 3 later calls one each.
    auto b = ruletest::syntheticTrace(kSteps, kStepNs);
    const ThreadIndex thread = b.thread(1, 1);
    for (int s = 0; s < kSteps; ++s) {
        CpuOp op;
        op.startNs = 1'000'000 + s * kStepNs + 100'000;
        op.endNs = op.startNs + 2'000'000;
        op.thread = thread;
        op.name = b.intern("aten::cudnn_convolution");
        op.externalId = 100 + uint64_t(s);
        op.inputDims = b.intern("[[32,64,56,56],[64,64,3,3]]");
        b.addCpuOp(op);
        const int algorithms = s == 0 ? 6 : 1;
        for (int a = 0; a < algorithms; ++a) {
            Kernel k;
            k.startNs = op.startNs + 10'000 + a * 200'000;
            k.endNs = k.startNs + 150'000;
            k.device = 0;
            k.externalId = op.externalId;
            k.name = b.intern("cudnn_algorithm_" + std::to_string(a) + "_convolution_kernel");
            b.addKernel(k);
        }
    }
    const auto r = run(b);
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean) << r.outcome.reason;
    EXPECT_NE(r.outcome.reason.find("cudnn.benchmark is on"), std::string::npos) << r.outcome.reason;
}

// ---- convolution calls recorded by the agent's cuDNN interposers (tuneup files) --------------------------

namespace {

// The shape of every recorded call below: a 3x3 convolution of 32x64x56x56 in fp16.
ConvCall convCall(TraceBuilder& b, const char* function, ConvApi api, ConvCallKind kind, int64_t start, int64_t algo,
    AlgoSource source, uint64_t plan = 0, int32_t batch = 32) {
    ConvCall c;
    c.startNs = start;
    c.endNs = start + 50'000;
    c.thread = b.thread(1, 1);
    c.api = api;
    c.name = b.intern(function);
    c.kind = kind;
    c.direction = ConvDirection::Forward;
    c.n = batch, c.c = 64, c.h = 56, c.w = 56, c.k = 64, c.filterC = 64, c.r = 3, c.s = 3;
    c.padH = c.padW = 1, c.strideH = c.strideW = 1, c.dilationH = c.dilationW = 1, c.groups = 1;
    c.dataType = 2, c.computeType = 0, c.layout = TensorLayout::Nchw;
    c.algo = algo;
    c.algoSource = source;
    c.planId = plan;
    return c;
}

// convTrace() with the legacy API's calls: one heuristics query for the shape, then one run per step with
// the heuristics' algorithm (as PyTorch's v7 path with benchmark off).
TraceBuilder legacyHeuristicTrace(bool searched) {
    auto b = convTrace();
    b.addConvCall(convCall(b, "cudnnGetConvolutionForwardAlgorithm_v7", ConvApi::Legacy, ConvCallKind::Heuristic,
        1'500'000, 1, AlgoSource::Heuristic));
    if (searched)
        b.addConvCall(convCall(b, "cudnnFindConvolutionForwardAlgorithmEx", ConvApi::Legacy, ConvCallKind::Find,
            1'600'000, 6, AlgoSource::Find));
    for (int s = 0; s < kSteps; ++s)
        b.addConvCall(convCall(b, "cudnnConvolutionForward", ConvApi::Legacy, ConvCallKind::Run,
            1'000'000 + s * kStepNs + 900'000, searched ? 6 : 1, AlgoSource::Given));
    return b;
}

} // namespace

TEST(CudnnAutotunerOff, SyntheticRecordedHeuristicCallsFireWithoutTorchSettings) {
    // A program that is not PyTorch (no torch probes), or one whose probe could not run: the calls show it.
    auto b = legacyHeuristicTrace(false);
    const auto r = run(b);
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    const Finding& f = r.outcome.findings.at(0);
    EXPECT_EQ(ruletest::evidenceFact(f, "cudnn.benchmark"),
        "off (the recorded cuDNN calls: heuristic algorithms, no search)");
    EXPECT_EQ(ruletest::evidenceFact(f, "recorded cuDNN convolutions"),
        "4 runs, 4 with a heuristic algorithm, 1 heuristic queries, 0 cudnnFind searches");
    EXPECT_NE(f.detail.find("4 of 4 recorded convolutions ran the algorithm cuDNN's heuristics chose, on 1 shapes"),
        std::string::npos)
        << f.detail;
    ASSERT_FALSE(f.evidence.events.empty());
    EXPECT_EQ(f.evidence.events[0].table, EventTable::ConvCall);
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 300'000);
}

TEST(CudnnAutotunerOff, SyntheticRecordedCallsAgreeWithTheProbe) {
    auto b = legacyHeuristicTrace(false);
    addFlag(b, "cudnn.benchmark", 0, 500'000);
    const auto r = run(b);
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    EXPECT_NE(r.outcome.findings.at(0).detail.find("The recorded cuDNN calls agree"), std::string::npos);
    EXPECT_EQ(ruletest::evidenceFact(r.outcome.findings.at(0), "cudnn.benchmark"), "off (read 1 times)");
}

TEST(CudnnAutotunerOff, SyntheticRecordedFindMeansBenchmarkOn) {
    auto b = legacyHeuristicTrace(true);
    const auto r = run(b);
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean) << r.outcome.reason;
    EXPECT_NE(r.outcome.reason.find("1 recorded cudnnFind calls (the autotuner's search): cudnn.benchmark is on"),
        std::string::npos)
        << r.outcome.reason;
    // The probe saying off does not outweigh a recorded search.
    auto contradicted = legacyHeuristicTrace(true);
    addFlag(contradicted, "cudnn.benchmark", 0, 500'000);
    const auto c = run(contradicted);
    EXPECT_EQ(c.outcome.status, RuleStatus::Clean);
    EXPECT_NE(c.outcome.reason.find("not reported"), std::string::npos) << c.outcome.reason;
}

TEST(CudnnAutotunerOff, SyntheticRecordedBackendPlans) {
    // cudnn-frontend with benchmark on: several plans tried for the new shape, then the fastest.
    auto on = convTrace();
    on.addConvCall(convCall(
        on, "cudnnBackendExecute", ConvApi::Backend, ConvCallKind::Run, 1'200'000, 11, AlgoSource::Heuristic, 1));
    on.addConvCall(convCall(
        on, "cudnnBackendExecute", ConvApi::Backend, ConvCallKind::Run, 1'300'000, 12, AlgoSource::Heuristic, 2));
    for (int s = 0; s < kSteps; ++s)
        on.addConvCall(convCall(on, "cudnnBackendExecute", ConvApi::Backend, ConvCallKind::Run,
            1'000'000 + s * kStepNs + 900'000, 12, AlgoSource::Heuristic, 2));
    const auto a = run(on);
    EXPECT_EQ(a.outcome.status, RuleStatus::Clean) << a.outcome.reason;
    EXPECT_NE(a.outcome.reason.find("1 convolution shapes were run with several cuDNN plans"), std::string::npos)
        << a.outcome.reason;

    // Benchmark off: heuristics' first plan, the same one every step.
    auto off = convTrace();
    off.addConvCall(convCall(
        off, "cudnnBackendFinalize", ConvApi::Backend, ConvCallKind::Heuristic, 1'100'000, -1, AlgoSource::Heuristic));
    for (int s = 0; s < kSteps; ++s)
        off.addConvCall(convCall(off, "cudnnBackendExecute", ConvApi::Backend, ConvCallKind::Run,
            1'000'000 + s * kStepNs + 900'000, 11, AlgoSource::Heuristic, 1));
    const auto b = run(off);
    EXPECT_EQ(b.outcome.status, RuleStatus::Raised) << b.outcome.reason;
}

TEST(CudnnAutotunerOff, SyntheticRecordedShapesThatChangeEveryStep) {
    // Every step a new batch size: the autotuner would search every step. With the probe off, quiet.
    auto b = convTrace();
    addFlag(b, "cudnn.benchmark", 0, 500'000);
    for (int s = 0; s < kSteps; ++s) {
        const int64_t t = 1'000'000 + s * kStepNs + 900'000;
        b.addConvCall(convCall(b, "cudnnBackendFinalize", ConvApi::Backend, ConvCallKind::Heuristic, t, -1,
            AlgoSource::Heuristic, 0, 32 + s));
        for (int j = 0; j < 3; ++j)
            b.addConvCall(convCall(b, "cudnnBackendExecute", ConvApi::Backend, ConvCallKind::Run, t + 100'000 + j, 11,
                AlgoSource::Heuristic, 10 + uint64_t(s) * 3 + uint64_t(j), 32 + s * 4 + j));
    }
    const auto r = run(b);
    EXPECT_EQ(r.outcome.status, RuleStatus::Clean) << r.outcome.reason;
    EXPECT_NE(r.outcome.reason.find("shapes change between steps"), std::string::npos) << r.outcome.reason;
}
