#pragma once
// What a GPU kernel is, from its name: the vocabulary the rules share (GEMM, convolution, NCCL
// collective, fill, pointwise, ...) and the precision a GEMM/convolution kernel computes in.
// Names are those of cuBLAS/cuBLASLt/CUTLASS/cuDNN/NCCL/PyTorch/Triton as CUPTI and Kineto report them, and
// of their ROCm counterparts (hipBLASLt/Tensile Cijk_*, MIOpen, RCCL). The families known: docs/kernels.md.

#include "model/trace_model.h"

#include <string_view>
#include <vector>

namespace tuneup::analysis {

enum class KernelClass {
    Gemm, // cuBLAS/cuBLASLt/CUTLASS matrix multiplies (sgemm, nvjet, cutlass ... gemm)
    Convolution, // cuDNN and implicit-GEMM convolutions, winograd, FFT
    Communication, // NCCL/RCCL collectives and point-to-point
    Fill, // zeroing/filling kernels (FillFunctor): what zero_grad() launches
    Pointwise, // elementwise kernels (vectorized/unrolled_elementwise_kernel)
    Reduction, // reduce_kernel, softmax, norms
    Copy, // device copies and layout transforms (direct_copy, nchwToNhwc)
    Optimizer, // fused/multi-tensor optimizer kernels
    Attention, // fused attention: FlashAttention 2/3, cuDNN SDPA, FMHA, memory-efficient attention
    Other, // last: code iterates the classes up to it
};

enum class Precision {
    Unknown,
    Fp64,
    Fp32, // plain fp32 on CUDA cores (e.g. volta_sgemm): no tensor cores
    Tf32, // fp32 data on tensor cores
    Fp16,
    Bf16,
    Int8,
    Fp8,
    Fp4,
};

KernelClass classifyKernel(std::string_view name);
// The class of every kernel of a trace, parallel to model.kernels (each distinct name classified once).
std::vector<KernelClass> classifyKernels(const TraceModel& model);
// The precision a GEMM, convolution or attention kernel computes in, when its name says so (Unknown
// otherwise: Triton's and Inductor's kernels, for one, do not spell their types).
Precision kernelPrecision(std::string_view name);
std::string_view kernelClassName(KernelClass c); // "gemm"
std::string_view precisionName(Precision p); // "fp32"
// Bytes per element of a precision (fp4 packs two in one); 0 for Unknown.
int precisionBytes(Precision p);
// True for precisions that use tensor cores (TF32 and below).
bool usesTensorCores(Precision p);

} // namespace tuneup::analysis
