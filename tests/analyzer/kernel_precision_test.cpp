// The precision of a kernel from its name, and of a Triton kernel from its launching op's input types
// (advise/kernel_precision.h), on made-up names and on a real torch.compile trace.

#include "advise/kernel_precision.h"
#include "kineto_test_support.h"

#include <gtest/gtest.h>

using namespace tuneup::analysis;
using namespace tuneup::test::kineto;

TEST(KernelPrecision, TorchTypesAsKinetoWritesThem) {
    EXPECT_EQ(torchTypePrecision("float"), Precision::Fp32);
    EXPECT_EQ(torchTypePrecision("double"), Precision::Fp64);
    EXPECT_EQ(torchTypePrecision("c10::Half"), Precision::Fp16);
    EXPECT_EQ(torchTypePrecision("c10::BFloat16"), Precision::Bf16);
    EXPECT_EQ(torchTypePrecision("c10::Float8_e4m3fn"), Precision::Fp8);
    EXPECT_EQ(torchTypePrecision("c10::Float8_e5m2"), Precision::Fp8);
    EXPECT_EQ(torchTypePrecision("signed char"), Precision::Int8);
    for (const char* other : { "Scalar", "", "long int", "int", "bool", "TensorList", "c10::complex<float>" })
        EXPECT_EQ(torchTypePrecision(other), Precision::Unknown) << other;
}

TEST(KernelPrecision, TheNarrowestFloatingPointInputIsTheOps) {
    EXPECT_EQ(inputTypesPrecision("float,float,Scalar"), Precision::Fp32);
    EXPECT_EQ(inputTypesPrecision("c10::BFloat16,c10::BFloat16,float,Scalar"), Precision::Bf16);
    EXPECT_EQ(inputTypesPrecision("c10::Float8_e4m3fn,c10::Float8_e4m3fn,c10::BFloat16,float,float"), Precision::Fp8);
    EXPECT_EQ(inputTypesPrecision("long int,Scalar"), Precision::Unknown);
    EXPECT_EQ(inputTypesPrecision(""), Precision::Unknown);
}

TEST(KernelPrecision, OnlyTritonKernelsAreReadFromTheirOps) {
    EXPECT_EQ(kernelPrecision("triton_tem_fused_mm_0", "c10::BFloat16,c10::BFloat16"), Precision::Bf16);
    EXPECT_EQ(kernelPrecision("triton_poi_fused_add_0", "float,float,Scalar"), Precision::Fp32);
    EXPECT_EQ(kernelPrecision("triton_tem_fused_mm_0", ""), Precision::Unknown);
    // A name that says its type wins over the op's (an fp32 op may run a TF32 or bf16 kernel under autocast).
    EXPECT_EQ(
        kernelPrecision("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", "float,float"), Precision::Bf16);
    // Other kernels of unknown type stay unknown: an op's fp32 inputs may run in fp32 or TF32.
    EXPECT_EQ(kernelPrecision("gemm_kernel_xyz", "float,float"), Precision::Unknown);
}

TEST(KernelPrecision, TheTorchCompileTraceOfHtaReadsItsTritonKernelAsFp32) {
    REQUIRE_TRACES();
    // One Triton pointwise kernel launched by the op of its name, with "Input type": float, float, float, Scalar.
    const TraceModel m = load("hta/tests/data/triton_example/triton_example.json.gz");
    ASSERT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.str(m.kernels.name[0]), "triton_poi_fused_add_cos_sin_0");
    EXPECT_EQ(kernelPrecision(m.str(m.kernels.name[0])), Precision::Unknown);
    EXPECT_EQ(kernelPrecision(m, 0), Precision::Fp32);
}
