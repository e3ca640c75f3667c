// cuBLAS GEMM interposers (LD_PRELOAD): each records the call's shape -- transposes, M, N, K, batch, data and
// compute types, leading dimensions, strides -- its time and status, then or instead just forwards to the
// real function. Only the outermost interposed call on a thread is recorded (interpose_record.h): the
// cuBLASLt matmul cuBLAS runs inside is not recorded again. Shapes are as cuBLAS sees them (column-major).
// The types of Sgemm/Hgemm/Dgemm are implied; Sgemm's compute type is 32F, which the handle's math mode
// may run as TF32 (torch's tf32.cublas flag says).

#include "host_events.h"
#include "interpose_record.h"
#include "interpose_resolve.h"
#include "library_functions.h"
#include "trace_schema.h"

#include <cublas_v2.h>

#define TUNEUP_INTERPOSE extern "C" __attribute__((visibility("default")))

using namespace tuneup::agent;

namespace {

struct BlasShape {
    int transa = -1, transb = -1;
    int64_t m = kUnknown, n = kUnknown, k = kUnknown, batch = 1, lda = kUnknown, ldb = kUnknown, ldc = kUnknown;
    int64_t strideA = kUnknown, strideB = kUnknown, strideC = kUnknown;
    int32_t aType = -1, bType = -1, cType = -1, computeType = -1;
};

// Calls the real function timed and records it (the outermost interposed call on this thread). Out of
// line and with the exported function's own parameters, so that both paths below are plain jumps.
template <LibraryFunction Function, auto ShapeOf, class Fn, class... Args>
__attribute__((noinline)) cublasStatus_t recordGemm(Fn f, Args... args) {
    LibraryCall call(true);
    const cublasStatus_t status = f(args...);
    call.finish();
    const BlasShape s = ShapeOf(args...);
    GemmCallFixed out {};
    out.endNs = call.endNs;
    out.m = s.m;
    out.n = s.n;
    out.k = s.k;
    out.batch = s.batch;
    out.lda = s.lda;
    out.ldb = s.ldb;
    out.ldc = s.ldc;
    out.strideA = s.strideA;
    out.strideB = s.strideB;
    out.strideC = s.strideC;
    out.externalId = call.externalId;
    out.status = int32_t(status);
    out.aType = s.aType;
    out.bType = s.bType;
    out.cType = s.cType;
    out.computeType = s.computeType;
    out.epilogue = -1;
    out.function = uint16_t(Function);
    out.transa = int8_t(s.transa);
    out.transb = int8_t(s.transb);
    out.api = uint8_t(tuneup::schema::kGemmCublas);
    emitGemmCall(call.startNs, out);
    return status;
}

// Forwards to the real function; records the call when GEMMs are recorded and no other interposed call
// runs on this thread. A call that is not recorded pays the lookup of its caller's copy (a load and a
// compare), a load, two compares and the jump.
template <auto& Real, LibraryFunction Function, auto ShapeOf, class... Args>
inline cublasStatus_t callGemm(const void* caller, Args... args) {
    const auto f = Real.get(caller);
    if (!f) [[unlikely]]
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!recordingGemm() || insideLibraryCall()) [[likely]]
        return f(args...);
    return recordGemm<Function, ShapeOf>(f, args...);
}

// ---- the shapes, by argument layout ---------------------------------------------------------------------
// The GEMMs come in five argument layouts, each read by one generic lambda: a function and its _64 twin share
// one (`auto` takes their int and int64_t sizes alike), and the S/H/D variants share the typed ones, their
// data and compute types being the function's. The scalars and matrices are passed over.

// cublas{S,H,D}gemm.
template <cudaDataType Type, cublasComputeType_t Compute>
constexpr auto kTypedGemmShape
    = [](cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, auto m, auto n, auto k, auto /*alpha*/,
          auto /*A*/, auto lda, auto /*B*/, auto ldb, auto /*beta*/, auto /*C*/, auto ldc) {
          return BlasShape { .transa = transa,
              .transb = transb,
              .m = m,
              .n = n,
              .k = k,
              .lda = lda,
              .ldb = ldb,
              .ldc = ldc,
              .aType = Type,
              .bType = Type,
              .cType = Type,
              .computeType = Compute };
      };

