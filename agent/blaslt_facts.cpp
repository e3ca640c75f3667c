#include "blaslt_facts.h"

#include <cstring>

namespace tuneup::agent {

namespace {

// cublasLtMatrixLayoutAttribute_t and cublasLtMatmulDescAttributes_t values (cublasLt.h).
enum : int {
    kLayoutType = 0,
    kLayoutOrder = 1,
    kLayoutRows = 2,
    kLayoutCols = 3,
    kLayoutLd = 4,
    kLayoutBatchCount = 5,
    kLayoutBatchStride = 6
};
enum : int { kDescComputeType = 0, kDescScaleType = 1, kDescTransA = 3, kDescTransB = 4, kDescEpilogue = 7 };

// An integer attribute as the library stores it: 4 or 8 bytes (int32, uint32, int64, uint64).
bool readInteger(const void* buf, size_t size, int64_t& out) {
    if (!buf) return false;
    if (size == 4) {
        int32_t v;
        memcpy(&v, buf, 4);
        out = v;
        return true;
    }
    if (size == 8) {
        memcpy(&out, buf, 8);
        return true;
    }
    return false;
}

} // namespace

bool applyLayoutAttribute(LtLayout& l, int attribute, const void* buf, size_t size) {
    int64_t v;
    if (!readInteger(buf, size, v)) return false;
    switch (attribute) {
    case kLayoutType:
        l.type = int32_t(v);
        return true;
    case kLayoutOrder:
        l.order = int32_t(v);
        return true;
    case kLayoutRows:
        l.rows = v;
        return true;
    case kLayoutCols:
        l.cols = v;
        return true;
    case kLayoutLd:
        l.ld = v;
        return true;
    case kLayoutBatchCount:
        l.batch = v;
        return true;
    case kLayoutBatchStride:
        l.stride = v;
        return true;
    default:
        return false;
    }
}

bool applyDescAttribute(LtMatmulDesc& d, int attribute, const void* buf, size_t size) {
    int64_t v;
    if (!readInteger(buf, size, v)) return false;
    switch (attribute) {
    case kDescComputeType:
        d.computeType = int32_t(v);
        return true;
    case kDescScaleType:
        d.scaleType = int32_t(v);
        return true;
    case kDescTransA:
        d.transa = int8_t(v);
        return true;
    case kDescTransB:
        d.transb = int8_t(v);
        return true;
    case kDescEpilogue:
        d.epilogue = int32_t(v);
        return true;
    default:
        return false;
    }
}

void describeLtMatmul(
    const LtMatmulDesc* desc, const LtLayout* a, const LtLayout* b, const LtLayout* d, GemmCallFixed& out) {
    out.transa = desc ? desc->transa : -1;
    out.transb = desc ? desc->transb : -1;
    out.computeType = desc ? desc->computeType : -1;
    out.epilogue = desc ? desc->epilogue : -1;
    out.m = d ? d->rows : kUnknown;
    out.n = d ? d->cols : kUnknown;
    out.k = a && desc ? (desc->transa == 0 ? a->cols : a->rows) : kUnknown;
    out.batch = d && d->batch > 0 ? d->batch : 1;
    const bool batched = out.batch > 1;
    out.aType = a ? a->type : -1;
    out.bType = b ? b->type : -1;
    out.cType = d ? d->type : -1;
    out.lda = a ? a->ld : kUnknown;
    out.ldb = b ? b->ld : kUnknown;
    out.ldc = d ? d->ld : kUnknown;
    out.strideA = a && batched ? a->stride : kUnknown;
    out.strideB = b && batched ? b->stride : kUnknown;
    out.strideC = d && batched ? d->stride : kUnknown;
}

} // namespace tuneup::agent
