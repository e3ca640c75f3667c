// GEMM shapes (advise/gemm_shapes.h): M, N, K from framework ops' input shapes, element sizes, 16-byte
// alignment, and the innermost GEMM ops with their kernels.

#include "advise/gemm_shapes.h"
#include "model/trace_builder.h"

#include <gtest/gtest.h>

using namespace tuneup::analysis;

namespace {

struct Mnk {
    int64_t batch, m, n, k;
    size_t matrixInput;
    bool operator==(const Mnk&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Mnk& s) {
    return out << s.batch << "x(" << s.m << "," << s.n << "," << s.k << ") input " << s.matrixInput;
}

std::optional<Mnk> shapeOf(std::string_view op, std::string_view dims) {
    const auto s = gemmShape(op, parseInputDims(dims));
    if (!s) return std::nullopt;
    return Mnk { s->batch, s->m, s->n, s->k, s->matrixInput };
}

TEST(GemmShapes, EachOpReadsItsOwnInputs) {
    EXPECT_EQ(shapeOf("aten::mm", "[[2048,125],[125,320]]"), (Mnk { 1, 2048, 320, 125, 0 }));
    EXPECT_EQ(shapeOf("aten::addmm", "[[320],[141,512],[512,30522],[],[]]"), (Mnk { 1, 141, 30522, 512, 1 }));
    EXPECT_EQ(shapeOf("aten::bmm", "[[96,3137,64],[96,64,3137]]"), (Mnk { 96, 3137, 3137, 64, 0 }));
    EXPECT_EQ(shapeOf("aten::baddbmm", "[[8,4,5],[8,4,6],[8,6,5],[],[]]"), (Mnk { 8, 4, 5, 6, 1 }));
    // linear: input [..., K], weight [N, K]; the leading dims of the input are rows.
    EXPECT_EQ(shapeOf("aten::linear", "[[4,197,768],[3072,768],[3072]]"), (Mnk { 1, 788, 3072, 768, 0 }));
    // matmul: [..., M, K] x [K, N] folds the leading dims into M; batched on both sides it is a batch.
    EXPECT_EQ(shapeOf("aten::matmul", "[[16,559,1024],[1024,2816]]"), (Mnk { 1, 16 * 559, 2816, 1024, 0 }));
    EXPECT_EQ(shapeOf("aten::matmul", "[[8,12,3137,64],[8,12,64,3137]]"), (Mnk { 96, 3137, 3137, 64, 0 }));
    EXPECT_EQ(shapeOf("aten::matmul", "[[64],[64,10]]"), (Mnk { 1, 1, 10, 64, 0 }));
}

TEST(GemmShapes, WhatIsNoGemmHasNoShape) {
    EXPECT_EQ(shapeOf("aten::mm", "[[2,3],[4,5]]"), std::nullopt) << "inner dimensions differ";
    EXPECT_EQ(shapeOf("aten::matmul", "[[64],[64]]"), std::nullopt) << "a dot product";
    EXPECT_EQ(shapeOf("aten::mm", "[[2,3]]"), std::nullopt) << "one input";
    EXPECT_EQ(shapeOf("aten::mm", "[[0,3],[3,5]]"), std::nullopt) << "an empty matrix";
    EXPECT_EQ(shapeOf("aten::add", "[[2,3],[3,5]]"), std::nullopt);
    EXPECT_TRUE(isGemmOp("aten::addmm"));
    EXPECT_FALSE(isGemmOp("aten::addmv"));
}

TEST(GemmShapes, ElementSizes) {
    EXPECT_EQ(torchTypeBytes("float"), 4);
    EXPECT_EQ(torchTypeBytes("c10::BFloat16"), 2);
    EXPECT_EQ(torchTypeBytes("c10::Half"), 2);
    EXPECT_EQ(torchTypeBytes("c10::Float8_e4m3fn"), 1);
    EXPECT_EQ(torchTypeBytes("double"), 8);
    EXPECT_EQ(precisionBytes(Precision::Tf32), 4);
    EXPECT_EQ(precisionBytes(Precision::Fp8), 1);
    EXPECT_EQ(precisionBytes(Precision::Unknown), 0);
    EXPECT_EQ(cudaTypeBytes(14), 2); // CUDA_R_16BF
    EXPECT_EQ(cudaTypeBytes(28), 1); // CUDA_R_8F_E4M3
    EXPECT_EQ(cudaTypeBytes(999), 0);
    EXPECT_EQ(cudaTypeName(14), "bf16");
    EXPECT_EQ(cudaTypeName(999), "type 999");
    EXPECT_TRUE(fastTensorCoreCompute(77)); // CUBLAS_COMPUTE_32F_FAST_TF32
    EXPECT_FALSE(fastTensorCoreCompute(68)); // CUBLAS_COMPUTE_32F
}

TEST(GemmShapes, AlignmentIsSixteenBytes) {
    EXPECT_TRUE(unalignedDim(141, 2));
    EXPECT_FALSE(unalignedDim(144, 2));
    EXPECT_FALSE(unalignedDim(12, 4)) << "4 fp32 elements are 16 bytes";
    EXPECT_TRUE(unalignedDim(12, 1)) << "int8/fp8 need 16";
    EXPECT_FALSE(unalignedDim(1, 2)) << "a vector is not unaligned";
    EXPECT_FALSE(unalignedDim(3, 16)) << "elements of 16 bytes and more are always aligned";
}

TEST(GemmShapes, InnermostGemmOpsAndTheirKernels) {
    TraceBuilder b(SourceFormat::KinetoJson, "synthetic");
    const ThreadIndex t = b.thread(1, 1);
    auto op = [&](const char* name, int64_t start, int64_t end, uint64_t externalId) {
        CpuOp o;
        o.startNs = start;
        o.endNs = end;
        o.thread = t;
        o.name = b.intern(name);
        o.externalId = externalId;
        b.addCpuOp(o);
    };
    auto kernel = [&](const char* name, int64_t start, int64_t end, uint64_t correlation) {
        ApiCall a;
        a.startNs = start - 500;
        a.endNs = start - 400;
        a.thread = t;
        a.name = b.intern("cudaLaunchKernel");
        a.correlation = correlation;
        b.addApiCall(a);
        Kernel k;
        k.startNs = start;
        k.endNs = end;
        k.stream = 7;
        k.correlation = correlation;
        k.name = b.intern(name);
        b.addKernel(k);
    };
    // linear -> addmm: the addmm is the GEMM; its two kernels (a narrow-load one, and the longest in
    // bf16). A lone mm launches nothing. A relu launches a non-GEMM kernel.
    op("aten::linear", 1000, 9000, 0);
    op("aten::addmm", 1100, 8000, 0);
    kernel("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_align2", 2000, 3000, 1);
    kernel("sm80_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x32", 3100, 6100, 2);
    op("aten::mm", 10'000, 11'000, 0);
    op("aten::relu", 12'000, 13'800, 0);
    kernel("void at::native::vectorized_elementwise_kernel<4, at::native::clamp_min_scalar_kernel>", 14'000, 14'100, 3);
    const TraceModel m = b.finish();
    ASSERT_EQ(m.kernels.cpuOp[0], RowIndex(1)) << "the builder links kernels to the ops that launched them";

    const std::vector<KernelClass> classes = classifyKernels(m);
    const GemmOps gemm = gemmOps(m, [&](size_t i) { return classes[i] == KernelClass::Gemm; });
    EXPECT_EQ(gemm.count, 3u) << "linear, addmm, mm";
    ASSERT_EQ(gemm.innermost.size(), 1u);
    const auto& [row, kernels] = *gemm.innermost.begin();
    EXPECT_EQ(m.str(m.cpuOps.name[size_t(row)]), "aten::addmm");
    EXPECT_EQ(kernels.kernels, 2);
    EXPECT_EQ(kernels.kernelNs, 4000);
    EXPECT_EQ(kernels.longestKernelNs, 3000);
    EXPECT_EQ(kernels.precision, Precision::Bf16);
    EXPECT_EQ(kernels.firstKernel, RowIndex(0));
    EXPECT_TRUE(kernels.narrowKernel);
}

} // namespace
