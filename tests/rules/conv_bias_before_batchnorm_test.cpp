// conv-bias-before-batchnorm. No public trace has a biased convolution feeding BatchNorm (ResNets use
// bias=False; ViT's patch embedding has a bias but no BatchNorm after it), so the positive cases are
// synthetic; the negatives are real. Counts checked with a Python script over the JSON: ResNet-50 has 212
// aten::conv2d calls, all with an empty bias input; the ViT trace one aten::conv2d with bias [768].

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

struct OpSpec {
    const char* name;
    int64_t start, end;
    const char* dims;
    int64_t seq = -1;
};

uint64_t addOp(TraceBuilder& b, const OpSpec& s, uint64_t& externalId) {
    CpuOp op;
    op.startNs = s.start;
    op.endNs = s.end;
    op.thread = b.thread(1, 1);
    op.name = b.intern(s.name);
    op.inputDims = b.intern(s.dims);
    op.externalId = ++externalId;
    op.sequenceNumber = s.seq;
    b.addCpuOp(op);
    return externalId;
}

void addKernel(TraceBuilder& b, const char* name, int64_t start, int64_t durationNs, uint64_t externalId) {
    Kernel k;
    k.startNs = start;
    k.endNs = start + durationNs;
    k.device = 0;
    k.stream = 7;
    k.externalId = externalId;
    k.name = b.intern(name);
    b.addKernel(k);
}

