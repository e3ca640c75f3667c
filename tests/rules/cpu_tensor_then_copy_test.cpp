// cpu-tensor-then-copy on real traces and synthetic ones. Expected figures were derived with a Python
// script over the JSON (no tuneup code): a factory op (aten::randn, zeros, empty, arange, ...) not nested in
// another aten op, whose next op at the same level of the same thread is aten::to/_to_copy/copy_ during
// which the thread launched a host-to-device memcpy (runtime call matched by correlation), not inside or
// within 1 ms after a DataLoader __next__; GPU idle = the factory-to-copy interval minus GPU activity in it.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

uint64_t addOp(TraceBuilder& b, const char* name, int64_t start, int64_t end, uint64_t& externalId) {
    CpuOp op;
    op.startNs = start;
    op.endNs = end;
    op.thread = b.thread(1, 1);
    op.name = b.intern(name);
    op.inputDims = b.intern("[[],[],[],[],[]]");
    op.externalId = ++externalId;
    b.addCpuOp(op);
    return externalId;
}

// x = torch.randn(...).to("cuda") at t: randn 100 us, then to > _to_copy > copy_ with a 20 us pageable
// HtoD copy; the GPU is otherwise idle from t to the end of the to (250 us later): 230 us idle.
void addRandnToCuda(TraceBuilder& b, int64_t t, uint64_t& id) {
    addOp(b, "aten::randn", t, t + 100'000, id);
    addOp(b, "aten::to", t + 110'000, t + 250'000, id);
    addOp(b, "aten::_to_copy", t + 112'000, t + 248'000, id);
    addOp(b, "aten::empty_strided", t + 115'000, t + 120'000, id);
    const uint64_t copy = addOp(b, "aten::copy_", t + 125'000, t + 245'000, id);
    Memcpy m;
    m.startNs = t + 200'000;
    m.endNs = t + 220'000;
    m.device = 0;
    m.externalId = copy;
    m.bytes = 2560;
    m.copyKind = CopyKind::HtoD;
    m.srcKind = MemoryKind::Pageable;
    m.dstKind = MemoryKind::Device;
    b.addMemcpy(m);
    Kernel k; // the forward pass, after
    k.startNs = t + 300'000;
    k.endNs = t + 900'000;
    k.device = 0;
    k.name = b.intern("volta_sgemm_128x64_nn");
    b.addKernel(k);
}

ruletest::RuleRun run(TraceBuilder& b) {
    std::vector<TraceModel> models;
    models.push_back(b.finish());
    return ruletest::runRuleOnModels("cpu-tensor-then-copy", std::move(models));
}

} // namespace

TEST(CpuTensorThenCopy, FiresOnToyTrainingThatDrawsItsBatchOnTheCpu) {
    // MI250 toy training: x and y = torch.randn(5, 128).to(device) in the step: 2 factories, 447.3 us of
    // GPU idle meanwhile, over the trace's 2 ProfilerSteps (the second is a 49 us stub).
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    const auto r = ruletest::runRule("cpu-tensor-then-copy", { path });
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    const Finding& f = r.outcome.findings[0];
    EXPECT_EQ(f.evidence.eventsTotal, 6u); // factory, copy op, memcpy for each
    EXPECT_NE(f.title.find("torch.randn x2"), std::string::npos) << f.title;
    EXPECT_NE(f.title.find("2 in 1 of 2 steps"), std::string::npos) << f.title;
    ASSERT_TRUE(f.gain);
    EXPECT_NEAR(double(f.gain->perStepNs) * 2, 447'300.0, 1'000.0);
    EXPECT_NE(f.fixPython.find("torch.randn(shape, device=device)"), std::string::npos) << f.fixPython;
}

TEST(CpuTensorThenCopy, FiresOnTorchTensorFromPythonDataEachStep) {
    // DLRM rank 0: four torch.tensor(list, device=...) per step (aten::empty, aten::to with a pageable
    // HtoD copy and cudaStreamSynchronize, aten::lift_fresh); the GPU idles 156.0 us meanwhile.
    TUNEUP_REQUIRE_SHARED_TRACE(
        path, "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json");
    const auto r = ruletest::runRule("cpu-tensor-then-copy", { path });
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    const Finding& f = r.outcome.findings[0];
    EXPECT_EQ(f.evidence.eventsTotal, 12u);
    EXPECT_NE(f.title.find("4 per step (torch.tensor x4)"), std::string::npos) << f.title;
    EXPECT_NEAR(double(f.gain->perStepNs), 156'000.0, 1'000.0);
    EXPECT_EQ(f.severity, Severity::Info); // 1% of a 14.5 ms step
    EXPECT_NE(f.fixPython.find("pin_memory().to(device, non_blocking=True)"), std::string::npos);
}