// cublas{S,H}gemmStridedBatched: a stride after each leading dimension, the batch last.
template <cudaDataType Type, cublasComputeType_t Compute>
constexpr auto kTypedStridedBatchedShape
    = [](cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, auto m, auto n, auto k, auto /*alpha*/,
          auto /*A*/, auto lda, long long strideA, auto /*B*/, auto ldb, long long strideB, auto /*beta*/, auto /*C*/,
          auto ldc, long long strideC, auto batch) {
          return BlasShape { .transa = transa,
              .transb = transb,
              .m = m,
              .n = n,
              .k = k,
              .batch = batch,
              .lda = lda,
              .ldb = ldb,
              .ldc = ldc,
              .strideA = strideA,
              .strideB = strideB,
              .strideC = strideC,
              .aType = Type,
              .bType = Type,
              .cType = Type,
              .computeType = Compute };
      };

// cublasGemmEx: each matrix's data type before its leading dimension, the compute type and algorithm last.
constexpr auto kGemmExShape
    = [](cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, auto m, auto n, auto k, auto /*alpha*/,
          auto /*A*/, cudaDataType aType, auto lda, auto /*B*/, cudaDataType bType, auto ldb, auto /*beta*/, auto /*C*/,
          cudaDataType cType, auto ldc, cublasComputeType_t computeType, cublasGemmAlgo_t) {
          return BlasShape { .transa = transa,
              .transb = transb,
              .m = m,
              .n = n,
              .k = k,
              .lda = lda,
              .ldb = ldb,
              .ldc = ldc,
              .aType = aType,
              .bType = bType,
              .cType = cType,
              .computeType = computeType };
      };

// cublasGemmStridedBatchedEx: cublasGemmEx with a stride after each leading dimension and the batch before the
// compute type.
constexpr auto kGemmStridedBatchedExShape
    = [](cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, auto m, auto n, auto k, auto /*alpha*/,
          auto /*A*/, cudaDataType aType, auto lda, long long strideA, auto /*B*/, cudaDataType bType, auto ldb,
          long long strideB, auto /*beta*/, auto /*C*/, cudaDataType cType, auto ldc, long long strideC, auto batch,
          cublasComputeType_t computeType, cublasGemmAlgo_t) {
          return BlasShape { .transa = transa,
              .transb = transb,
              .m = m,
              .n = n,
              .k = k,
              .batch = batch,
              .lda = lda,
              .ldb = ldb,
              .ldc = ldc,
              .strideA = strideA,
              .strideB = strideB,
              .strideC = strideC,
              .aType = aType,
              .bType = bType,
              .cType = cType,
              .computeType = computeType };
      };

// cublasGemmBatchedEx: cublasGemmEx over arrays of matrices (no strides), the batch before the compute type.
constexpr auto kGemmBatchedExShape =
    [](cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, auto m, auto n, auto k, auto /*alpha*/,
        auto /*Aarray*/, cudaDataType aType, auto lda, auto /*Barray*/, cudaDataType bType, auto ldb, auto /*beta*/,
        auto /*Carray*/, cudaDataType cType, auto ldc, auto batch, cublasComputeType_t computeType, cublasGemmAlgo_t) {
        return BlasShape { .transa = transa,
            .transb = transb,
            .m = m,
            .n = n,
            .k = k,
            .batch = batch,
            .lda = lda,
            .ldb = ldb,
            .ldc = ldc,
            .aType = aType,
            .bType = bType,
            .cType = cType,
            .computeType = computeType };
    };

// ---- the real functions ---------------------------------------------------------------------------------
// The non-_64 Ex functions' types are spelled out: cublas_api.h overloads them for C++ (with a cudaDataType
// compute type), which makes decltype(&::cublasGemmEx) ambiguous.

RealFunction<decltype(&::cublasSgemm_v2)> s_cublasSgemm { "cublasSgemm_v2", kCublas };
RealFunction<decltype(&::cublasSgemm_v2_64)> s_cublasSgemm64 { "cublasSgemm_v2_64", kCublas };
RealFunction<decltype(&::cublasHgemm)> s_cublasHgemm { "cublasHgemm", kCublas };
RealFunction<decltype(&::cublasHgemm_64)> s_cublasHgemm64 { "cublasHgemm_64", kCublas };
RealFunction<decltype(&::cublasDgemm_v2)> s_cublasDgemm { "cublasDgemm_v2", kCublas };
RealFunction<decltype(&::cublasDgemm_v2_64)> s_cublasDgemm64 { "cublasDgemm_v2_64", kCublas };
RealFunction<cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int,
    cublasComputeType_t, cublasGemmAlgo_t)>
    s_cublasGemmEx { "cublasGemmEx", kCublas };
