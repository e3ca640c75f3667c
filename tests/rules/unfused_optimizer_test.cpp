// unfused-optimizer on real traces and synthetic ones. Expected counts were derived with a Python script over
// the JSON, independently of the importer: kernels whose launching runtime call (joined on args.correlation)
// starts inside an Optimizer.step range on the same pid/tid.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

const char* kTracing = "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/";

const Finding& only(const ruletest::RuleRun& run) {
    EXPECT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    EXPECT_EQ(run.findings(), 1u);
    static const Finding none;
    return run.findings() ? run.outcome.findings[0] : none;
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

} // namespace

TEST(UnfusedOptimizer, FiresOnResnet50DdpSgdWithFourKernelsPerParameter) {
    TUNEUP_REQUIRE_SHARED_TRACE(path, std::string(kTracing) + "resnet50_newAPI_ddp/worker1_span1.pt.trace.json.gz");
    const auto run = ruletest::runRule("unfused-optimizer", { path });
    const Finding& f = only(run);
    // Python: 2576 kernels in the 4 SGD.step ranges (1932 AddFunctor, 644 MulScalarFunctor), 644 per step: 161
    // parameters x 4 (weight decay, momentum, update).
    EXPECT_EQ(f.evidence.eventsTotal, 2576u);
    EXPECT_EQ(f.evidence.events.size(), 50u); // capped
    EXPECT_EQ(ruletest::evidenceFact(f, "per-parameter kernels per step"), "644");
    EXPECT_EQ(ruletest::evidenceFact(f, "multi-tensor kernels per step"), "0");
    EXPECT_EQ(ruletest::evidenceFact(f, "parameters (recorded)"), "") << "a Kineto trace does not say";
    EXPECT_EQ(ruletest::evidenceFact(f, "optimizer"), "SGD");
    EXPECT_TRUE(has(f.title, "SGD.step() launches 644 per-parameter kernels per step")) << f.title;
    EXPECT_TRUE(has(f.fixPython, "foreach=True")) << f.fixPython;
    EXPECT_TRUE(has(f.fixCpp, "_foreach_")) << f.fixCpp;
    ASSERT_TRUE(f.gain);
    EXPECT_GT(f.gain->perStepNs, 0);
    EXPECT_EQ(f.gain->confidence, "medium");
    for (const EventRef& e : f.evidence.events) {
        ASSERT_EQ(e.table, EventTable::Kernel);
        EXPECT_TRUE(has(std::string(run.models[0].str(run.models[0].kernels.name[size_t(e.row)])), "elementwise"));
    }
}

TEST(UnfusedOptimizer, FiresOnBertAdamWWithSevenKernelsPerParameter) {
    TUNEUP_REQUIRE_SHARED_TRACE(
        path, std::string(kTracing) + "bert_newAPI_fp16_ddp_4dataloader/worker1_round1.pt.trace.json.gz");
    const auto run = ruletest::runRule("unfused-optimizer", { path });
    const Finding& f = only(run);
    // Python: 1393 kernels in the one AdamW.step range, 199 parameters (sqrt, addcmul, addcdiv once each).
    EXPECT_EQ(f.evidence.eventsTotal, 1393u);
    EXPECT_EQ(ruletest::evidenceFact(f, "per-parameter kernels per step"), "1.39 k");
    EXPECT_EQ(ruletest::evidenceFact(f, "optimizer"), "AdamW");
    EXPECT_TRUE(has(f.fixPython, "AdamW(model.parameters(), lr=lr, fused=True)")) << f.fixPython;
}

TEST(UnfusedOptimizer, QuietWhereTheStepRunsMultiTensorKernels) {
    // Python: the Optimizer.step ranges of these traces launch multi_tensor_apply_kernel only.
    for (const char* relative : { "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
             "hta/tests/data/trace_diff/control/control.json.gz",
             "param/et_replay/tests/inputs/resnet_kineto.json.gz" }) {
        TUNEUP_REQUIRE_SHARED_TRACE(path, relative);
        const auto run = ruletest::runRule("unfused-optimizer", { path });
        EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << relative << ": " << run.outcome.reason;
        EXPECT_TRUE(has(run.outcome.reason, "already runs multi-tensor kernels")) << run.outcome.reason;
    }
}

