#pragma once
// The calls tests/clients/library_calls.cpp makes into the real cuBLAS, cuBLASLt and cuDNN, shared with
// the test that checks what the agent recorded of them (tests/integration/interposer_test.cpp). Without a
// GPU every call fails (no handle) after its arguments were passed: the agent records them all the same.

#include <cstdint>

namespace tuneup::test {

inline constexpr int64_t kNone = INT64_MIN; // a column the call does not have (stored NULL)

// cudaDataType / cublasComputeType_t codes used below.
enum : int {
    kR32F = 0,
    kR64F = 1,
    kR16F = 2,
    kR16BF = 14,
    kCompute16F = 64,
    kCompute32F = 68,
    kCompute64F = 70,
    kCompute32FFastTf32 = 77
};

struct GemmCase {
    const char* function;
    int transa, transb;
    int64_t m, n, k, lda, ldb, ldc, strideA, strideB, strideC, batch;
    int aType, bType, cType, computeType;
};

// One call of each cuBLAS GEMM the agent interposes (cuBLAS's column-major view).
inline constexpr GemmCase kGemmCases[] = {
    { "cublasSgemm_v2", 0, 1, 30, 1001, 30, 30, 1001, 30, kNone, kNone, kNone, 1, kR32F, kR32F, kR32F, kCompute32F },
    { "cublasSgemm_v2_64", 0, 0, 32, 1008, 32, 32, 32, 32, kNone, kNone, kNone, 1, kR32F, kR32F, kR32F, kCompute32F },
    { "cublasHgemm", 1, 0, 64, 48, 16, 16, 16, 64, kNone, kNone, kNone, 1, kR16F, kR16F, kR16F, kCompute16F },
    { "cublasHgemm_64", 0, 0, 65, 66, 67, 65, 67, 65, kNone, kNone, kNone, 1, kR16F, kR16F, kR16F, kCompute16F },
    { "cublasDgemm_v2", 0, 0, 10, 20, 30, 10, 30, 10, kNone, kNone, kNone, 1, kR64F, kR64F, kR64F, kCompute64F },
    { "cublasDgemm_v2_64", 1, 1, 11, 21, 31, 31, 21, 11, kNone, kNone, kNone, 1, kR64F, kR64F, kR64F, kCompute64F },
    { "cublasGemmEx", 0, 1, 30, 1001, 30, 30, 1001, 30, kNone, kNone, kNone, 1, kR16F, kR16F, kR16F, kCompute32F },
    { "cublasGemmEx_64", 1, 0, 1008, 32, 32, 32, 32, 1008, kNone, kNone, kNone, 1, kR16BF, kR16BF, kR32F,
        kCompute32FFastTf32 },
    { "cublasSgemmStridedBatched", 0, 0, 64, 64, 64, 64, 64, 64, 4096, 4096, 4096, 12, kR32F, kR32F, kR32F,
        kCompute32F },
    { "cublasSgemmStridedBatched_64", 1, 0, 63, 65, 67, 67, 67, 63, 4221, 4355, 4095, 3, kR32F, kR32F, kR32F,
        kCompute32F },
    { "cublasHgemmStridedBatched", 0, 1, 197, 64, 197, 197, 64, 197, 38809, 12608, 12608, 96, kR16F, kR16F, kR16F,
        kCompute16F },
    { "cublasHgemmStridedBatched_64", 0, 0, 8, 8, 8, 8, 8, 8, 64, 64, 64, 5, kR16F, kR16F, kR16F, kCompute16F },
    { "cublasGemmStridedBatchedEx", 0, 0, 3137, 64, 3137, 3137, 3137, 3137, 9840769, 200768, 200768, 96, kR16BF, kR16BF,
        kR16BF, kCompute32F },
    { "cublasGemmStridedBatchedEx_64", 1, 1, 40, 50, 60, 60, 50, 40, 2400, 3000, 2000, 7, kR16F, kR16F, kR16F,
        kCompute16F },
    { "cublasGemmBatchedEx", 0, 0, 16, 16, 16, 16, 16, 16, kNone, kNone, kNone, 4, kR16F, kR16F, kR16F, kCompute16F },
    { "cublasGemmBatchedEx_64", 0, 1, 24, 40, 56, 24, 40, 24, kNone, kNone, kNone, 9, kR32F, kR32F, kR32F,
        kCompute32FFastTf32 },
};

// cuBLASLt: what library_calls.cpp's matmuls must be recorded as (M = rows(D), N = cols(D), K from A and
// transa). The layouts and descriptors are made and changed in library_calls.cpp.
struct LtCase {
    const char* what;
    int transa, transb;
    int64_t m, n, k, lda, ldb, ldc, strideA, strideB, strideC, batch;
    int aType, bType, cType, computeType, epilogue;
};
inline constexpr LtCase kLtCases[] = {
    // Linear(1001 -> 30) on 64 tokens in fp16 with bias: y^T = W x^T, A = W^T (k x m, transposed).
    { "linear", 1, 0, 30, 64, 1001, 1001, 1001, 30, kNone, kNone, kNone, 1, kR16F, kR16F, kR16F, kCompute32F, 4 },
    // The same descriptors after SetAttribute: 12 batches, strided, no epilogue.
    { "batched", 1, 0, 30, 64, 1001, 1001, 1001, 30, 30030, 64064, 1920, 12, kR16F, kR16F, kR16F, kCompute32F, 1 },
    // Descriptors initialised in the caller's memory (cublasLtMatrixLayoutInit / cublasLtMatmulDescInit).
    { "stack", 0, 0, 48, 40, 32, 48, 32, 48, kNone, kNone, kNone, 1, kR16BF, kR16BF, kR16BF, kCompute32F, 1 },
};

// cuDNN legacy API: one input, filter and convolution for every call (an ImageNet stem in fp16, NCHW).
struct ConvCase {
    int64_t n, c, h, w, k, r, s, padH, padW, strideH, strideW, dilationH, dilationW, groups;
};
inline constexpr ConvCase kLegacyConv = { 8, 3, 224, 224, 64, 7, 7, 3, 3, 2, 2, 1, 1, 1 };
// A grouped convolution in channels-last memory (NHWC strides).
inline constexpr ConvCase kGroupedConv = { 4, 32, 56, 56, 64, 3, 3, 1, 1, 1, 1, 2, 2, 2 };
// The backend API's convolution (the engine global indices of two plans run on it).
inline constexpr ConvCase kBackendConv = { 16, 64, 56, 56, 128, 3, 3, 1, 1, 2, 2, 1, 1, 1 };
inline constexpr int64_t kBackendEngines[] = { 7, 9 };

} // namespace tuneup::test