RealFunction<decltype(&::cublasGemmEx_64)> s_cublasGemmEx64 { "cublasGemmEx_64", kCublas };
RealFunction<decltype(&::cublasSgemmStridedBatched)> s_cublasSgemmStridedBatched { "cublasSgemmStridedBatched",
    kCublas };
RealFunction<decltype(&::cublasSgemmStridedBatched_64)> s_cublasSgemmStridedBatched64 { "cublasSgemmStridedBatched_64",
    kCublas };
RealFunction<decltype(&::cublasHgemmStridedBatched)> s_cublasHgemmStridedBatched { "cublasHgemmStridedBatched",
    kCublas };
RealFunction<decltype(&::cublasHgemmStridedBatched_64)> s_cublasHgemmStridedBatched64 { "cublasHgemmStridedBatched_64",
    kCublas };
RealFunction<cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
    const void*, cudaDataType, int, long long int, const void*, cudaDataType, int, long long int, const void*, void*,
    cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t)>
    s_cublasGemmStridedBatchedEx { "cublasGemmStridedBatchedEx", kCublas };
RealFunction<decltype(&::cublasGemmStridedBatchedEx_64)> s_cublasGemmStridedBatchedEx64 {
    "cublasGemmStridedBatchedEx_64", kCublas
};
RealFunction<cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
    const void* const*, cudaDataType, int, const void* const*, cudaDataType, int, const void*, void* const*,
    cudaDataType, int, int, cublasComputeType_t, cublasGemmAlgo_t)>
    s_cublasGemmBatchedEx { "cublasGemmBatchedEx", kCublas };
RealFunction<decltype(&::cublasGemmBatchedEx_64)> s_cublasGemmBatchedEx64 { "cublasGemmBatchedEx_64", kCublas };

} // namespace

