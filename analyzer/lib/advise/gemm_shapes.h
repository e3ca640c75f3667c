#pragma once
// The shapes of a trace's matrix multiplies, and what their kernels say: M, N, K of a framework GEMM op
// from its input shapes, element sizes of torch and CUDA data types, 16-byte alignment, the innermost
// GEMM ops with the GEMM kernels each launched. Read by gemm-dims-not-aligned; shared with what else
// weighs GEMMs by their shapes.

#include "advise/kernel_class.h"
#include "model/trace_model.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tuneup::analysis {

struct GemmShape {
    int64_t batch = 1, m = 0, n = 0, k = 0;
    size_t matrixInput = 0; // the input whose dtype is the GEMM's (mat1)
};

// aten::mm, addmm, bmm, baddbmm, linear, matmul.
bool isGemmOp(std::string_view name);
// M, N, K (and the batch) of one op from its input dims; nullopt when the dims do not describe a GEMM.
std::optional<GemmShape> gemmShape(std::string_view op, const std::vector<std::vector<int64_t>>& inputDims);

// Bytes per element of a torch dtype as Kineto writes it in "Input type" ("float", "c10::BFloat16").
int torchTypeBytes(std::string_view type);
// Bytes per element of a cudaDataType (library_types.h), 0 when unknown; its name ("bf16").
int cudaTypeBytes(int32_t type);
std::string cudaTypeName(int32_t type);
// cublasComputeType_t values that let fp32 data run on tensor cores (FAST_16F, FAST_16BF, FAST_TF32).
bool fastTensorCoreCompute(int32_t computeType);

// A dimension that is not a multiple of 16 bytes' worth of elements (8 fp16/bf16, 4 fp32/tf32, 16
// int8/fp8); dimensions of 1 are never unaligned.
bool unalignedDim(int64_t elements, int elementBytes);

// What the kernels of one GEMM say, added one by one.
struct GemmKernels {
    int64_t kernelNs = 0;
    int64_t kernels = 0;
    Precision precision = Precision::Unknown; // of its longest kernel
    int64_t longestKernelNs = 0;
    RowIndex firstKernel = kNoRow;
    bool narrowKernel = false; // a kernel named "..._align1/_align2" (an unaligned variant) ran for it

    void add(const TraceModel& model, RowIndex kernel);
};

// The innermost GEMM ops (aten::linear -> aten::addmm: the addmm is the GEMM) and the GEMM kernels each
// launched, directly or through ops nested in it; `isGemmKernel(i)` tells the GEMMs among model.kernels.
struct GemmOps {
    size_t count = 0; // GEMM ops, innermost or not
    std::unordered_map<RowIndex, GemmKernels> innermost; // by CPU op row; only ops that launched kernels
};
GemmOps gemmOps(const TraceModel& model, const std::function<bool(size_t kernel)>& isGemmKernel);

} // namespace tuneup::analysis