TEST(UnfusedOptimizer, QuietWithTooFewKernels) {
    // Python: 16 CUDAFunctor_add kernels in 5 SGD.step ranges of a tiny linear model: about 3 per step.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz");
    const auto run = ruletest::runRule("unfused-optimizer", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_TRUE(has(run.outcome.reason, "too few per-parameter kernels")) << run.outcome.reason;
}

TEST(UnfusedOptimizer, NotEvaluatedWithoutOptimizerRanges) {
    // The tracelens H100 traces are inference: no optimizer at all.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz");
    const auto run = ruletest::runRule("unfused-optimizer", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_TRUE(has(run.outcome.reason, "optimizer ranges")) << run.outcome.reason;
}

namespace {

constexpr const char* kAdd
    = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)";
constexpr const char* kMul = "void at::native::vectorized_elementwise_kernel<4, at::native::MulScalarFunctor<float, "
                             "float>, at::detail::Array<char*, 2> >";
constexpr const char* kMultiTensor
    = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
      "namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4>>";

// Synthetic: `steps` steps of 10 ms; each runs an Optimizer.step#SGD.step range on thread 1 launching, per
// parameter, the kernels of `perParameter` (names), then a multi-tensor kernel `multiTensor` times; and a
// forward GEMM plus an elementwise kernel outside the range that the rule must not count.
TraceModel syntheticStep(int steps, int parameters, const std::vector<const char*>& perParameter, int multiTensor,
    int64_t kernelNs = 3'000) {
    auto b = ruletest::syntheticTrace(steps, 10'000'000);
    const ThreadIndex thread = b.thread(1, 1);
    uint64_t correlation = 1;
    int64_t t = 0;
    auto launch = [&](const char* name, int64_t gpuNs) {
        ApiCall call;
        call.startNs = t;
        call.endNs = t + 5'000;
        call.thread = thread;
        call.name = b.intern("cudaLaunchKernel");
        call.correlation = correlation;
        b.addApiCall(call);
        Kernel k;
        k.correlation = correlation++;
        k.startNs = t + 6'000;
        k.endNs = k.startNs + gpuNs;
        k.device = 0;
        k.stream = 7;
        k.name = b.intern(name);
        b.addKernel(k);
        t += 6'000;
    };
    for (int s = 0; s < steps; ++s) {
        const int64_t t0 = 1'000'000 + s * 10'000'000;
        t = t0 + 100'000;
        launch("ampere_sgemm_128x64_nn", 3'000'000);
        launch(kAdd, 2'000); // the loss: not the optimizer's
        Annotation step;
        step.startNs = t0 + 4'000'000;
        step.thread = thread;
        step.name = b.intern("Optimizer.step#SGD.step");
        t = step.startNs + 1'000;
        for (int p = 0; p < parameters; ++p)
            for (const char* name : perParameter)
                launch(name, kernelNs);
        for (int i = 0; i < multiTensor; ++i)
            launch(kMultiTensor, 20'000);
        step.endNs = t + 1'000;
        b.addAnnotation(step);
    }
    return b.finish();
}

ruletest::RuleRun runOn(TraceModel model, const std::vector<std::pair<const char*, int64_t>>& facts = {}) {
    for (const auto& [name, value] : facts)
        ruletest::addProgramFact(model, name, value);
    std::vector<TraceModel> models;
    models.push_back(std::move(model));
    return ruletest::runRuleOnModels("unfused-optimizer", std::move(models));
}

} // namespace

TEST(UnfusedOptimizer, SyntheticPerParameterKernelsInsideTheStepFire) {
    const auto run = runOn(syntheticStep(4, 40, { kMul, kAdd, kAdd }, 0));
    const Finding& f = only(run);
    EXPECT_EQ(f.evidence.eventsTotal, 4u * 40 * 3); // the loss's add and the GEMM are outside the range
    EXPECT_EQ(ruletest::evidenceFact(f, "per-parameter kernels per step"), "120");
    EXPECT_EQ(ruletest::evidenceFact(f, "parameters (recorded)"), "");
    EXPECT_FALSE(has(f.title, "per parameter")) << f.title;
    ASSERT_TRUE(f.gain);
    // Per step: 120 launches of 5 us CPU plus half of 120 x 3 us of GPU time (780 us), at most the time of the
    // Optimizer.step range: 120 launches 6 us apart, plus 2 us.
    EXPECT_EQ(f.gain->perStepNs, 120 * 6'000 + 2'000);
    EXPECT_EQ(f.gain->confidence, "medium");
    EXPECT_EQ(f.severity, Severity::Warning); // 0.72 ms of a 10 ms step
}

TEST(UnfusedOptimizer, SyntheticGainOfGpuBoundStepsIsLaunchesPlusHalfTheKernels) {
    // Kernels of 20 us launched 6 us apart: the GPU time (2.4 ms per step) outlasts the range; no cap.
    const auto run = runOn(syntheticStep(4, 40, { kMul, kAdd, kAdd }, 0, 20'000));
    const Finding& f = only(run);
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 120 * 5'000 + 120 * 20'000 / 2);
    EXPECT_EQ(ruletest::evidenceFact(f, "GPU time of the per-parameter kernels per step"), "2.4 ms");
}

TEST(UnfusedOptimizer, SyntheticRecordedParameterCountDecidesKernelsPerParameter) {
    // 40 parameters x 1 kernel: 40 per step, fewer than 100 and 1 per parameter: too few.
    const auto few = runOn(syntheticStep(4, 40, { kAdd }, 0), { { "tuneup.optimizer.params", 40 } });
    EXPECT_EQ(few.outcome.status, RuleStatus::Clean) << few.outcome.reason;
    EXPECT_TRUE(has(few.outcome.reason, "for 40 parameters")) << few.outcome.reason;
    // 20 recorded parameters x 4 kernels: 80 per step, below 100 but 4 per parameter: fires.
    const auto run = runOn(syntheticStep(4, 20, { kMul, kAdd, kAdd, kMul }, 0),
        { { "tuneup.optimizer.params", 20 }, { "tuneup.optimizer.foreach", 0 }, { "tuneup.optimizer.fused", 0 } });
    const Finding& f = only(run);
    EXPECT_EQ(ruletest::evidenceFact(f, "parameters (recorded)"), "20");
    EXPECT_EQ(ruletest::evidenceFact(f, "foreach (recorded)"), "False");
    EXPECT_TRUE(has(f.title, "(4.0 per parameter)")) << f.title;
}

TEST(UnfusedOptimizer, SyntheticMultiTensorKernelsDoNotFire) {
    // A foreach step: a few multi-tensor kernels, and a few elementwise leftovers (under a tenth).
    const auto run = runOn(syntheticStep(4, 300, { kAdd }, 40));
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_TRUE(has(run.outcome.reason, "already runs multi-tensor kernels")) << run.outcome.reason;
}

TEST(UnfusedOptimizer, SyntheticRecordedForeachOrFusedDoNotFire) {
    for (const char* fact : { "tuneup.optimizer.foreach", "tuneup.optimizer.fused" }) {
        const auto run = runOn(syntheticStep(4, 100, { kMul, kAdd }, 0), { { fact, 1 } });
        EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << fact << ": " << run.outcome.reason;
        EXPECT_TRUE(has(run.outcome.reason, "recorded by tuneup's Python bootstrap")) << run.outcome.reason;
    }
    // Recorded off: the kernels decide (and fire).
    EXPECT_EQ(runOn(syntheticStep(4, 100, { kMul, kAdd }, 0), { { "tuneup.optimizer.foreach", 0 } }).findings(), 1u);
}

TEST(UnfusedOptimizer, SyntheticTooFewKernelsDoNotFire) {
    const auto run = runOn(syntheticStep(4, 5, { kMul, kAdd }, 0)); // 10 per step
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_TRUE(has(run.outcome.reason, "too few per-parameter kernels")) << run.outcome.reason;
}

TEST(UnfusedOptimizer, TheFixFollowsTheRecordedPyTorchVersion) {
    const auto old = runOn(syntheticStep(4, 100, { kMul, kAdd }, 0), { { "tuneup.torch.version", 11301 } });
    EXPECT_TRUE(has(only(old).fixPython, "SGD(model.parameters(), lr=lr, foreach=True)  # PyTorch 1.x"))
        << only(old).fixPython;
    const auto current = runOn(syntheticStep(4, 100, { kMul, kAdd }, 0), { { "tuneup.torch.version", 21100 } });
    EXPECT_TRUE(has(only(current).fixPython, "remove an explicit foreach=False")) << only(current).fixPython;
}
