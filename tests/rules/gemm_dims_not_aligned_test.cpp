// gemm-dims-not-aligned on real traces and synthetic ones. Expected figures were derived with a Python
// script over the JSON (no tuneup code): per innermost GEMM op (mm/addmm/bmm/baddbmm, or linear/matmul
// with no GEMM op inside), M/N/K from "Input Dims", the element size from "Input type", the GEMM kernels
// linked to it (kernel -> runtime call by correlation -> op by External id, else the op enclosing the
// call on its thread), alignment 16 bytes; M alone unaligned inside aten::linear is not weighed.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

bool hasFact(const Finding& f, const std::string& text) {
    for (const auto& [label, value] : f.evidence.facts)
        if (label.find(text) != std::string::npos || value.find(text) != std::string::npos) return true;
    return false;
}

// A CPU op on thread 1; returns its external id.
uint64_t addOp(TraceBuilder& b, const std::string& name, int64_t start, int64_t end, const std::string& dims,
    const std::string& types, uint64_t externalId) {
    CpuOp op;
    op.startNs = start;
    op.endNs = end;
    op.thread = b.thread(1, 1);
    op.name = b.intern(name);
    op.inputDims = b.intern(dims);
    op.inputTypes = b.intern(types);
    op.externalId = externalId;
    b.addCpuOp(op);
    return externalId;
}

void addKernel(TraceBuilder& b, const std::string& name, int64_t start, int64_t durationNs, uint64_t externalId) {
    Kernel k;
    k.startNs = start;
    k.endNs = start + durationNs;
    k.device = 0;
    k.stream = 7;
    k.externalId = externalId;
    k.name = b.intern(name);
    b.addKernel(k);
}

ruletest::RuleRun runSynthetic(TraceBuilder& b) {
    std::vector<TraceModel> models;
    models.push_back(b.finish());
    return ruletest::runRuleOnModels("gemm-dims-not-aligned", std::move(models));
}

} // namespace

TEST(GemmDimsNotAligned, FiresOnTimesformerAttentionGemms) {
    // TimeSformer (bf16, H100): the spatial attention bmm's [96,3137,64]x[96,64,3137] (N = 3137) and
    // [96,3137,3137]x[96,3137,64] (K = 3137), 12 each, launch cutlass ..._align1 kernels: 24 unaligned GEMMs
    // with 43.2 ms of kernels (script: 43207.6 us).
    TUNEUP_REQUIRE_SHARED_TRACE(
        path, "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz");
    const auto run = ruletest::runRule("gemm-dims-not-aligned", { path });
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings.at(0);
    EXPECT_EQ(f.evidence.eventsTotal, 48u); // each op and its kernel
    EXPECT_NE(f.title.find("3137"), std::string::npos) << f.title;
    EXPECT_TRUE(hasFact(f, "N=3137"));
    EXPECT_TRUE(hasFact(f, "K=3137"));
    EXPECT_TRUE(hasFact(f, "_align1")); // cuBLAS picked narrow-load kernels
    ASSERT_TRUE(f.gain);
    const size_t steps = std::max<size_t>(run.report.ranks[0].steps.detection.steps.size(), 1);
    EXPECT_NEAR(double(f.gain->perStepNs) * double(steps), 0.2 * 43'207'600, 0.01 * 43'207'600);
    EXPECT_EQ(f.gain->confidence, "medium");
    // The token-only forward GEMMs (M = 25089 in aten::linear) are listed apart, not weighed.
    EXPECT_TRUE(hasFact(f, "only M"));
}

TEST(GemmDimsNotAligned, FiresOnTraceFilterRecommendationModel) {
    // Sampled rank 0 of a 128-rank recommender (fp32/TF32, A100): 191 unaligned GEMM calls with kernels,
    // 53.0 ms in 2 steps (script: 52991 us), among them mm [2048,110]x[110,18030] (N and K), mm
    // [2048,125]x[125,320] (K = 125), addmm [2048,512]x[512,3906] (N = 3906).
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/trace_filter/sampled_rank-0.json.gz");
    const auto run = ruletest::runRule("gemm-dims-not-aligned", { path });
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings.at(0);
    EXPECT_EQ(f.evidence.eventsTotal, 382u); // 191 ops and their kernels
    EXPECT_TRUE(hasFact(f, "N=18030, K=110"));
    EXPECT_LE(f.evidence.events.size(), 50u);
    ASSERT_TRUE(f.gain);
    EXPECT_GT(f.gain->perStepNs, 0);
}

TEST(GemmDimsNotAligned, QuietOnDecodeVocabGemmWithAlignedN) {
    // vLLM decode on B200: every GEMM is aligned (M = 888 = 8*111; vocab [1,2880]x[2880,25136], M = 1).
    TUNEUP_REQUIRE_SHARED_TRACE(path, "tracelens/tests/traces/b200/eager_trace.json.gz");
    const auto run = ruletest::runRule("gemm-dims-not-aligned", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("all dimensions aligned"), std::string::npos) << run.outcome.reason;
}