// ---- the interposed functions ---------------------------------------------------------------------------

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const float* alpha, const float* A, int lda, const float* B, int ldb,
    const float* beta, float* C, int ldc) {
    return callGemm<s_cublasSgemm, LibraryFunction::CublasSgemm, kTypedGemmShape<CUDA_R_32F, CUBLAS_COMPUTE_32F>>(
        TUNEUP_CALLER, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const float* alpha, const float* A, int64_t lda,
    const float* B, int64_t ldb, const float* beta, float* C, int64_t ldc) {
    return callGemm<s_cublasSgemm64, LibraryFunction::CublasSgemm64, kTypedGemmShape<CUDA_R_32F, CUBLAS_COMPUTE_32F>>(
        TUNEUP_CALLER, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasHgemm(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const __half* alpha, const __half* A, int lda, const __half* B,
    int ldb, const __half* beta, __half* C, int ldc) {
    return callGemm<s_cublasHgemm, LibraryFunction::CublasHgemm, kTypedGemmShape<CUDA_R_16F, CUBLAS_COMPUTE_16F>>(
        TUNEUP_CALLER, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasHgemm_64(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const __half* alpha, const __half* A, int64_t lda,
    const __half* B, int64_t ldb, const __half* beta, __half* C, int64_t ldc) {
    return callGemm<s_cublasHgemm64, LibraryFunction::CublasHgemm64, kTypedGemmShape<CUDA_R_16F, CUBLAS_COMPUTE_16F>>(
        TUNEUP_CALLER, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const double* alpha, const double* A, int lda, const double* B,
    int ldb, const double* beta, double* C, int ldc) {
    return callGemm<s_cublasDgemm, LibraryFunction::CublasDgemm, kTypedGemmShape<CUDA_R_64F, CUBLAS_COMPUTE_64F>>(
        TUNEUP_CALLER, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const double* alpha, const double* A, int64_t lda,
    const double* B, int64_t ldb, const double* beta, double* C, int64_t ldc) {
    return callGemm<s_cublasDgemm64, LibraryFunction::CublasDgemm64, kTypedGemmShape<CUDA_R_64F, CUBLAS_COMPUTE_64F>>(
        TUNEUP_CALLER, handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
    const void* B, cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    return callGemm<s_cublasGemmEx, LibraryFunction::CublasGemmEx, kGemmExShape>(TUNEUP_CALLER, handle, transa, transb,
        m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const void* alpha, const void* A, cudaDataType Atype,
    int64_t lda, const void* B, cudaDataType Btype, int64_t ldb, const void* beta, void* C, cudaDataType Ctype,
    int64_t ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    return callGemm<s_cublasGemmEx64, LibraryFunction::CublasGemmEx64, kGemmExShape>(TUNEUP_CALLER, handle, transa,
        transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const float* alpha, const float* A, int lda, long long int strideA,
    const float* B, int ldb, long long int strideB, const float* beta, float* C, int ldc, long long int strideC,
    int batchCount) {
    return callGemm<s_cublasSgemmStridedBatched, LibraryFunction::CublasSgemmStridedBatched,
        kTypedStridedBatchedShape<CUDA_R_32F, CUBLAS_COMPUTE_32F>>(TUNEUP_CALLER, handle, transa, transb, m, n, k,
        alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched_64(cublasHandle_t handle,
    cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const float* alpha,
    const float* A, int64_t lda, long long int strideA, const float* B, int64_t ldb, long long int strideB,
    const float* beta, float* C, int64_t ldc, long long int strideC, int64_t batchCount) {
    return callGemm<s_cublasSgemmStridedBatched64, LibraryFunction::CublasSgemmStridedBatched64,
        kTypedStridedBatchedShape<CUDA_R_32F, CUBLAS_COMPUTE_32F>>(TUNEUP_CALLER, handle, transa, transb, m, n, k,
        alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasHgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const __half* alpha, const __half* A, int lda, long long int strideA,
    const __half* B, int ldb, long long int strideB, const __half* beta, __half* C, int ldc, long long int strideC,
    int batchCount) {
    return callGemm<s_cublasHgemmStridedBatched, LibraryFunction::CublasHgemmStridedBatched,
        kTypedStridedBatchedShape<CUDA_R_16F, CUBLAS_COMPUTE_16F>>(TUNEUP_CALLER, handle, transa, transb, m, n, k,
        alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasHgemmStridedBatched_64(cublasHandle_t handle,
    cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const __half* alpha,
    const __half* A, int64_t lda, long long int strideA, const __half* B, int64_t ldb, long long int strideB,
    const __half* beta, __half* C, int64_t ldc, long long int strideC, int64_t batchCount) {
    return callGemm<s_cublasHgemmStridedBatched64, LibraryFunction::CublasHgemmStridedBatched64,
        kTypedStridedBatchedShape<CUDA_R_16F, CUBLAS_COMPUTE_16F>>(TUNEUP_CALLER, handle, transa, transb, m, n, k,
        alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
    long long int strideA, const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount, cublasComputeType_t computeType,
    cublasGemmAlgo_t algo) {
    return callGemm<s_cublasGemmStridedBatchedEx, LibraryFunction::CublasGemmStridedBatchedEx,
        kGemmStridedBatchedExShape>(TUNEUP_CALLER, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
        Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx_64(cublasHandle_t handle,
    cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const void* alpha,
    const void* A, cudaDataType Atype, int64_t lda, long long int strideA, const void* B, cudaDataType Btype,
    int64_t ldb, long long int strideB, const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
    long long int strideC, int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    return callGemm<s_cublasGemmStridedBatchedEx64, LibraryFunction::CublasGemmStridedBatchedEx64,
        kGemmStridedBatchedExShape>(TUNEUP_CALLER, handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B,
        Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const void* alpha, const void* const Aarray[], cudaDataType Atype,
    int lda, const void* const Barray[], cudaDataType Btype, int ldb, const void* beta, void* const Carray[],
    cudaDataType Ctype, int ldc, int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
    return callGemm<s_cublasGemmBatchedEx, LibraryFunction::CublasGemmBatchedEx, kGemmBatchedExShape>(TUNEUP_CALLER,
        handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta, Carray, Ctype, ldc,
        batchCount, computeType, algo);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasGemmBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const void* alpha, const void* const Aarray[],
    cudaDataType Atype, int64_t lda, const void* const Barray[], cudaDataType Btype, int64_t ldb, const void* beta,
    void* const Carray[], cudaDataType Ctype, int64_t ldc, int64_t batchCount, cublasComputeType_t computeType,
    cublasGemmAlgo_t algo) {
    return callGemm<s_cublasGemmBatchedEx64, LibraryFunction::CublasGemmBatchedEx64, kGemmBatchedExShape>(TUNEUP_CALLER,
        handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta, Carray, Ctype, ldc,
        batchCount, computeType, algo);
}