TEST(CpuTensorThenCopy, QuietOnRealTrainingLoops) {
    // ResNet-50: the batches come from the DataLoader; the 1359 factory calls are device-side or not copied.
    TUNEUP_REQUIRE_SHARED_TRACE(resnet,
        "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz");
    const auto a = ruletest::runRule("cpu-tensor-then-copy", { resnet });
    EXPECT_EQ(a.outcome.status, RuleStatus::Clean) << a.outcome.reason;

    // DLRM-like A100 run: the only CPU-made tensors copied to the GPU are made right after __next__.
    TUNEUP_REQUIRE_SHARED_TRACE(control, "hta/tests/data/trace_diff/control/control.json.gz");
    const auto b = ruletest::runRule("cpu-tensor-then-copy", { control });
    EXPECT_EQ(b.outcome.status, RuleStatus::Clean) << b.outcome.reason;
    EXPECT_NE(b.outcome.reason.find("DataLoader"), std::string::npos) << b.outcome.reason;
}

TEST(CpuTensorThenCopy, NotEvaluatedWithoutCopies) {
    TUNEUP_REQUIRE_SHARED_TRACE(path, "tracelens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz");
    const auto r = ruletest::runRule("cpu-tensor-then-copy", { path });
    EXPECT_EQ(r.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(r.outcome.reason.find("memory copy"), std::string::npos);
}

TEST(CpuTensorThenCopy, SyntheticRandnThenCudaEachStepFires) {
    // Synthetic: torch.randn(...).to("cuda") once per 5 ms step, 230 us of GPU idle each.
    auto b = ruletest::syntheticTrace(4, 5'000'000);
    uint64_t id = 0;
    for (int s = 0; s < 4; ++s)
        addRandnToCuda(b, 1'000'000 + s * 5'000'000 + 100'000, id);
    const auto r = run(b);
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    const Finding& f = r.outcome.findings[0];
    EXPECT_EQ(f.evidence.eventsTotal, 12u);
    EXPECT_EQ(f.gain->perStepNs, 230'000);
    EXPECT_EQ(f.severity, Severity::Warning); // 4.6% of the step
    EXPECT_NE(f.title.find("1 per step (torch.randn x4)"), std::string::npos) << f.title;
    EXPECT_NE(f.fixCpp.find("torch::randn(shape, torch::TensorOptions().device(torch::kCUDA))"), std::string::npos);
}

TEST(CpuTensorThenCopy, SyntheticDataLoaderBatchAndOneOffAreClean) {
    // Synthetic: the same pattern inside a DataLoader __next__ range (the batch) is not counted.
    auto b = ruletest::syntheticTrace(4, 5'000'000);
    uint64_t id = 0;
    for (int s = 0; s < 4; ++s) {
        const int64_t t = 1'000'000 + s * 5'000'000 + 100'000;
        Annotation next;
        next.startNs = t - 50'000;
        next.endNs = t + 300'000;
        next.thread = b.thread(1, 1);
        next.name = b.intern("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
        b.addAnnotation(next);
        addRandnToCuda(b, t, id);
    }
    const auto loader = run(b);
    EXPECT_EQ(loader.outcome.status, RuleStatus::Clean) << loader.outcome.reason;
    EXPECT_NE(loader.outcome.reason.find("DataLoader batches (4 there"), std::string::npos) << loader.outcome.reason;

    // Synthetic: once in 4 steps (set-up, e.g. a constant built before the loop's first step).
    auto c = ruletest::syntheticTrace(4, 5'000'000);
    id = 0;
    addRandnToCuda(c, 1'100'000, id);
    const auto once = run(c);
    EXPECT_EQ(once.outcome.status, RuleStatus::Clean) << once.outcome.reason;
    EXPECT_NE(once.outcome.reason.find("set-up"), std::string::npos) << once.outcome.reason;
}
