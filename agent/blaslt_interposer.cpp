// cuBLASLt interposers (LD_PRELOAD). cublasLtMatmul's shape lives in its descriptors, so the agent notes
// their attributes when they are made or changed (Create, Init_internal, SetAttribute; forgotten at
// Destroy) in lock-free caches keyed by the descriptor's address: a matmul then costs lookups, not a
// dozen GetAttribute calls. A descriptor the caches do not hold (evicted, or made where the agent did
// not see it) is read once through GetAttribute and cached. Matmuls that cuBLAS runs inside its own
// GEMMs are not recorded (interpose_record.h: outermost call only).

#include "blaslt_facts.h"
#include "descriptor_cache.h"
#include "interpose_record.h"
#include "interpose_resolve.h"
#include "library_functions.h"
#include "trace_schema.h"

#include <cublasLt.h>

#define TUNEUP_INTERPOSE extern "C" __attribute__((visibility("default")))

using namespace tuneup::agent;

namespace {

PointerCache<6, 1024> s_layouts;
PointerCache<2, 512> s_descs;

RealFunction<decltype(&::cublasLtMatmul)> s_matmul { "cublasLtMatmul", kCublasLt };
RealFunction<decltype(&::cublasLtMatrixLayoutCreate)> s_layoutCreate { "cublasLtMatrixLayoutCreate", kCublasLt };
RealFunction<decltype(&::cublasLtMatrixLayoutInit_internal)> s_layoutInit { "cublasLtMatrixLayoutInit_internal",
    kCublasLt };
RealFunction<decltype(&::cublasLtMatrixLayoutDestroy)> s_layoutDestroy { "cublasLtMatrixLayoutDestroy", kCublasLt };
RealFunction<decltype(&::cublasLtMatrixLayoutSetAttribute)> s_layoutSet { "cublasLtMatrixLayoutSetAttribute",
    kCublasLt };
RealFunction<decltype(&::cublasLtMatrixLayoutGetAttribute)> s_layoutGet { "cublasLtMatrixLayoutGetAttribute",
    kCublasLt };
RealFunction<decltype(&::cublasLtMatmulDescCreate)> s_descCreate { "cublasLtMatmulDescCreate", kCublasLt };
RealFunction<decltype(&::cublasLtMatmulDescInit_internal)> s_descInit { "cublasLtMatmulDescInit_internal", kCublasLt };
RealFunction<decltype(&::cublasLtMatmulDescDestroy)> s_descDestroy { "cublasLtMatmulDescDestroy", kCublasLt };
RealFunction<decltype(&::cublasLtMatmulDescSetAttribute)> s_descSet { "cublasLtMatmulDescSetAttribute", kCublasLt };
RealFunction<decltype(&::cublasLtMatmulDescGetAttribute)> s_descGet { "cublasLtMatmulDescGetAttribute", kCublasLt };

// Descriptors are followed only while GEMMs are recorded, and not inside another interposed call
// (cuBLAS's own descriptors never reach a recorded matmul).
bool tracking() {
    return recordingGemm() && !insideLibraryCall();
}

// The getters below are asked of `library`: the cuBLASLt copy (a function of it) that ran the matmul.
template <class T>
bool getLayoutAttribute(
    const void* library, cublasLtMatrixLayout_t layout, cublasLtMatrixLayoutAttribute_t attribute, T& value) {
    const auto get = s_layoutGet.beside(library);
    size_t written = 0;
    return get && get(layout, attribute, &value, sizeof value, &written) == CUBLAS_STATUS_SUCCESS;
}

template <class T>
bool getDescAttribute(
    const void* library, cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attribute, T& value) {
    const auto get = s_descGet.beside(library);
    size_t written = 0;
    return get && get(desc, attribute, &value, sizeof value, &written) == CUBLAS_STATUS_SUCCESS;
}

// The layout's facts: from the cache, else read from the library (and cached).
bool layoutFacts(const void* library, cublasLtMatrixLayout_t layout, LtLayout& out) {
    if (!layout) return false;
    LtLayoutWords words;
    if (s_layouts.get(layout, words)) [[likely]] {
        out = unpackLayout(words);
        return true;
    }
    uint32_t type = 0;
    int32_t order = 0, batch = 1;
    uint64_t rows = 0, cols = 0;
    int64_t ld = 0, stride = 0;
    if (!getLayoutAttribute(library, layout, CUBLASLT_MATRIX_LAYOUT_TYPE, type)
        || !getLayoutAttribute(library, layout, CUBLASLT_MATRIX_LAYOUT_ROWS, rows)
        || !getLayoutAttribute(library, layout, CUBLASLT_MATRIX_LAYOUT_COLS, cols)
        || !getLayoutAttribute(library, layout, CUBLASLT_MATRIX_LAYOUT_LD, ld))
        return false;
    getLayoutAttribute(library, layout, CUBLASLT_MATRIX_LAYOUT_ORDER, order);
    getLayoutAttribute(library, layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, batch);
    getLayoutAttribute(library, layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, stride);
    out = LtLayout { int32_t(type), order, int64_t(rows), int64_t(cols), ld, batch, stride };
    s_layouts.put(layout, pack(out));
    return true;
}

bool descFacts(const void* library, cublasLtMatmulDesc_t desc, LtMatmulDesc& out) {
    if (!desc) return false;
    LtDescWords words;
    if (s_descs.get(desc, words)) [[likely]] {
        out = unpackDesc(words);
        return true;
    }
    int32_t compute = -1, scale = -1, transa = 0, transb = 0;
    uint32_t epilogue = 1;
    if (!getDescAttribute(library, desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, compute)) return false;
    getDescAttribute(library, desc, CUBLASLT_MATMUL_DESC_SCALE_TYPE, scale);
    getDescAttribute(library, desc, CUBLASLT_MATMUL_DESC_TRANSA, transa);
    getDescAttribute(library, desc, CUBLASLT_MATMUL_DESC_TRANSB, transb);
    getDescAttribute(library, desc, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
    out = LtMatmulDesc { compute, scale, int32_t(epilogue), int8_t(transa), int8_t(transb) };
    s_descs.put(desc, pack(out));
    return true;
}

void noteLayout(cublasLtMatrixLayout_t layout, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld) {
    LtLayout l;
    l.type = int32_t(type);
    l.rows = int64_t(rows);
    l.cols = int64_t(cols);
    l.ld = ld;
    s_layouts.put(layout, pack(l));
}

void noteDesc(cublasLtMatmulDesc_t desc, cublasComputeType_t computeType, cudaDataType_t scaleType) {
    LtMatmulDesc d;
    d.computeType = int32_t(computeType);
    d.scaleType = int32_t(scaleType);
    s_descs.put(desc, pack(d));
}

} // namespace

namespace {

// The recorded matmul, out of line so that the common path stays a plain forward.
__attribute__((noinline)) cublasStatus_t recordMatmul(decltype(&::cublasLtMatmul) real, cublasLtHandle_t lightHandle,
    cublasLtMatmulDesc_t computeDesc, const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc, const void* B,
    cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspaceSizeInBytes,
    cudaStream_t stream) {
    LibraryCall call(true);
    const cublasStatus_t status = real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc,
        algo, workspace, workspaceSizeInBytes, stream);
    call.finish();
    LtMatmulDesc desc;
    LtLayout a, b, d;
    const auto library = reinterpret_cast<const void*>(real);
    const bool haveDesc = descFacts(library, computeDesc, desc);
    const bool haveA = layoutFacts(library, Adesc, a), haveB = layoutFacts(library, Bdesc, b);
    const bool haveD = layoutFacts(library, Ddesc, d) || layoutFacts(library, Cdesc, d);
    GemmCallFixed out {};
    describeLtMatmul(haveDesc ? &desc : nullptr, haveA ? &a : nullptr, haveB ? &b : nullptr, haveD ? &d : nullptr, out);
    out.endNs = call.endNs;
    out.externalId = call.externalId;
    out.status = int32_t(status);
    out.function = uint16_t(LibraryFunction::CublasLtMatmul);
    out.api = uint8_t(tuneup::schema::kGemmCublasLt);
    emitGemmCall(call.startNs, out);
    return status;
}

} // namespace

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasLtMatmul(cublasLtHandle_t lightHandle,
    cublasLtMatmulDesc_t computeDesc, const void* alpha, const void* A, cublasLtMatrixLayout_t Adesc, const void* B,
    cublasLtMatrixLayout_t Bdesc, const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspaceSizeInBytes,
    cudaStream_t stream) {
    const auto real = s_matmul.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUBLAS_STATUS_NOT_INITIALIZED;
    // Inside cuBLAS's own GEMMs (or any interposed call): not the program's matmul.
    if (!recordingGemm() || insideLibraryCall()) [[likely]]
        return real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo, workspace,
            workspaceSizeInBytes, stream);
    return recordMatmul(real, lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
        workspace, workspaceSizeInBytes, stream);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(
    cublasLtMatrixLayout_t* matLayout, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld) {
    const auto real = s_layoutCreate.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUBLAS_STATUS_NOT_INITIALIZED;
    const cublasStatus_t status = real(matLayout, type, rows, cols, ld);
    if (status == CUBLAS_STATUS_SUCCESS && matLayout && tracking()) noteLayout(*matLayout, type, rows, cols, ld);
    return status;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutInit_internal(
    cublasLtMatrixLayout_t matLayout, size_t size, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld) {
    const auto real = s_layoutInit.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUBLAS_STATUS_NOT_INITIALIZED;
    const cublasStatus_t status = real(matLayout, size, type, rows, cols, ld);
    if (tracking()) {
        if (status == CUBLAS_STATUS_SUCCESS)
            noteLayout(matLayout, type, rows, cols, ld);
        else
            s_layouts.erase(matLayout); // the memory holds no valid layout now
    }
    return status;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
    const auto real = s_layoutDestroy.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUBLAS_STATUS_NOT_INITIALIZED;
    // Before the memory is freed: another thread's new layout may take the address right after.
    if (tracking()) s_layouts.erase(matLayout);
    return real(matLayout);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutSetAttribute(
    cublasLtMatrixLayout_t matLayout, cublasLtMatrixLayoutAttribute_t attr, const void* buf, size_t sizeInBytes) {
    const auto real = s_layoutSet.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUBLAS_STATUS_NOT_INITIALIZED;
    const cublasStatus_t status = real(matLayout, attr, buf, sizeInBytes);
    if (status == CUBLAS_STATUS_SUCCESS && tracking())
        s_layouts.update(matLayout, [&](LtLayoutWords& words) {
            LtLayout l = unpackLayout(words);
            if (applyLayoutAttribute(l, int(attr), buf, sizeInBytes)) words = pack(l);
        });
    return status;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(
    cublasLtMatmulDesc_t* matmulDesc, cublasComputeType_t computeType, cudaDataType_t scaleType) {
    const auto real = s_descCreate.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUBLAS_STATUS_NOT_INITIALIZED;
    const cublasStatus_t status = real(matmulDesc, computeType, scaleType);
    if (status == CUBLAS_STATUS_SUCCESS && matmulDesc && tracking()) noteDesc(*matmulDesc, computeType, scaleType);
    return status;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasLtMatmulDescInit_internal(
    cublasLtMatmulDesc_t matmulDesc, size_t size, cublasComputeType_t computeType, cudaDataType_t scaleType) {
    const auto real = s_descInit.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUBLAS_STATUS_NOT_INITIALIZED;
    const cublasStatus_t status = real(matmulDesc, size, computeType, scaleType);
    if (tracking()) {
        if (status == CUBLAS_STATUS_SUCCESS)
            noteDesc(matmulDesc, computeType, scaleType);
        else
            s_descs.erase(matmulDesc);
    }
    return status;
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
    const auto real = s_descDestroy.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUBLAS_STATUS_NOT_INITIALIZED;
    if (tracking()) s_descs.erase(matmulDesc);
    return real(matmulDesc);
}

TUNEUP_INTERPOSE cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(
    cublasLtMatmulDesc_t matmulDesc, cublasLtMatmulDescAttributes_t attr, const void* buf, size_t sizeInBytes) {
    const auto real = s_descSet.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUBLAS_STATUS_NOT_INITIALIZED;
    const cublasStatus_t status = real(matmulDesc, attr, buf, sizeInBytes);
    if (status == CUBLAS_STATUS_SUCCESS && tracking())
        s_descs.update(matmulDesc, [&](LtDescWords& words) {
            LtMatmulDesc d = unpackDesc(words);
            if (applyDescAttribute(d, int(attr), buf, sizeInBytes)) words = pack(d);
        });
    return status;
}
