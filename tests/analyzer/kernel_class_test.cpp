// Kernel classification (advise/kernel_class.h) on kernel names as CUPTI, Kineto and Nsight Systems
// report them (the names below come from the traces in ../shared/traces), and the kernels each
// recorded library call launched (advise/library_kernels.h).

#include "advise/kernel_class.h"
#include "advise/library_kernels.h"
#include "model/trace_builder.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

using namespace tuneup::analysis;

namespace {

struct Named {
    const char* name;
    KernelClass kernelClass;
    Precision precision; // checked for GEMMs and convolutions, whose precision the rules use
};

// One or more real names per class and precision.
const Named kKernels[] = {
    // GEMMs: cuBLAS, cuBLASLt (nvjet), CUTLASS, gemv
    { "volta_sgemm_128x64_nn", KernelClass::Gemm, Precision::Fp32 },
    { "ampere_sgemm_128x128_tn", KernelClass::Gemm, Precision::Fp32 },
    { "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4>(cutlass_80_tensorop_s1688gemm_128x"
      "128_16x4_nn_align4::Params)",
        KernelClass::Gemm, Precision::Tf32 },
    { "volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn", KernelClass::Gemm, Precision::Fp16 },
    { "nvjet_tst_144x128_64x6_2x1_v_bz_bias_TNN", KernelClass::Gemm, Precision::Bf16 },
    { "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN", KernelClass::Gemm, Precision::Fp16 },
    { "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel",
        KernelClass::Gemm, Precision::Bf16 },
    { "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, float, float, false, true, "
      "false, false, 7, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>>>",
        KernelClass::Gemm, Precision::Fp32 },
    { "ampere_gcgemm_64x64_nt", KernelClass::Gemm, Precision::Unknown },
    // Convolutions: cuDNN (legacy and runtime-compiled), implicit GEMM, winograd, FFT
    { "cudnn_ampere_scudnn_128x64_relu_xregs_large_nn_v1", KernelClass::Convolution, Precision::Fp32 },
    { "void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>(int, int, int, float "
      "const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float "
      "const*, "
      "float const*, bool, int, int)",
        KernelClass::Convolution, Precision::Fp32 },
    { "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_warpsize2x2x1_"
      "g1_tensor16x8x8_execute_kernel_cudnn",
        KernelClass::Convolution, Precision::Tf32 },
    { "void fft2d_c2r_32x32<float, false, false, 0u, false, false>(float*, float2 const*, int, int, int, int, int, "
      "int, "
      "int, int, int, float, float, cudnn::reduced_divisor, bool, float*, float*, int2, int, int)",
        KernelClass::Convolution, Precision::Fp32 },
    { "void wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int, int, int, float const*, int, float*, float "
      "const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)",
        KernelClass::Convolution, Precision::Fp32 },
    // Communication
    { "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", KernelClass::Communication,
        Precision::Unknown },
    { "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", KernelClass::Communication,
        Precision::Unknown },
    { "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>(c10::BFloat16*, unsigned long, "
      "unsigned int**, unsigned long, unsigned long, unsigned long)",
        KernelClass::Communication, Precision::Bf16 },
    // Fill: what zero_grad() launches
    { "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> "
      ">(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
        KernelClass::Fill, Precision::Fp32 },
    // Optimizer
    { "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
      "namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::FusedSgdMathFunctor<float, 2>, double>",
        KernelClass::Optimizer, Precision::Fp32 },
    // Reductions and norms
    { "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned "
      "int, float, 4> >(at::native::ReduceOp<float, at::native::MeanOps<float, float>, unsigned int, float, 4>)",
        KernelClass::Reduction, Precision::Fp32 },
    { "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, 1>(cudnnTensorStruct, float const*, "
      "cudnnTensorStruct, float*, float const*, float const*, float, float, float*, float*, float*, float*, float, "
      "float)",
        KernelClass::Reduction, Precision::Fp32 },
    { "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, "
      "c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
        KernelClass::Reduction, Precision::Bf16 },
    // Pointwise
    { "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, "
      "3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)",
        KernelClass::Pointwise, Precision::Fp32 },
    { "triton_poi_fused_add_bitwise_and_bitwise_not_bitwise_or_ge_lt_mul_sub_0", KernelClass::Pointwise,
        Precision::Unknown },
    // Copies and layout transforms
    { "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>("
      "cudnn::engines_precompiled::nchw2nhwc_params_t<float>, float const*, float*)",
        KernelClass::Copy, Precision::Fp32 },
    // Attention (FlashAttention 2 as PyTorch builds it; more families in kernel_families_test.cpp)
    { "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
      "cutlass::bfloat16_t>>",
        KernelClass::Attention, Precision::Bf16 },
    // Others: embedding lookups, the application's own kernels
    { "saxpy(double *, double *, double *, double, int)", KernelClass::Other, Precision::Fp64 },
};

TEST(KernelClass, RealKernelNames) {
    for (const Named& k : kKernels) {
        EXPECT_EQ(kernelClassName(classifyKernel(k.name)), kernelClassName(k.kernelClass)) << k.name;
        if (k.kernelClass == KernelClass::Gemm || k.kernelClass == KernelClass::Convolution) {
            EXPECT_EQ(precisionName(kernelPrecision(k.name)), precisionName(k.precision)) << k.name;
        }
    }
}

// Library and type names inside a kernel's template arguments are not what it does.
TEST(KernelClass, NamesInTemplateArgumentsDoNotMakeTheClass) {
    // FBGEMM's embedding kernels carry "fbgemm_gpu::" in their arguments: not GEMMs (and not fp32 GEMMs
    // on CUDA cores for the AMP rule to count).
    const std::string embedding
        = "void split_embedding_backward_codegen_adagrad_unweighted_kernel_cta_per_row_1<float, "
          "float, float, 1ul, 8>(at::GenericPackedTensorAccessor<float, 2ul, "
          "at::RestrictPtrTraits, long>, bool, at::PhiloxCudaState, fbgemm_gpu::FixedDivisor, "
          "float, float)";
    EXPECT_EQ(classifyKernel(embedding), KernelClass::Other);
    EXPECT_EQ(classifyKernel("void at::native::vectorized_elementwise_kernel<4, fbgemm_gpu::_float_to_hfp8_gpu(at::"
                             "Tensor const&, long, long, double)::{lambda(float)#1}, at::detail::Array<char*, 2> >"),
        KernelClass::Pointwise);
    // vLLM's fused RMS norm converts types ("_typeConvert"): a norm, not a convolution.
    EXPECT_EQ(classifyKernel("std::enable_if<(((8)>(0)))&&vllm::_typeConvert<c10::BFloat16>::exists, void>::type "
                             "vllm::fused_add_rms_norm_kernel<c10::BFloat16, 8>(c10::BFloat16*, long, "
                             "c10::BFloat16*, c10::BFloat16 const*, float, int, int)"),
        KernelClass::Reduction);
    // torch.randn's normal distribution is elementwise, not a norm.
    EXPECT_EQ(
        classifyKernel("void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, "
                       "4, at::native::templates::cuda::normal_and_transform<float, float, 4, "
                       "at::CUDAGeneratorImpl*>(at::TensorIteratorBase&, at::CUDAGeneratorImpl*)>"),
        KernelClass::Pointwise);
}

TEST(KernelClass, LowPrecisionMarkersComeBeforeTheirContainers) {
    // FP8 and FP4 GEMMs also name bf16 outputs; an fp16 GEMM names its fp32 accumulator.
    EXPECT_EQ(kernelPrecision("sm100_xmma_gemm_e4m3e4m3_bf16f32_f32_tn_n"), Precision::Fp8);
    EXPECT_EQ(kernelPrecision("bmm_Bfloat16_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_sm100"), Precision::Fp8);
    EXPECT_EQ(kernelPrecision("gemm_E2m1_bf16_sm100"), Precision::Fp4);
    EXPECT_EQ(kernelPrecision("volta_fp16_s884gemm_fp16_128x128_ldg8_f2f_nn"), Precision::Fp16);
    EXPECT_EQ(kernelPrecision("turing_h1688gemm_128x128_ldg8_nn"), Precision::Fp16);
    EXPECT_EQ(kernelPrecision("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n"), Precision::Tf32);
    EXPECT_EQ(kernelPrecision("ampere_dgemm_64x64_nn"), Precision::Fp64);
    EXPECT_EQ(kernelPrecision("sm80_xmma_gemm_i8i8_i8i32_f32_tn_n"), Precision::Int8);
    EXPECT_EQ(kernelPrecision("nvjet_sss_128x64_64x4_1x2_h_bz_NNT"), Precision::Fp32);
    EXPECT_EQ(kernelPrecision("some_kernel"), Precision::Unknown);
}

TEST(KernelClass, TensorCorePrecisions) {
    for (Precision p :
        { Precision::Tf32, Precision::Fp16, Precision::Bf16, Precision::Int8, Precision::Fp8, Precision::Fp4 })
        EXPECT_TRUE(usesTensorCores(p)) << precisionName(p);
    for (Precision p : { Precision::Unknown, Precision::Fp64, Precision::Fp32 })
        EXPECT_FALSE(usesTensorCores(p)) << precisionName(p);
}

TEST(KernelClass, EachClassAndPrecisionHasItsOwnName) {
    std::vector<std::string_view> classes;
    for (KernelClass c : { KernelClass::Gemm, KernelClass::Convolution, KernelClass::Communication, KernelClass::Fill,
             KernelClass::Pointwise, KernelClass::Reduction, KernelClass::Copy, KernelClass::Optimizer,
             KernelClass::Attention, KernelClass::Other }) {
        EXPECT_EQ(std::count(classes.begin(), classes.end(), kernelClassName(c)), 0) << kernelClassName(c);
        classes.push_back(kernelClassName(c));
    }
    std::vector<std::string_view> precisions;
    for (Precision p : { Precision::Unknown, Precision::Fp64, Precision::Fp32, Precision::Tf32, Precision::Fp16,
             Precision::Bf16, Precision::Int8, Precision::Fp8, Precision::Fp4 }) {
        EXPECT_EQ(std::count(precisions.begin(), precisions.end(), precisionName(p)), 0) << precisionName(p);
        precisions.push_back(precisionName(p));
    }
    EXPECT_EQ(kernelClassName(KernelClass::Gemm), "gemm");
    EXPECT_EQ(precisionName(Precision::Bf16), "bf16");
}

Kernel kernelAt(TraceBuilder& b, const std::string& name, int64_t startNs, uint64_t correlation = 0) {
    Kernel k;
    k.startNs = startNs;
    k.endNs = startNs + 500;
    k.stream = 7;
    k.correlation = correlation;
    k.name = b.intern(name);
    return k;
}

TEST(KernelClass, ClassifyKernelsIsParallelToTheKernelTable) {
    TraceBuilder b(SourceFormat::KinetoJson, "synthetic");
    // Added out of order: finish() sorts by time, and the classes must follow the sorted rows.
    b.addKernel(kernelAt(b, "ncclKernel_AllReduce_RING_LL_Sum_float", 3000));
    b.addKernel(kernelAt(b, "volta_sgemm_128x64_nn", 1000));
    b.addKernel(kernelAt(b, "volta_sgemm_128x64_nn", 4000));
    b.addKernel(kernelAt(b, "my_kernel", 2000));
    const TraceModel m = b.finish();
    EXPECT_EQ(classifyKernels(m),
        (std::vector<KernelClass> {
            KernelClass::Gemm, KernelClass::Other, KernelClass::Communication, KernelClass::Gemm }));
    EXPECT_TRUE(classifyKernels(TraceBuilder(SourceFormat::KinetoJson, "empty").finish()).empty());
}

// ---- the kernels of a library call ----------------------------------------------------------------------

GemmCall gemmCall(ThreadIndex thread, int64_t startNs, int64_t endNs, uint64_t externalId = 0) {
    GemmCall g;
    g.startNs = startNs;
    g.endNs = endNs;
    g.thread = thread;
    g.externalId = externalId;
    return g;
}

// CUPTI's link from the CUDA call `correlation` to the library call `externalId` it ran in.
ExternalCorrelation correlated(uint64_t correlation, uint64_t externalId) {
    ExternalCorrelation e;
    e.correlation = correlation;
    e.externalId = externalId;
    return e;
}

ApiCall launch(ThreadIndex thread, int64_t startNs, uint64_t correlation, TraceBuilder& b) {
    ApiCall a;
    a.startNs = startNs;
    a.endNs = startNs + 100;
    a.thread = thread;
    a.api = ApiKind::Runtime;
    a.name = b.intern("cudaLaunchKernel");
    a.correlation = correlation;
    return a;
}

TEST(LibraryKernels, ByExternalIdElseByLaunchesInTheCallsWindow) {
    TraceBuilder b(SourceFormat::TuneupDb, "synthetic");
    const ThreadIndex main = b.thread(1, 1), other = b.thread(1, 2);
    // Call 0 (id 7): its two kernels by external correlation, though launched outside its window.
    b.addGemmCall(gemmCall(main, 1000, 2000, 7));
    b.addExternalCorrelation(correlated(11, 7));
    b.addExternalCorrelation(correlated(12, 7));
    b.addApiCall(launch(main, 5000, 11, b));
    b.addApiCall(launch(main, 5200, 12, b));
    // Call 1: no id; the launch at 10'500 on its thread is its kernel, the one on the other thread is not.
    b.addGemmCall(gemmCall(main, 10'000, 11'000));
    b.addApiCall(launch(main, 10'500, 13, b));
    b.addApiCall(launch(other, 10'600, 14, b));
    // Call 2: launched nothing (a failed call).
    b.addGemmCall(gemmCall(main, 20'000, 21'000));
    for (uint64_t c : { 11, 12, 13, 14 })
        b.addKernel(kernelAt(b, "volta_sgemm_128x64_nn", 30'000 + int64_t(c) * 1000, c));
    const TraceModel m = b.finish();

    const CallKernels calls = gemmCallKernels(m);
    ASSERT_EQ(calls.offsets.size(), 4u);
    auto correlations = [&](size_t call) {
        std::vector<uint64_t> out;
        for (RowIndex k : calls.of(call))
            out.push_back(m.kernels.correlation[size_t(k)]);
        return out;
    };
    EXPECT_EQ(correlations(0), (std::vector<uint64_t> { 11, 12 }));
    EXPECT_EQ(correlations(1), (std::vector<uint64_t> { 13 }));
    EXPECT_TRUE(correlations(2).empty());
    EXPECT_EQ(calls.byExternalId, 1u);
    EXPECT_EQ(calls.byTimeWindow, 1u);
    EXPECT_TRUE(convCallKernels(m).kernels.empty());
}

} // namespace