TEST(GemmDimsNotAligned, QuietWhenOnlyTheTokenCountIsUnaligned) {
    // ViT on H100: 73 addmm with M = 788 (4 x 197 tokens) and N, K in {768, 3072}; M is not a leading
    // dimension of a forward linear, so nothing is weighed.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "tracelens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz");
    const auto run = ruletest::runRule("gemm-dims-not-aligned", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("73 have only an unaligned token count M (788"), std::string::npos)
        << run.outcome.reason;
}

TEST(GemmDimsNotAligned, QuietWhenTheUnalignedGemmsAreNegligible) {
    // The K = 2798 linear (fp32: 4-element alignment; K = 100 is aligned) runs eagerly: 15 calls with
    // 1646 us of kernels in 5 steps of ~216 ms; the big GEMMs run inside CUDA graphs.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/negative_queue_length_values_check/rank0.json.gz");
    const auto run = ruletest::runRule("gemm-dims-not-aligned", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("15 have unaligned dimensions (2798)"), std::string::npos) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("negligible"), std::string::npos);

    // BERT-small: the vocabulary head N = 30522 is unaligned but takes 41 us of a 4.4 ms inference step.
    TUNEUP_REQUIRE_SHARED_TRACE(bert, "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz");
    const auto b = ruletest::runRule("gemm-dims-not-aligned", { bert });
    EXPECT_EQ(b.outcome.status, RuleStatus::Clean) << b.outcome.reason;
    EXPECT_NE(b.outcome.reason.find("30522"), std::string::npos) << b.outcome.reason;
}

