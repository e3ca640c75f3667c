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
template <auto& Real, LibraryFunction Function, auto ShapeOf, class... Args>
__attribute__((noinline)) cublasStatus_t recordGemm(Args... args)
{
    const auto f = Real.get();
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
// runs on this thread. A call that is not recorded pays a load, two compares and the jump.
template <auto& Real, LibraryFunction Function, auto ShapeOf, class... Args>
inline cublasStatus_t callGemm(Args... args)
{
    const auto f = Real.get();
    if (!f) [[unlikely]]
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!recordingGemm() || insideLibraryCall()) [[likely]]
        return f(args...);
    return recordGemm<Real, Function, ShapeOf>(args...);
}

} // namespace

static RealFunction<decltype(&::cublasSgemm_v2)> s_cublasSgemm { "cublasSgemm_v2", kCublasLibraries };

// cublasSgemm_v2's shape, from its arguments.
static BlasShape shapeOf_cublasSgemm_v2(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, int m,
    int n, int k, const float*, const float*, int lda, const float*, int ldb, const float*, float*, int ldc)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.aType = s.bType = s.cType = CUDA_R_32F;
    s.computeType = CUBLAS_COMPUTE_32F;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const float* alpha, const float* A, int lda, const float* B, int ldb,
    const float* beta, float* C, int ldc)
{
    return callGemm<s_cublasSgemm, LibraryFunction::CublasSgemm, shapeOf_cublasSgemm_v2>(
        handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

static RealFunction<decltype(&::cublasSgemm_v2_64)> s_cublasSgemm64 { "cublasSgemm_v2_64", kCublasLibraries };

// cublasSgemm_v2_64's shape, from its arguments.
static BlasShape shapeOf_cublasSgemm_v2_64(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb,
    int64_t m, int64_t n, int64_t k, const float*, const float*, int64_t lda, const float*, int64_t ldb, const float*,
    float*, int64_t ldc)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.aType = s.bType = s.cType = CUDA_R_32F;
    s.computeType = CUBLAS_COMPUTE_32F;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasSgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const float* alpha, const float* A, int64_t lda,
    const float* B, int64_t ldb, const float* beta, float* C, int64_t ldc)
{
    return callGemm<s_cublasSgemm64, LibraryFunction::CublasSgemm64, shapeOf_cublasSgemm_v2_64>(
        handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

static RealFunction<decltype(&::cublasHgemm)> s_cublasHgemm { "cublasHgemm", kCublasLibraries };

// cublasHgemm's shape, from its arguments.
static BlasShape shapeOf_cublasHgemm(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
    int k, const __half*, const __half*, int lda, const __half*, int ldb, const __half*, __half*, int ldc)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.aType = s.bType = s.cType = CUDA_R_16F;
    s.computeType = CUBLAS_COMPUTE_16F;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasHgemm(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const __half* alpha, const __half* A, int lda, const __half* B,
    int ldb, const __half* beta, __half* C, int ldc)
{
    return callGemm<s_cublasHgemm, LibraryFunction::CublasHgemm, shapeOf_cublasHgemm>(
        handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

static RealFunction<decltype(&::cublasHgemm_64)> s_cublasHgemm64 { "cublasHgemm_64", kCublasLibraries };

// cublasHgemm_64's shape, from its arguments.
static BlasShape shapeOf_cublasHgemm_64(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const __half*, const __half*, int64_t lda, const __half*, int64_t ldb, const __half*, __half*,
    int64_t ldc)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.aType = s.bType = s.cType = CUDA_R_16F;
    s.computeType = CUBLAS_COMPUTE_16F;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasHgemm_64(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const __half* alpha, const __half* A, int64_t lda,
    const __half* B, int64_t ldb, const __half* beta, __half* C, int64_t ldc)
{
    return callGemm<s_cublasHgemm64, LibraryFunction::CublasHgemm64, shapeOf_cublasHgemm_64>(
        handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

static RealFunction<decltype(&::cublasDgemm_v2)> s_cublasDgemm { "cublasDgemm_v2", kCublasLibraries };

// cublasDgemm_v2's shape, from its arguments.
static BlasShape shapeOf_cublasDgemm_v2(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, int m,
    int n, int k, const double*, const double*, int lda, const double*, int ldb, const double*, double*, int ldc)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.aType = s.bType = s.cType = CUDA_R_64F;
    s.computeType = CUBLAS_COMPUTE_64F;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasDgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const double* alpha, const double* A, int lda, const double* B,
    int ldb, const double* beta, double* C, int ldc)
{
    return callGemm<s_cublasDgemm, LibraryFunction::CublasDgemm, shapeOf_cublasDgemm_v2>(
        handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

static RealFunction<decltype(&::cublasDgemm_v2_64)> s_cublasDgemm64 { "cublasDgemm_v2_64", kCublasLibraries };

// cublasDgemm_v2_64's shape, from its arguments.
static BlasShape shapeOf_cublasDgemm_v2_64(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb,
    int64_t m, int64_t n, int64_t k, const double*, const double*, int64_t lda, const double*, int64_t ldb,
    const double*, double*, int64_t ldc)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.aType = s.bType = s.cType = CUDA_R_64F;
    s.computeType = CUBLAS_COMPUTE_64F;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasDgemm_v2_64(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const double* alpha, const double* A, int64_t lda,
    const double* B, int64_t ldb, const double* beta, double* C, int64_t ldc)
{
    return callGemm<s_cublasDgemm64, LibraryFunction::CublasDgemm64, shapeOf_cublasDgemm_v2_64>(
        handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

static RealFunction<cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
    const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int,
    cublasComputeType_t, cublasGemmAlgo_t)>
    s_cublasGemmEx { "cublasGemmEx", kCublasLibraries };

// cublasGemmEx's shape, from its arguments.
static BlasShape shapeOf_cublasGemmEx(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
    int k, const void*, const void*, cudaDataType Atype, int lda, const void*, cudaDataType Btype, int ldb, const void*,
    void*, cudaDataType Ctype, int ldc, cublasComputeType_t computeType, cublasGemmAlgo_t)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.aType = Atype;
    s.bType = Btype;
    s.cType = Ctype;
    s.computeType = computeType;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
    const void* B, cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    return callGemm<s_cublasGemmEx, LibraryFunction::CublasGemmEx, shapeOf_cublasGemmEx>(
        handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

static RealFunction<decltype(&::cublasGemmEx_64)> s_cublasGemmEx64 { "cublasGemmEx_64", kCublasLibraries };

// cublasGemmEx_64's shape, from its arguments.
static BlasShape shapeOf_cublasGemmEx_64(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, int64_t m,
    int64_t n, int64_t k, const void*, const void*, cudaDataType Atype, int64_t lda, const void*, cudaDataType Btype,
    int64_t ldb, const void*, void*, cudaDataType Ctype, int64_t ldc, cublasComputeType_t computeType, cublasGemmAlgo_t)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.aType = Atype;
    s.bType = Btype;
    s.cType = Ctype;
    s.computeType = computeType;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const void* alpha, const void* A, cudaDataType Atype,
    int64_t lda, const void* B, cudaDataType Btype, int64_t ldb, const void* beta, void* C, cudaDataType Ctype,
    int64_t ldc, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    return callGemm<s_cublasGemmEx64, LibraryFunction::CublasGemmEx64, shapeOf_cublasGemmEx_64>(
        handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc, computeType, algo);
}

static RealFunction<decltype(&::cublasSgemmStridedBatched)> s_cublasSgemmStridedBatched { "cublasSgemmStridedBatched",
    kCublasLibraries };

// cublasSgemmStridedBatched's shape, from its arguments.
static BlasShape shapeOf_cublasSgemmStridedBatched(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const float*, const float*, int lda, long long int strideA, const float*, int ldb,
    long long int strideB, const float*, float*, int ldc, long long int strideC, int batchCount)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.batch = batchCount;
    s.strideA = strideA;
    s.strideB = strideB;
    s.strideC = strideC;
    s.aType = s.bType = s.cType = CUDA_R_32F;
    s.computeType = CUBLAS_COMPUTE_32F;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const float* alpha, const float* A, int lda, long long int strideA,
    const float* B, int ldb, long long int strideB, const float* beta, float* C, int ldc, long long int strideC,
    int batchCount)
{
    return callGemm<s_cublasSgemmStridedBatched, LibraryFunction::CublasSgemmStridedBatched,
        shapeOf_cublasSgemmStridedBatched>(
        handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

static RealFunction<decltype(&::cublasSgemmStridedBatched_64)> s_cublasSgemmStridedBatched64 {
    "cublasSgemmStridedBatched_64", kCublasLibraries
};

// cublasSgemmStridedBatched_64's shape, from its arguments.
static BlasShape shapeOf_cublasSgemmStridedBatched_64(cublasHandle_t, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const float*, const float*, int64_t lda,
    long long int strideA, const float*, int64_t ldb, long long int strideB, const float*, float*, int64_t ldc,
    long long int strideC, int64_t batchCount)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.batch = batchCount;
    s.strideA = strideA;
    s.strideB = strideB;
    s.strideC = strideC;
    s.aType = s.bType = s.cType = CUDA_R_32F;
    s.computeType = CUBLAS_COMPUTE_32F;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasSgemmStridedBatched_64(cublasHandle_t handle,
    cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const float* alpha,
    const float* A, int64_t lda, long long int strideA, const float* B, int64_t ldb, long long int strideB,
    const float* beta, float* C, int64_t ldc, long long int strideC, int64_t batchCount)
{
    return callGemm<s_cublasSgemmStridedBatched64, LibraryFunction::CublasSgemmStridedBatched64,
        shapeOf_cublasSgemmStridedBatched_64>(
        handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

static RealFunction<decltype(&::cublasHgemmStridedBatched)> s_cublasHgemmStridedBatched { "cublasHgemmStridedBatched",
    kCublasLibraries };

// cublasHgemmStridedBatched's shape, from its arguments.
static BlasShape shapeOf_cublasHgemmStridedBatched(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const __half*, const __half*, int lda, long long int strideA, const __half*, int ldb,
    long long int strideB, const __half*, __half*, int ldc, long long int strideC, int batchCount)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.batch = batchCount;
    s.strideA = strideA;
    s.strideB = strideB;
    s.strideC = strideC;
    s.aType = s.bType = s.cType = CUDA_R_16F;
    s.computeType = CUBLAS_COMPUTE_16F;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasHgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const __half* alpha, const __half* A, int lda, long long int strideA,
    const __half* B, int ldb, long long int strideB, const __half* beta, __half* C, int ldc, long long int strideC,
    int batchCount)
{
    return callGemm<s_cublasHgemmStridedBatched, LibraryFunction::CublasHgemmStridedBatched,
        shapeOf_cublasHgemmStridedBatched>(
        handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

static RealFunction<decltype(&::cublasHgemmStridedBatched_64)> s_cublasHgemmStridedBatched64 {
    "cublasHgemmStridedBatched_64", kCublasLibraries
};

// cublasHgemmStridedBatched_64's shape, from its arguments.
static BlasShape shapeOf_cublasHgemmStridedBatched_64(cublasHandle_t, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const __half*, const __half*, int64_t lda,
    long long int strideA, const __half*, int64_t ldb, long long int strideB, const __half*, __half*, int64_t ldc,
    long long int strideC, int64_t batchCount)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.batch = batchCount;
    s.strideA = strideA;
    s.strideB = strideB;
    s.strideC = strideC;
    s.aType = s.bType = s.cType = CUDA_R_16F;
    s.computeType = CUBLAS_COMPUTE_16F;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasHgemmStridedBatched_64(cublasHandle_t handle,
    cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const __half* alpha,
    const __half* A, int64_t lda, long long int strideA, const __half* B, int64_t ldb, long long int strideB,
    const __half* beta, __half* C, int64_t ldc, long long int strideC, int64_t batchCount)
{
    return callGemm<s_cublasHgemmStridedBatched64, LibraryFunction::CublasHgemmStridedBatched64,
        shapeOf_cublasHgemmStridedBatched_64>(
        handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC, batchCount);
}

static RealFunction<cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
    const void*, cudaDataType, int, long long int, const void*, cudaDataType, int, long long int, const void*, void*,
    cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t)>
    s_cublasGemmStridedBatchedEx { "cublasGemmStridedBatchedEx", kCublasLibraries };

// cublasGemmStridedBatchedEx's shape, from its arguments.
static BlasShape shapeOf_cublasGemmStridedBatchedEx(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void*, const void*, cudaDataType Atype, int lda, long long int strideA, const void*,
    cudaDataType Btype, int ldb, long long int strideB, const void*, void*, cudaDataType Ctype, int ldc,
    long long int strideC, int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.batch = batchCount;
    s.strideA = strideA;
    s.strideB = strideB;
    s.strideC = strideC;
    s.aType = Atype;
    s.bType = Btype;
    s.cType = Ctype;
    s.computeType = computeType;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const void* alpha, const void* A, cudaDataType Atype, int lda,
    long long int strideA, const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount, cublasComputeType_t computeType,
    cublasGemmAlgo_t algo)
{
    return callGemm<s_cublasGemmStridedBatchedEx, LibraryFunction::CublasGemmStridedBatchedEx,
        shapeOf_cublasGemmStridedBatchedEx>(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype,
        ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

static RealFunction<decltype(&::cublasGemmStridedBatchedEx_64)> s_cublasGemmStridedBatchedEx64 {
    "cublasGemmStridedBatchedEx_64", kCublasLibraries
};

// cublasGemmStridedBatchedEx_64's shape, from its arguments.
static BlasShape shapeOf_cublasGemmStridedBatchedEx_64(cublasHandle_t, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const void*, const void*, cudaDataType Atype,
    int64_t lda, long long int strideA, const void*, cudaDataType Btype, int64_t ldb, long long int strideB,
    const void*, void*, cudaDataType Ctype, int64_t ldc, long long int strideC, int64_t batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.batch = batchCount;
    s.strideA = strideA;
    s.strideB = strideB;
    s.strideC = strideC;
    s.aType = Atype;
    s.bType = Btype;
    s.cType = Ctype;
    s.computeType = computeType;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasGemmStridedBatchedEx_64(cublasHandle_t handle,
    cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const void* alpha,
    const void* A, cudaDataType Atype, int64_t lda, long long int strideA, const void* B, cudaDataType Btype,
    int64_t ldb, long long int strideB, const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
    long long int strideC, int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    return callGemm<s_cublasGemmStridedBatchedEx64, LibraryFunction::CublasGemmStridedBatchedEx64,
        shapeOf_cublasGemmStridedBatchedEx_64>(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype,
        ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

static RealFunction<cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
    const void* const*, cudaDataType, int, const void* const*, cudaDataType, int, const void*, void* const*,
    cudaDataType, int, int, cublasComputeType_t, cublasGemmAlgo_t)>
    s_cublasGemmBatchedEx { "cublasGemmBatchedEx", kCublasLibraries };

// cublasGemmBatchedEx's shape, from its arguments.
static BlasShape shapeOf_cublasGemmBatchedEx(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb, int m,
    int n, int k, const void*, const void* const[], cudaDataType Atype, int lda, const void* const[],
    cudaDataType Btype, int ldb, const void*, void* const[], cudaDataType Ctype, int ldc, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.batch = batchCount;
    s.aType = Atype;
    s.bType = Btype;
    s.cType = Ctype;
    s.computeType = computeType;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int m, int n, int k, const void* alpha, const void* const Aarray[], cudaDataType Atype,
    int lda, const void* const Barray[], cudaDataType Btype, int ldb, const void* beta, void* const Carray[],
    cudaDataType Ctype, int ldc, int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    return callGemm<s_cublasGemmBatchedEx, LibraryFunction::CublasGemmBatchedEx, shapeOf_cublasGemmBatchedEx>(handle,
        transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta, Carray, Ctype, ldc, batchCount,
        computeType, algo);
}

static RealFunction<decltype(&::cublasGemmBatchedEx_64)> s_cublasGemmBatchedEx64 { "cublasGemmBatchedEx_64",
    kCublasLibraries };

// cublasGemmBatchedEx_64's shape, from its arguments.
static BlasShape shapeOf_cublasGemmBatchedEx_64(cublasHandle_t, cublasOperation_t transa, cublasOperation_t transb,
    int64_t m, int64_t n, int64_t k, const void*, const void* const[], cudaDataType Atype, int64_t lda,
    const void* const[], cudaDataType Btype, int64_t ldb, const void*, void* const[], cudaDataType Ctype, int64_t ldc,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t)
{
    BlasShape s;
    s.transa = transa;
    s.transb = transb;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = lda;
    s.ldb = ldb;
    s.ldc = ldc;
    s.batch = batchCount;
    s.aType = Atype;
    s.bType = Btype;
    s.cType = Ctype;
    s.computeType = computeType;
    return s;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasGemmBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
    cublasOperation_t transb, int64_t m, int64_t n, int64_t k, const void* alpha, const void* const Aarray[],
    cudaDataType Atype, int64_t lda, const void* const Barray[], cudaDataType Btype, int64_t ldb, const void* beta,
    void* const Carray[], cudaDataType Ctype, int64_t ldc, int64_t batchCount, cublasComputeType_t computeType,
    cublasGemmAlgo_t algo)
{
    return callGemm<s_cublasGemmBatchedEx64, LibraryFunction::CublasGemmBatchedEx64, shapeOf_cublasGemmBatchedEx_64>(
        handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta, Carray, Ctype, ldc,
        batchCount, computeType, algo);
}
