#pragma once
// What the agent keeps about cuBLASLt descriptors, as cached words (descriptor_cache.h), and how a
// cublasLtMatmul's GEMM row follows from them: M = rows(D), N = cols(D), K = cols(A) when A is not
// transposed, else rows(A); the batch is D's. Pure functions: unit-tested without cuBLASLt.

#include "host_events.h"

#include <array>
#include <cstddef>
#include <cstdint>

namespace tuneup::agent {

struct LtLayout {
    int32_t type = -1; // cudaDataType
    int32_t order = 0; // cublasLtOrder_t (0 column-major)
    int64_t rows = kUnknown, cols = kUnknown, ld = kUnknown;
    int64_t batch = 1, stride = 0; // BATCH_COUNT, STRIDED_BATCH_OFFSET
};

struct LtMatmulDesc {
    int32_t computeType = -1; // cublasComputeType_t
    int32_t scaleType = -1; // cudaDataType
    int32_t epilogue = 1; // cublasLtEpilogue_t, 1 = default
    int8_t transa = 0, transb = 0;
};

using LtLayoutWords = std::array<uint64_t, 6>;
using LtDescWords = std::array<uint64_t, 2>;

// Inline: on cublasLtMatmul's path the compiler keeps the words in registers.
inline LtLayoutWords pack(const LtLayout& l) {
    return { uint64_t(uint32_t(l.type)) | (uint64_t(uint32_t(l.order)) << 32), uint64_t(l.rows), uint64_t(l.cols),
        uint64_t(l.ld), uint64_t(l.batch), uint64_t(l.stride) };
}

inline LtLayout unpackLayout(const LtLayoutWords& w) {
    LtLayout l;
    l.type = int32_t(uint32_t(w[0]));
    l.order = int32_t(uint32_t(w[0] >> 32));
    l.rows = int64_t(w[1]);
    l.cols = int64_t(w[2]);
    l.ld = int64_t(w[3]);
    l.batch = int64_t(w[4]);
    l.stride = int64_t(w[5]);
    return l;
}

inline LtDescWords pack(const LtMatmulDesc& d) {
    return { uint64_t(uint32_t(d.computeType)) | (uint64_t(uint32_t(d.scaleType)) << 32),
        uint64_t(uint32_t(d.epilogue)) | (uint64_t(uint8_t(d.transa)) << 32) | (uint64_t(uint8_t(d.transb)) << 40) };
}

inline LtMatmulDesc unpackDesc(const LtDescWords& w) {
    LtMatmulDesc d;
    d.computeType = int32_t(uint32_t(w[0]));
    d.scaleType = int32_t(uint32_t(w[0] >> 32));
    d.epilogue = int32_t(uint32_t(w[1]));
    d.transa = int8_t(uint8_t(w[1] >> 32));
    d.transb = int8_t(uint8_t(w[1] >> 40));
    return d;
}

// cublasLt*SetAttribute(attribute, buf, size) applied to what is kept; false for an attribute that is
// not kept or a buffer of a size the attribute cannot have.
bool applyLayoutAttribute(LtLayout& layout, int attribute, const void* buf, size_t size);
bool applyDescAttribute(LtMatmulDesc& desc, int attribute, const void* buf, size_t size);

// Fills the shape and types of `out` from the descriptor and the A, B and D layouts (null: unknown).
void describeLtMatmul(
    const LtMatmulDesc* desc, const LtLayout* a, const LtLayout* b, const LtLayout* d, GemmCallFixed& out);

} // namespace tuneup::agent
