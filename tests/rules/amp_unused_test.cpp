// amp-unused on real traces and synthetic ones. Expected times were derived with a Python script over the
// JSON (no tuneup code): GEMM/convolution kernels picked by name (gemm, nvjet, xmma, cudnn, conv,
// winograd, fft; cuDNN batch-norm bn_fw/bn_bw and layout transforms excluded), precision by name
// (sgemm/scudnn/<float> fp32; s1688/tf32/tfloat32 TF32; fp16/h884/bf16/nvjet_tst low), durations summed.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

bool hasFact(const Finding& f, const std::string& label, const std::string& text) {
    for (const auto& [l, v] : f.evidence.facts)
        if (l == label && v.find(text) != std::string::npos) return true;
    return false;
}

size_t stepsOf(const ruletest::RuleRun& run) {
    return std::max<size_t>(run.report.ranks[0].steps.detection.steps.size(), 1);
}

} // namespace

TEST(AmpUnused, FiresOnFp32ResnetOnV100) {
    // ResNet, fp32 on a Tesla V100 (compute 7.0): fp32 GEMM/conv kernels 299521.5 us in 5 steps.
    TUNEUP_REQUIRE_SHARED_TRACE(
        path, "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    const auto run = ruletest::runRule("amp-unused", { path });
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings.at(0);
    EXPECT_NE(f.title.find("Tesla V100-SXM2-32GB (compute 7.0)"), std::string::npos) << f.title;
    EXPECT_EQ(f.title.find("TF32"), std::string::npos);
    ASSERT_EQ(stepsOf(run), 5u);
    ASSERT_TRUE(f.gain);
    EXPECT_NEAR(double(f.gain->perStepNs), 299'521'500.0 / 5 / 2, 2'000.0); // half of the fp32 time
    EXPECT_EQ(f.severity, Severity::Error); // 31% of a 95.6 ms step
    // Volta: fp16 with a GradScaler, not bf16.
    EXPECT_NE(f.fixPython.find("torch.float16"), std::string::npos);
    EXPECT_NE(f.fixPython.find("GradScaler"), std::string::npos);
    EXPECT_NE(f.fixPython.find("scaler = torch.amp.GradScaler(\"cuda\")"), std::string::npos)
        << "torch.cuda.amp.GradScaler is deprecated from PyTorch 2.3";
    EXPECT_NE(f.fixCpp.find("at::kHalf"), std::string::npos);
    EXPECT_GT(f.evidence.eventsTotal, 0u);
    EXPECT_LE(f.evidence.events.size(), 50u);
}

TEST(AmpUnused, FiresOnFp32TuringAndOnVoltaInferredFromKernelNames) {
    // RTX 2080 Ti (compute 7.5): fp32 GEMM/conv 2765950 us over 30 iterations.
    TUNEUP_REQUIRE_SHARED_TRACE(turing, "param/et_replay/tests/inputs/resnet_kineto.json.gz");
    const auto a = ruletest::runRule("amp-unused", { turing });
    ASSERT_EQ(a.outcome.status, RuleStatus::Raised) << a.outcome.reason;
    EXPECT_NE(a.outcome.findings[0].title.find("compute 7.5"), std::string::npos);
    EXPECT_NEAR(double(a.outcome.findings[0].gain->perStepNs) * double(stepsOf(a)), 2'765'950'000.0 / 2, 2e6);

    // 2020 trace without deviceProperties: volta_sgemm / volta_scudnn names say compute >= 7.0.
    TUNEUP_REQUIRE_SHARED_TRACE(volta,
        "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz");
    const auto b = ruletest::runRule("amp-unused", { volta });
    ASSERT_EQ(b.outcome.status, RuleStatus::Raised) << b.outcome.reason;
    EXPECT_TRUE(hasFact(b.outcome.findings[0], "GPU", "from kernel names"));
    // fp32 221948 us in 4 steps.
    EXPECT_TRUE(hasFact(b.outcome.findings[0], "fp32 GEMM/convolution time (CUDA cores)", "222 ms"));

    // The other side of the trace_diff pair: V100, fp32 211459 us in 6 steps.
    TUNEUP_REQUIRE_SHARED_TRACE(test, "hta/tests/data/trace_diff/test/test.json.gz");
    const auto c = ruletest::runRule("amp-unused", { test });
    ASSERT_EQ(c.outcome.status, RuleStatus::Raised) << c.outcome.reason;
    EXPECT_NEAR(double(c.outcome.findings[0].gain->perStepNs), 211'459'000.0 / 6 / 2, 2'000.0);
}

TEST(AmpUnused, SofterMessageWhenTf32IsOn) {
    // A100 ResNet DDP: TF32 kernels 38611.3 us, fp32 2600.3 us in 3 steps: a third and a half.
    TUNEUP_REQUIRE_SHARED_TRACE(nccl, "hta/tests/data/nccl_parser_config/nccl_data.json.gz");
    const auto a = ruletest::runRule("amp-unused", { nccl });
    ASSERT_EQ(a.outcome.status, RuleStatus::Raised) << a.outcome.reason;
    const Finding& f = a.outcome.findings[0];
    EXPECT_EQ(f.title.rfind("TF32 is on", 0), 0u) << f.title;
    EXPECT_NE(f.severity, Severity::Error);
    EXPECT_EQ(f.gain->confidence, "low");
    EXPECT_NEAR(double(f.gain->perStepNs), (38'611'300.0 / 3 + 2'600'300.0 / 2) / 3, 3'000.0);
    EXPECT_NE(f.fixPython.find("torch.bfloat16"), std::string::npos);

    // DLRM-like on A100: TF32 66811 us, fp32 15881 us.
    TUNEUP_REQUIRE_SHARED_TRACE(control, "hta/tests/data/trace_diff/control/control.json.gz");
    const auto b = ruletest::runRule("amp-unused", { control });
    ASSERT_EQ(b.outcome.status, RuleStatus::Raised) << b.outcome.reason;
    EXPECT_EQ(b.outcome.findings[0].title.rfind("TF32 is on", 0), 0u);
}

TEST(AmpUnused, QuietWhenMixedPrecisionIsUsed) {
    for (const char* relative :
        { "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
            "tracelens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz",
            "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
            "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
            "tracelens/tests/traces/b200/eager_trace.json.gz",
            "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/bert_newAPI_fp16_ddp_4dataloader/" // NOLINT: one path
            "worker0_round1.pt.trace.json.gz" }) {
        TUNEUP_REQUIRE_SHARED_TRACE(path, relative);
        const auto run = ruletest::runRule("amp-unused", { path });
        EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << relative << ": " << run.outcome.reason;
        EXPECT_NE(run.outcome.reason.find("mixed precision is in use"), std::string::npos)
            << relative << ": " << run.outcome.reason;
    }
}

TEST(AmpUnused, NotApplicableOnPascalAndAmd) {
    TUNEUP_REQUIRE_SHARED_TRACE(pascal, "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz");
    const auto a = ruletest::runRule("amp-unused", { pascal });
    EXPECT_EQ(a.outcome.status, RuleStatus::NotApplicable);
    EXPECT_NE(a.outcome.reason.find("Quadro GP100 (compute 6.0) has no tensor cores"), std::string::npos)
        << a.outcome.reason;

    TUNEUP_REQUIRE_SHARED_TRACE(amd, "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
    const auto b = ruletest::runRule("amp-unused", { amd });
    EXPECT_EQ(b.outcome.status, RuleStatus::NotApplicable);
    EXPECT_NE(b.outcome.reason.find("AMD"), std::string::npos);
    // Not silently skipped: the hipBLASLt GEMMs (Cijk_..._SB_...) were read, and they are fp32.
    EXPECT_NE(b.outcome.reason.find("Cijk_*"), std::string::npos) << b.outcome.reason;
    EXPECT_EQ(b.outcome.reason.find("fp32 0 ns"), std::string::npos) << b.outcome.reason;
}

TEST(AmpUnused, NotEvaluatedWithoutKernelsOrArchitecture) {
    // CUPTI range-profiler trace: no kernel activity at all.
    TUNEUP_REQUIRE_SHARED_TRACE(path, "hta/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz");
    const auto a = ruletest::runRule("amp-unused", { path });
    EXPECT_EQ(a.outcome.status, RuleStatus::NotEvaluated);

    // Synthetic: fp32 GEMM kernels whose names do not tell the architecture, no deviceProperties.
    auto builder = ruletest::syntheticTrace(2, 1'000'000);
    for (int s = 0; s < 2; ++s) {
        Kernel k;
        k.startNs = 1'000'000 + s * 1'000'000 + 100'000;
        k.endNs = k.startNs + 500'000;
        k.device = 0;
        k.name = builder.intern("gemm_kernel_fp32_128x128");
        builder.addKernel(k);
    }
    std::vector<TraceModel> models;
    models.push_back(builder.finish());
    const auto b = ruletest::runRuleOnModels("amp-unused", std::move(models));
    EXPECT_EQ(b.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(b.outcome.reason.find("GPU properties"), std::string::npos) << b.outcome.reason;
}

TEST(AmpUnused, SyntheticAmpereFp32GetsBf16AndTf32Advice) {
    // Synthetic: an A100 (compute 8.0) running ampere_sgemm, 4 ms of 10 ms per step: gain 2 ms.
    auto builder = ruletest::syntheticTrace(3, 10'000'000);
    DeviceInfo d;
    d.id = 0;
    d.name = "NVIDIA A100-SXM4-80GB";
    d.computeMajor = 8;
    d.vendor = GpuVendor::Nvidia;
    builder.addDevice(d);
    for (int s = 0; s < 3; ++s) {
        Kernel k;
        k.startNs = 1'000'000 + s * 10'000'000 + 100'000;
        k.endNs = k.startNs + 4'000'000;
        k.device = 0;
        k.name = builder.intern("ampere_sgemm_128x64_nn");
        builder.addKernel(k);
    }
    std::vector<TraceModel> models;
    models.push_back(builder.finish());
    const auto run = ruletest::runRuleOnModels("amp-unused", std::move(models));
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_EQ(f.gain->perStepNs, 2'000'000);
    EXPECT_EQ(f.severity, Severity::Error); // 20% of the step
    EXPECT_NE(f.fixPython.find("torch.bfloat16"), std::string::npos);
    EXPECT_NE(f.fixPython.find("allow_tf32 = True"), std::string::npos);
    EXPECT_NE(f.fixCpp.find("setAllowTF32CuBLAS(true)"), std::string::npos);
    EXPECT_NE(f.detail.find("allow_tf32 is off"), std::string::npos);
}

namespace {

struct LaunchedKernel {
    std::string name;
    int64_t ns;
    std::string opInputTypes; // of the CPU op that launched it ("" for none)
};

// An H100 (compute 9.0) running each kernel for its time per 10 ms step, 3 steps.
std::vector<TraceModel> h100Launches(const std::vector<LaunchedKernel>& kernels) {
    auto builder = ruletest::syntheticTrace(3, 10'000'000);
    DeviceInfo d;
    d.id = 0;
    d.name = "NVIDIA H100 80GB HBM3";
    d.computeMajor = 9;
    d.vendor = GpuVendor::Nvidia;
    builder.addDevice(d);
    uint64_t externalId = 1000;
    for (int s = 0; s < 3; ++s) {
        int64_t at = 1'000'000 + s * 10'000'000 + 100'000;
        for (const LaunchedKernel& launched : kernels) {
            Kernel k;
            k.startNs = at;
            k.endNs = at + launched.ns;
            k.device = 0;
            k.name = builder.intern(launched.name);
            if (!launched.opInputTypes.empty()) {
                CpuOp op;
                op.startNs = at - 50'000;
                op.endNs = at - 40'000;
                op.thread = builder.thread(1, 1);
                op.name = k.name; // Inductor names the launching op after its kernel
                op.inputTypes = builder.intern(launched.opInputTypes);
                op.externalId = k.externalId = ++externalId;
                builder.addCpuOp(op);
            }
            builder.addKernel(k);
            at = k.endNs + 1'000;
        }
    }
    std::vector<TraceModel> models;
    models.push_back(builder.finish());
    return models;
}

std::vector<TraceModel> h100Steps(const std::vector<std::pair<std::string, int64_t>>& kernels) {
    std::vector<LaunchedKernel> launched;
    launched.reserve(kernels.size());
    for (const auto& [name, ns] : kernels)
        launched.push_back({ name, ns, "" });
    return h100Launches(launched);
}

const std::string kSm90Fp32
    = "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x128x8_stage3_warpsize1x4x1_ffma_aligna4_"
      "alignc4_execute_kernel__5x_cublas";

} // namespace

TEST(AmpUnused, Fp32GemmsOnH100AtScaleRaise) {
    // cuBLAS's FFMA kernels (no tensor cores) for 6 ms of each 10 ms step: half of it to gain.
    const auto run = ruletest::runRuleOnModels("amp-unused", h100Steps({ { kSm90Fp32, 6'000'000 } }));
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_NE(f.title.find("NVIDIA H100 80GB HBM3 (compute 9.0)"), std::string::npos) << f.title;
    EXPECT_EQ(f.gain->perStepNs, 3'000'000);
    EXPECT_NE(f.fixPython.find("torch.bfloat16"), std::string::npos);
    EXPECT_EQ(f.severity, Severity::Error); // 30% of the step
}

TEST(AmpUnused, Fp8AndBf16OnH100DoNotRaise) {
    for (const char* low :
        { "cutlass3x_sm90_tensorop_s64x128x32gemm_e4m3_e4m3_f32_bf16_bf16_128x128x128_1x2x1_0_tnn_align16",
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_"
            "kernel__5x_cublas" }) {
        // A little fp32 beside (the loss head), most of the time in low precision.
        const auto run
            = ruletest::runRuleOnModels("amp-unused", h100Steps({ { low, 6'000'000 }, { kSm90Fp32, 500'000 } }));
        EXPECT_EQ(run.outcome.status, RuleStatus::Clean) << low << ": " << run.outcome.reason;
        EXPECT_NE(run.outcome.reason.find("mixed precision is in use"), std::string::npos) << run.outcome.reason;
    }
}

TEST(AmpUnused, TimeOfUnknownPrecisionIsCountedAndSaid) {
    // torch.compile's GEMM template does not say its dtype: it counts neither way, and the finding says how much.
    const auto run = ruletest::runRuleOnModels(
        "amp-unused", h100Steps({ { kSm90Fp32, 4'000'000 }, { "triton_tem_fused_addmm_relu_0", 2'000'000 } }));
    ASSERT_EQ(run.outcome.status, RuleStatus::Raised) << run.outcome.reason;
    const Finding& f = run.outcome.findings[0];
    EXPECT_EQ(f.gain->perStepNs, 2'000'000); // half of the fp32 time only
    EXPECT_TRUE(hasFact(f, "GEMM/convolution/attention time of unknown precision (or fp64)", "6 ms (33%)"))
        << f.evidence.facts.size();
    EXPECT_NE(f.detail.find("6 ms of GEMM/convolution/attention time (33%)"), std::string::npos) << f.detail;
    EXPECT_NE(f.detail.find("counts as unknown"), std::string::npos) << f.detail;

    // All of it unknown: nothing to say for or against, and the reason says how much was not read.
    const auto unknown = ruletest::runRuleOnModels("amp-unused", h100Steps({ { "triton_tem_fused_mm_0", 5'000'000 } }));
    EXPECT_EQ(unknown.outcome.status, RuleStatus::Clean);
    EXPECT_NE(unknown.outcome.reason.find("none with a known precision; 15 ms of unknown precision"), std::string::npos)
        << unknown.outcome.reason;
}

TEST(AmpUnused, TritonKernelsTakeTheirPrecisionFromTheirOpsInputs) {
    // torch.compile's GEMM templates do not spell their types; their launching ops' "Input type" does.
    const auto fp32 = ruletest::runRuleOnModels(
        "amp-unused", h100Launches({ { "triton_tem_fused_mm_0", 6'000'000, "float,float" } }));
    ASSERT_EQ(fp32.outcome.status, RuleStatus::Raised) << fp32.outcome.reason;
    EXPECT_EQ(fp32.outcome.findings[0].gain->perStepNs, 3'000'000);

    const auto bf16 = ruletest::runRuleOnModels("amp-unused",
        h100Launches({ { "triton_tem_fused_addmm_0", 6'000'000, "c10::BFloat16,c10::BFloat16,float,Scalar" } }));
    EXPECT_EQ(bf16.outcome.status, RuleStatus::Clean) << bf16.outcome.reason;
    EXPECT_NE(bf16.outcome.reason.find("mixed precision is in use"), std::string::npos) << bf16.outcome.reason;

    // Ops that record no types leave the kernel unknown.
    const auto untyped = ruletest::runRuleOnModels(
        "amp-unused", h100Launches({ { "triton_tem_fused_mm_0", 6'000'000, "Scalar,Scalar" } }));
    EXPECT_NE(untyped.outcome.reason.find("none with a known precision"), std::string::npos) << untyped.outcome.reason;
}
