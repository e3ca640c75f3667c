// The kernel families of today's stacks (docs/kernels.md): class and precision of the names cuBLAS/cuBLASLt,
// CUTLASS, cuDNN, FlashAttention, TensorRT-LLM, Triton, NCCL and the ROCm libraries give their kernels on
// Ampere, Hopper, Blackwell and CDNA. "trace:" names are copied from ../shared/traces (MANIFEST.md); the
// others are the libraries' naming schemes as published (cuBLAS's xmma ffma kernels, CUTLASS 3's procedural
// names, Tensile's type tokens), for families the shared traces do not hold.

#include "advise/kernel_class.h"

#include <gtest/gtest.h>
#include <string>

using namespace tuneup::analysis;

namespace {

struct Named {
    const char* family;
    const char* name;
    KernelClass kernelClass;
    Precision precision;
};

const Named kFamilies[] = {
    // cuBLAS / cuBLASLt, Ampere and Hopper
    { "trace: tracelens h100 (bf16 xmma, Hopper)",
        "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__"
        "5x_cublas",
        KernelClass::Gemm, Precision::Bf16 },
    { "cuBLAS fp32 on CUDA cores (FFMA), Ampere",
        "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x8_stage3_warpsize2x2x1_ffma_aligna4_alignc4_execute_"
        "kernel__5x_cublas",
        KernelClass::Gemm, Precision::Fp32 },
    { "cuBLAS fp32 on CUDA cores, Hopper",
        "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x128x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4_execute_"
        "kernel__5x_cublas",
        KernelClass::Gemm, Precision::Fp32 },
    { "cuBLAS TF32, Ampere",
        "sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16_stage4_warpsize2x2x1_tensor16x8x8",
        KernelClass::Gemm, Precision::Tf32 },
    { "trace: nvfuser report2 (H100 nvjet fp16)", "nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTN", KernelClass::Gemm,
        Precision::Fp16 },
    { "trace: tracelens b200 (nvjet bf16)", "nvjet_tst_64x64_64x16_2x1_2cta_v_bz_bias_TNT", KernelClass::Gemm,
        Precision::Bf16 },
    { "cuBLASLt nvjet fp32", "nvjet_sss_128x64_64x4_1x2_h_bz_NNT", KernelClass::Gemm, Precision::Fp32 },
    { "trace: tracelens h100 (cuBLAS gemv bf16)",
        "std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, __nv_bfloat16, __nv_bfloat16, "
        "__nv_bfloat16, float, false, true, true, false, 7, false>",
        KernelClass::Gemm, Precision::Bf16 },
    // CUTLASS 2 and 3
    { "trace: tracelens h100 (CUTLASS 2 bf16)",
        "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_32x1_nn_align8>(cutlass_80_wmma_"
        "tensorop_bf16_s161616gemm_bf16_16x16_32x1_nn_align8::Params)",
        KernelClass::Gemm, Precision::Bf16 },
    { "trace: hta nccl_data (CUTLASS 2 fp32 SIMT)",
        "void cutlass::Kernel<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::"
        "Params)",
        KernelClass::Gemm, Precision::Fp32 },
    { "CUTLASS 3 Hopper bf16",
        "cutlass3x_sm90_tensorop_s64x128x16gemm_bf16_bf16_f32_void_bf16_128x128x64_1x1x1_0_tnn_align8_"
        "warpspecialized_pingpong_epi_tma",
        KernelClass::Gemm, Precision::Bf16 },
    { "CUTLASS 3 Hopper fp16", "cutlass3x_sm90_tensorop_gemm_f16_f16_f32_f16_f16_128x128x64_2x1x1_0_ntn_align8",
        KernelClass::Gemm, Precision::Fp16 },
    { "CUTLASS 3 Hopper fp8",
        "cutlass3x_sm90_tensorop_s64x128x32gemm_e4m3_e4m3_f32_bf16_bf16_128x128x128_1x2x1_0_tnn_align16_"
        "warpspecialized_cooperative_fp8_fastaccum_epi_tma",
        KernelClass::Gemm, Precision::Fp8 },
    { "CUTLASS wgmma", "cutlass_sm90_wgmma_bf16_bf16_f32_128x128x64_warpspecialized", KernelClass::Gemm,
        Precision::Bf16 },
    // Blackwell: TensorRT-LLM MoE GEMMs (FP8 activations, FP4 weights)
    { "trace: tracelens b200 (TensorRT-LLM MoE bmm)",
        "bmm_MxE4m3_MxE2m1MxE4m3_Fp32_t128x16x256u2_s3_et128x16_m128x16x32_cga1x1x1_16dp256b_rM_TN_transOut_"
        "schedP2x1x2x3_biasM_bN_tma_tmaOpt_clmp_swiGlu_dynBatch_sm100f",
        KernelClass::Gemm, Precision::Fp8 },
    // cuDNN: legacy, runtime-compiled (v8/v9 engines), SDPA
    { "trace: tracelens h100 vit (cuDNN CUTLASS conv bf16)",
        "void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>("
        "cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8::Params)",
        KernelClass::Convolution, Precision::Bf16 },
    { "trace: hta nccl_data (cuDNN xmma conv TF32)",
        "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16_stage4_"
        "warpsize2x2x1_"
        "g1_tensor16x8x8_execute_kernel_cudnn_infer",
        KernelClass::Convolution, Precision::Tf32 },
    { "trace: hta nccl_data (cuDNN fp32)", "cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1",
        KernelClass::Convolution, Precision::Fp32 },
    { "cuDNN v9 SDPA engine",
        "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
        KernelClass::Attention, Precision::Fp16 },
    // Attention: FlashAttention 2 and 3, TensorRT-LLM FMHA
    { "trace: tracelens h100 (FlashAttention 2 in PyTorch)",
        "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, "
        "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, "
        "false, false>",
        KernelClass::Attention, Precision::Bf16 },
    { "FlashAttention 3 (Hopper)",
        "void "
        "cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::CollectiveMainloopFwdSm90"
        "<2, cute::tuple<int, int, int>, 128, 128, cutlass::bfloat16_t, float, cutlass::arch::Sm90> > > >",
        KernelClass::Attention, Precision::Bf16 },
    { "trace: tracelens b200 (TensorRT-LLM FMHA fp8)",
        "fmhaSm100aKernel_QkvE4m3OBfloat16H64PagedKvCausalP16VarSeqQ128Kv128PersistentContext", KernelClass::Attention,
        Precision::Fp8 },
    // Triton (torch.compile): the names do not say the dtype
    { "trace: hta triton_example", "triton_poi_fused_add_cos_sin_0", KernelClass::Pointwise, Precision::Unknown },
    { "Inductor reduction", "triton_red_fused__log_softmax_0", KernelClass::Reduction, Precision::Unknown },
    { "Inductor persistent reduction", "triton_per_fused_native_layer_norm_1", KernelClass::Reduction,
        Precision::Unknown },
    { "Inductor GEMM template", "triton_tem_fused_addmm_relu_0", KernelClass::Gemm, Precision::Unknown },
    { "trace: hta negative_queue (older Inductor names)", "triton__0d1d2d3d4d5d6d", KernelClass::Other,
        Precision::Unknown },
    // NCCL collectives and point-to-point
    { "trace: tracelens b200 (NCCL all-gather)", "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        KernelClass::Communication, Precision::Unknown },
    { "NCCL reduce-scatter", "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
        KernelClass::Communication, Precision::Bf16 },
    { "trace: hta negative_queue (NCCL send/recv)",
        "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
        KernelClass::Communication, Precision::Unknown },
    { "NCCL all-to-all (send/recv)", "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
        KernelClass::Communication, Precision::Unknown },
    // ROCm: hipBLASLt/rocBLAS (Tensile), MIOpen, RCCL
    { "trace: hta mi250 (hipBLASLt fp32)",
        "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32_MI16x16x1_SN_LDSB0_AFC1_AFEM1_AFEM1_ASEM1_CLR1_CADS0_EPS0_"
        "GRVWA2_GRVWB2_GSUAMB_ISA90a_IU1_K1",
        KernelClass::Gemm, Precision::Fp32 },
    { "hipBLASLt bf16", "Cijk_Ailk_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_LDSB1",
        KernelClass::Gemm, Precision::Bf16 },
    { "hipBLASLt fp16", "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN", KernelClass::Gemm, Precision::Fp16 },
    { "hipBLASLt fp8", "Cijk_Ailk_Bljk_F8F8S_SR_BH_MT256x256x128_MI32x32x16x1", KernelClass::Gemm, Precision::Fp8 },
    { "hipBLASLt hand-tuned", "Custom_Cijk_Ailk_Bljk_BBS_BH_Bias_SAV_UserArgs_MT128x128x64_MI16x16x1_gfx950",
        KernelClass::Gemm, Precision::Bf16 },
    { "rocBLAS fp64", "Cijk_Ailk_Bljk_DB_MT64x64x16_SN_1LDSB0", KernelClass::Gemm, Precision::Fp64 },
    { "MIOpen implicit-GEMM convolution", "igemm_fwd_gtcx_nhwc_fp16_bx0_ex1_bt128x128x32_wt32x32x8_ws1x1_wr2x2",
        KernelClass::Convolution, Precision::Fp16 },
    { "MIOpen assembly convolution", "miopenSp3AsmConv_v21_1_3_gfx9_fp32_stride1", KernelClass::Convolution,
        Precision::Fp32 },
    { "MIOpen batch norm", "MIOpenBatchNormFwdTrainSpatial", KernelClass::Reduction, Precision::Unknown },
    { "RCCL", "ncclDevKernel_Generic_1(ncclDevComm*, unsigned long, ncclWork*) [rccl]", KernelClass::Communication,
        Precision::Unknown },
};

TEST(KernelFamilies, ClassAndPrecisionOfEachFamily) {
    for (const Named& k : kFamilies) {
        EXPECT_EQ(kernelClassName(classifyKernel(k.name)), kernelClassName(k.kernelClass))
            << k.family << ": " << k.name;
        if (k.kernelClass == KernelClass::Gemm || k.kernelClass == KernelClass::Convolution
            || k.kernelClass == KernelClass::Attention) {
            EXPECT_EQ(precisionName(kernelPrecision(k.name)), precisionName(k.precision)) << k.family << ": " << k.name;
        }
    }
}

TEST(KernelFamilies, TensorCoresOnlyWhereThePrecisionSaysSo) {
    EXPECT_FALSE(usesTensorCores(kernelPrecision(
        "sm90_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x128x8_stage3_warpsize1x4x1_ffma_aligna4_alignc4")));
    EXPECT_TRUE(usesTensorCores(kernelPrecision("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x128x16")));
    EXPECT_TRUE(usesTensorCores(kernelPrecision("Cijk_Ailk_Bljk_F8F8S_SR_BH_MT256x256x128")));
    // A name that is not a Tensile kernel's is not read as one.
    EXPECT_EQ(kernelPrecision("Cijk"), Precision::Unknown);
    EXPECT_EQ(classifyKernel("Cijk_"), KernelClass::Other);
}

} // namespace