TEST(GemmDimsNotAligned, NotEvaluatedWithoutInputShapes) {
    // ResNet on V100 recorded without record_shapes.
    TUNEUP_REQUIRE_SHARED_TRACE(
        path, "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    const auto run = ruletest::runRule("gemm-dims-not-aligned", { path });
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(run.outcome.reason.find("input shapes"), std::string::npos) << run.outcome.reason;
}

TEST(GemmDimsNotAligned, SyntheticLinear1001x30InHalfFires) {
    // Synthetic: nn.Linear(1001, 30) in fp16, batch 64: linear > addmm [64,1001]x[1001,30], one 1 ms
    // ..._align1 GEMM kernel per 10 ms step. N = 30 and K = 1001 are not multiples of 8: 20% of 1 ms.
    auto b = ruletest::syntheticTrace(4, 10'000'000);
    uint64_t id = 100;
    for (int s = 0; s < 4; ++s) {
        const int64_t t = 1'000'000 + s * 10'000'000 + 100'000;
        addOp(b, "aten::linear", t, t + 50'000, "[[64,1001],[30,1001],[30]]", "c10::Half,c10::Half,c10::Half", ++id);
        const uint64_t addmm = addOp(b, "aten::addmm", t + 5'000, t + 45'000, "[[30],[64,1001],[1001,30],[],[]]",
            "c10::Half,c10::Half,c10::Half,Scalar,Scalar", ++id);
        addKernel(b, "cutlass_80_tensorop_f16_s16816gemm_f16_64x64_32x6_tn_align1", t + 60'000, 1'000'000, addmm);
    }
    const auto run = runSynthetic(b);
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings.at(0);
    EXPECT_EQ(f.evidence.eventsTotal, 8u); // 4 ops and their kernels
    EXPECT_NE(f.fixPython.find("1001 -> 1008 (16-bit: multiples of 8)"), std::string::npos) << f.fixPython;
    EXPECT_NE(f.title.find("30, 1001"), std::string::npos) << f.title;
    EXPECT_TRUE(hasFact(f, "N=30, K=1001"));
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 200'000);
    EXPECT_EQ(f.severity, Severity::Warning); // 2% of the step
    EXPECT_NE(f.fixPython.find("nn.Linear(1008, 32)"), std::string::npos);
}

TEST(GemmDimsNotAligned, SyntheticPaddedTwinIsClean) {
    // Synthetic: the same layer padded to Linear(1008, 32).
    auto b = ruletest::syntheticTrace(4, 10'000'000);
    uint64_t id = 100;
    for (int s = 0; s < 4; ++s) {
        const int64_t t = 1'000'000 + s * 10'000'000 + 100'000;
        addOp(b, "aten::linear", t, t + 50'000, "[[64,1008],[32,1008],[32]]", "c10::Half,c10::Half,c10::Half", ++id);
        const uint64_t addmm = addOp(b, "aten::addmm", t + 5'000, t + 45'000, "[[32],[64,1008],[1008,32],[],[]]",
            "c10::Half,c10::Half,c10::Half,Scalar,Scalar", ++id);
        addKernel(b, "cutlass_80_tensorop_f16_s16816gemm_f16_64x64_32x6_tn_align8", t + 60'000, 900'000, addmm);
    }
    const auto run = runSynthetic(b);
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("all dimensions aligned"), std::string::npos) << run.outcome.reason;
}

TEST(GemmDimsNotAligned, SyntheticWeightGradientWithOddTokenCountIsWeighed) {
    // Synthetic: a backward weight-gradient mm [125,2048]x[2048,320] in fp32 (grad_out^T: M = 125 is a
    // leading dimension there) on CUDA cores (ampere_sgemm): 10% of its 2 ms kernel.
    auto b = ruletest::syntheticTrace(2, 20'000'000);
    uint64_t id = 100;
    for (int s = 0; s < 2; ++s) {
        const int64_t t = 1'000'000 + s * 20'000'000 + 100'000;
        addOp(b, "AddmmBackward0", t, t + 60'000, "[]", "", ++id);
        const uint64_t mm = addOp(b, "aten::mm", t + 5'000, t + 50'000, "[[125,2048],[2048,320]]", "float,float", ++id);
        addKernel(b, "ampere_sgemm_128x64_nn", t + 100'000, 2'000'000, mm);
    }
    const auto run = runSynthetic(b);
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings.at(0);
    EXPECT_TRUE(hasFact(f, "M=125"));
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 200'000);
    EXPECT_EQ(f.gain->confidence, "low"); // no narrow-load kernel names to confirm it
}

// ---- GEMM calls recorded by the agent's cuBLAS / cuBLASLt interposers (tuneup files) ---------------------

namespace {

struct RecordedGemm {
    const char* function;
    int transa, transb;
    int64_t m, n, k, lda, ldb, ldc;
    int32_t type; // cudaDataType: 0 fp32, 2 fp16
    int32_t computeType;
    const char* kernel;
    int64_t kernelNs;
};

// Synthetic: one recorded call per 10 ms step on thread 1, its kernel tied to it either by the launch
// (cudaLaunchKernel inside the call's window, by correlation) or by CUPTI's external correlation.
TraceBuilder recordedTrace(const std::vector<RecordedGemm>& calls, bool byExternalId) {
    auto b = ruletest::syntheticTrace(4, 10'000'000);
    const ThreadIndex thread = b.thread(1, 1);
    uint64_t correlation = 1000, externalId = 0;
    for (int s = 0; s < 4; ++s) {
        int64_t t = 1'000'000 + s * 10'000'000 + 100'000;
        for (const RecordedGemm& c : calls) {
            GemmCall g;
            g.startNs = t;
            g.endNs = t + 20'000;
            g.thread = thread;
            g.api = GemmApi::Cublas;
            g.name = b.intern(c.function);
            g.transa = int8_t(c.transa);
            g.transb = int8_t(c.transb);
            g.m = c.m, g.n = c.n, g.k = c.k, g.lda = c.lda, g.ldb = c.ldb, g.ldc = c.ldc;
            g.aType = g.bType = g.cType = c.type;
            g.computeType = c.computeType;
            g.externalId = byExternalId ? ++externalId : 0;
            b.addGemmCall(g);
            ++correlation;
            if (byExternalId) {
                b.addExternalCorrelation({ correlation, externalId });
            } else {
                ApiCall launch;
                launch.startNs = t + 5'000;
                launch.endNs = t + 15'000;
                launch.thread = thread;
                launch.name = b.intern("cudaLaunchKernel");
                launch.correlation = correlation;
                b.addApiCall(launch);
            }
            Kernel k;
            k.startNs = t + 30'000;
            k.endNs = k.startNs + c.kernelNs;
            k.device = 0;
            k.stream = 7;
            k.correlation = correlation;
            k.name = b.intern(c.kernel);
            b.addKernel(k);
            t += c.kernelNs + 100'000;
        }
    }
    return b;
}

} // namespace

TEST(GemmDimsNotAligned, SyntheticRecordedUnalignedCallsFire) {
    // M=30, N=1001, K=30 in fp32 (sgemm on CUDA cores: 10%) and in fp16 (tensor cores: 20%), 1 ms each.
    auto b = recordedTrace(
        { { "cublasSgemm_v2", 0, 0, 30, 1001, 30, 30, 30, 30, 0, 68, "ampere_sgemm_32x32_sliced1x4_nn", 1'000'000 },
            { "cublasGemmEx", 0, 0, 30, 1001, 30, 30, 30, 30, 2, 68,
                "cutlass_80_tensorop_f16_s16816gemm_f16_64x64_32x6_nn_align2", 1'000'000 } },
        false);
    const auto run = runSynthetic(b);
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings.at(0);
    EXPECT_EQ(ruletest::evidenceFact(f, "unaligned GEMM calls (weighed)"), "8");
    EXPECT_NE(ruletest::evidenceFact(f, "source").find("recorded from cuBLAS/cuBLASLt (8 tied"), std::string::npos);
    EXPECT_EQ(ruletest::evidenceFact(f, "cublasSgemm_v2 NN M=30 N=1001 K=30 lda=30 ldb=30 ldc=30 (fp32)"),
        "M=30, N=1001, K=30, lda=30, ldb=30, ldc=30 unaligned; 4 calls, 4 ms of kernels");
    EXPECT_TRUE(hasFact(f, "_align1/_align2"));
    ASSERT_TRUE(f.gain);
    EXPECT_EQ(f.gain->perStepNs, 100'000 + 200'000);
    EXPECT_EQ(f.gain->confidence, "medium");
    EXPECT_EQ(f.evidence.eventsTotal, 16u); // each call and its kernel
    ASSERT_GE(f.evidence.events.size(), 2u);
    EXPECT_EQ(f.evidence.events[0].table, EventTable::GemmCall);
    EXPECT_EQ(f.evidence.events[1].table, EventTable::Kernel);
    EXPECT_NE(f.title.find("30, 1001"), std::string::npos) << f.title;
    EXPECT_NE(f.fixPython.find("30 -> 32 (16-bit: multiples of 8), 1001 -> 1008"), std::string::npos) << f.fixPython;
}

TEST(GemmDimsNotAligned, SyntheticRecordedPaddedCallsAreClean) {
    auto b = recordedTrace(
        { { "cublasSgemm_v2", 0, 0, 32, 1008, 32, 32, 32, 32, 0, 68, "ampere_sgemm_32x32_nn", 1'000'000 },
            { "cublasGemmEx", 0, 0, 32, 1008, 32, 32, 32, 32, 2, 68,
                "cutlass_80_tensorop_f16_s16816gemm_f16_64x64_32x6_nn_align8", 1'000'000 } },
        false);
    const auto run = runSynthetic(b);
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("8 recorded GEMM calls with kernels"), std::string::npos) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("all dimensions and leading dimensions aligned"), std::string::npos);
}

TEST(GemmDimsNotAligned, SyntheticRecordedCallsTiedByExternalCorrelation) {
    // GPU capture with launches not recorded (--trace kernel): CUPTI's external correlation ties them.
    auto b = recordedTrace({ { "cublasGemmEx", 1, 0, 30, 64, 1001, 1001, 1001, 30, 2, 68,
                               "cutlass_80_tensorop_f16_s16816gemm_f16_64x64_32x6_tn_align1", 1'000'000 } },
        true);
    const auto run = runSynthetic(b);
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    EXPECT_TRUE(hasFact(run.outcome.findings.at(0), "K=1001, lda=1001, ldb=1001, ldc=30"));
}

TEST(GemmDimsNotAligned, SyntheticRecordedTokenCountAloneIsNotWeighed) {
    // A forward Linear(1008, 1008) on 30 tokens: M = out, N = tokens (no leading dimension), K = in.
    auto b = recordedTrace({ { "cublasGemmEx", 1, 0, 1008, 30, 1008, 1008, 1008, 1008, 2, 68,
                               "cutlass_80_tensorop_f16_s16816gemm_f16_64x64_32x6_tn_align8", 1'000'000 } },
        false);
    const auto run = runSynthetic(b);
    EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << run.outcome.reason;
    EXPECT_NE(
        run.outcome.reason.find("4 have only an unaligned M or N that is no leading dimension"), std::string::npos)
        << run.outcome.reason;
}

TEST(GemmDimsNotAligned, SyntheticRecordedCallsWithoutKernelsAreNotEvaluated) {
    // Calls recorded without GPU capture: nothing ties them to kernels, and no framework ops to fall back on.
    auto b = ruletest::syntheticTrace(2, 10'000'000);
    GemmCall g;
    g.startNs = 2'000'000;
    g.endNs = 2'010'000;
    g.thread = b.thread(1, 1);
    g.name = b.intern("cublasSgemm_v2");
    g.m = 30, g.n = 1001, g.k = 30, g.lda = 30, g.ldb = 30, g.ldc = 30, g.aType = 0;
    b.addGemmCall(g);
    Kernel k;
    k.startNs = 3'000'000;
    k.endNs = 4'000'000;
    k.name = b.intern("ampere_sgemm_32x32_nn");
    b.addKernel(k);
    const auto run = runSynthetic(b);
    EXPECT_EQ(run.outcome.status, RuleStatus::NotEvaluated) << run.outcome.reason;
    EXPECT_NE(run.outcome.reason.find("GEMM calls tied to their kernels"), std::string::npos) << run.outcome.reason;
}