// One step of Conv2d(3, 16, 3, bias=True) -> `next` with its backward: a 20 us bias add in forward and a
// 30 us bias-gradient reduction in backward.
void addStep(TraceBuilder& b, int64_t t, int64_t seq, const char* next, const char* nextDims, uint64_t& id) {
    addOp(b, { "aten::conv2d", t, t + 100'000, "[[8,3,32,32],[16,3,3,3],[16],[],[],[],[]]" }, id);
    addOp(
        b, { "aten::convolution", t + 1'000, t + 99'000, "[[8,3,32,32],[16,3,3,3],[16],[],[],[],[],[],[]]", seq }, id);
    addOp(b,
        { "aten::_convolution", t + 2'000, t + 98'000, "[[8,3,32,32],[16,3,3,3],[16],[],[],[],[],[],[],[],[],[],[]]" },
        id);
    const uint64_t conv = addOp(
        b, { "aten::cudnn_convolution", t + 3'000, t + 60'000, "[[8,3,32,32],[16,3,3,3],[],[],[],[],[],[],[]]" }, id);
    addKernel(b, "cudnn_ampere_scudnn_128x64_relu_small_nn_v1", t + 200'000, 80'000, conv);
    const uint64_t add = addOp(b, { "aten::add_", t + 70'000, t + 90'000, "[[8,16,32,32],[1,16,1,1],[]]" }, id);
    addKernel(b, "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >", t + 290'000,
        20'000, add);
    addOp(b, { next, t + 110'000, t + 150'000, nextDims }, id);
    // Backward, later in the step.
    const int64_t bw = t + 1'000'000;
    addOp(b, { "autograd::engine::evaluate_function: ConvolutionBackward0", bw, bw + 100'000, "[]" }, id);
    addOp(b, { "ConvolutionBackward0", bw + 1'000, bw + 99'000, "[]", seq }, id);
    const uint64_t cb = addOp(b,
        { "aten::convolution_backward", bw + 2'000, bw + 98'000,
            "[[8,16,32,32],[8,3,32,32],[16,3,3,3],[],[],[],[],[],[],[],[]]" },
        id);
    addKernel(b, "void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>", bw + 200'000, 90'000, cb);
    addKernel(b,
        "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, "
        "at::native::sum_functor<float, float, float>::operator()> > >",
        bw + 300'000, 30'000, cb);
}

ruletest::RuleRun runSynthetic(const char* next, const char* nextDims) {
    auto b = ruletest::syntheticTrace(3, 5'000'000);
    uint64_t id = 0;
    for (int s = 0; s < 3; ++s)
        addStep(b, 1'000'000 + s * 5'000'000 + 100'000, 40 + s, next, nextDims, id);
    std::vector<TraceModel> models;
    models.push_back(b.finish());
    return ruletest::runRuleOnModels("conv-bias-before-batchnorm", std::move(models));
}

} // namespace

TEST(ConvBiasBeforeBatchnorm, SyntheticBiasedConvIntoBatchNormFires) {
    const auto run = runSynthetic("aten::batch_norm", "[[8,16,32,32],[16],[16],[16],[16],[],[],[],[]]");
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_EQ(f.evidence.eventsTotal, 6u); // 3 convolutions and their 3 norms
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 50'000); // 20 us bias add + 30 us bias gradient
    EXPECT_EQ(f.severity, Severity::Info); // 1% of the 5 ms step
    EXPECT_NE(f.title.find("BatchNorm"), std::string::npos) << f.title;
    EXPECT_NE(f.fixPython.find("bias=False"), std::string::npos);
    EXPECT_NE(f.fixCpp.find(".bias(false)"), std::string::npos);
}

TEST(ConvBiasBeforeBatchnorm, SyntheticOtherFollowersAreClean) {
    // A ReLU after the biased convolution: the bias matters.
    const auto relu = runSynthetic("aten::relu", "[[8,16,32,32]]");
    EXPECT_EQ(relu.outcome.status, RuleStatus::Clean) << relu.outcome.reason;
    EXPECT_NE(relu.outcome.reason.find("3 with a bias, none followed"), std::string::npos) << relu.outcome.reason;
    // A batch norm of another tensor (32 channels): not this convolution's output.
    const auto other = runSynthetic("aten::batch_norm", "[[8,32,32,32],[32],[32],[32],[32],[],[],[],[]]");
    EXPECT_EQ(other.outcome.status, RuleStatus::Clean) << other.outcome.reason;
}

TEST(ConvBiasBeforeBatchnorm, QuietOnResnetWithoutConvBias) {
    TUNEUP_REQUIRE_SHARED_TRACE(path,
        "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz");
    const auto run = ruletest::runRule("conv-bias-before-batchnorm", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("212 convolutions, none with a bias"), std::string::npos) << run.outcome.reason;
}

TEST(ConvBiasBeforeBatchnorm, QuietOnVitPatchEmbeddingWithBias) {
    TUNEUP_REQUIRE_SHARED_TRACE(path, "tracelens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz");
    const auto run = ruletest::runRule("conv-bias-before-batchnorm", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("1 convolutions, 1 with a bias"), std::string::npos) << run.outcome.reason;
}

TEST(ConvBiasBeforeBatchnorm, NotEvaluatedWithoutInputShapes) {
    TUNEUP_REQUIRE_SHARED_TRACE(
        path, "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    const auto run = ruletest::runRule("conv-bias-before-batchnorm", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(run.outcome.reason.find("input shapes"), std::string::npos);
}

// Synthetic: a trace without operators (a tuneup recording), whose model layers the Python bootstrap
// recorded.
TEST(ConvBiasBeforeBatchnorm, SyntheticRecordedLayersWithBiasBeforeNormFire) {
    std::vector<TraceModel> models;
    models.push_back(ruletest::syntheticTrace(4, 10'000'000).finish());
    ruletest::addProgramFact(models[0], "tuneup.model.convolutions", 53);
    ruletest::addProgramFact(models[0], "tuneup.model.conv_bias_before_norm", 52);
    const auto run = ruletest::runRuleOnModels("conv-bias-before-batchnorm", std::move(models));
    ASSERT_EQ(run.findings(), 1u) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_NE(f.title.find("52 of the model's 53 convolution layers"), std::string::npos) << f.title;
    EXPECT_FALSE(f.gain) << "no timings: no gain is claimed";
    EXPECT_EQ(ruletest::evidenceFact(f, "with a bias right before a norm"), "52");
}

TEST(ConvBiasBeforeBatchnorm, SyntheticRecordedLayersWithoutBiasAreClean) {
    std::vector<TraceModel> models;
    models.push_back(ruletest::syntheticTrace(4, 10'000'000).finish());
    ruletest::addProgramFact(models[0], "tuneup.model.convolutions", 53);
    ruletest::addProgramFact(models[0], "tuneup.model.conv_bias_before_norm", 0);
    const auto run = ruletest::runRuleOnModels("conv-bias-before-batchnorm", std::move(models));
    EXPECT_EQ(run.findings(), 0u);
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean);
}

TEST(ConvBiasBeforeBatchnorm, SyntheticTraceWithNeitherOperatorsNorLayersIsNotEvaluated) {
    std::vector<TraceModel> models;
    models.push_back(ruletest::syntheticTrace(4, 10'000'000).finish());
    const auto run = ruletest::runRuleOnModels("conv-bias-before-batchnorm", std::move(models));
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(run.outcome.reason.find("model's layers"), std::string::npos) << run.outcome.reason;
}
