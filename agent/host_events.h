#pragma once
// Host-side events as they travel from a producing thread to the writer through its ring.
// Each record is a RecordHeader, a kind-specific fixed part, then `textBytes` of text (not
// NUL-terminated). Records are 16-byte aligned. Strings are copied, never interned, on the hot path.

#include "event_source.h"

#include <cstdint>

namespace tuneup::agent {

enum class HostEventKind : uint8_t {
    NvtxPush = 1, // NvtxEventFixed + message
    NvtxPop = 2, // NvtxScopeFixed
    NvtxStart = 3, // NvtxEventFixed + message; rangeId set
    NvtxEnd = 4, // NvtxScopeFixed; rangeId set
    NvtxMark = 5, // NvtxEventFixed + message
    NvtxDomainCreate = 6, // NvtxNameFixed(id = domain) + name
    NvtxStringRegister = 7, // NvtxNameFixed(id = string handle id) + text
    NvtxCategoryName = 8, // NvtxNameFixed(id = category) + name
    NvtxThreadName = 9, // NvtxNameFixed(id = tid) + name
    FrameworkFlag = 10, // FrameworkFlagFixed + flag name (torch_probe.h)
    GemmCall = 11, // GemmCallFixed; header time = the call's start
    ConvCall = 12, // ConvCallFixed; header time = the call's start
    PythonName = 13, // NvtxNameFixed(id = the bootstrap's number for it) + text: a file, function or call name
    PythonCall = 14, // PythonCallFixed; header time = the call's start
    PythonSample = 15, // PythonFrameFixed; header time = the sample's
    MemoryReading = 16, // MemoryReadingFixed; header time = when the caching allocator was read
};

struct RecordHeader {
    uint32_t size; // whole record, header included, multiple of 16
    HostEventKind kind;
    EventSource source; // what made it: written and dropped events are counted by source
    uint16_t textBytes; // text after the fixed part
    uint64_t timeNs;
};
static_assert(sizeof(RecordHeader) == 16);

// How an NVTX message was given.
enum class MessageKind : uint8_t { None = 0, Text = 1, Registered = 2 };

struct NvtxEventFixed {
    uint64_t domain; // 0 = default domain
    uint64_t rangeId; // start/end ranges only
    uint64_t registeredId; // when messageKind == Registered
    uint64_t payload; // raw bits of the payload
    uint32_t category;
    uint32_t color;
    uint8_t hasColor;
    uint8_t payloadType; // nvtxPayloadType_t, 0 = none
    MessageKind messageKind;
    uint8_t reserved[5];
};
static_assert(sizeof(NvtxEventFixed) % 8 == 0);

struct NvtxScopeFixed {
    uint64_t domain;
    uint64_t rangeId;
};

struct NvtxNameFixed {
    uint64_t domain;
    uint64_t id;
};

// A frame of the user's Python code (python_calls, python_samples): the bootstrap's numbers for its file and
// function (PythonName records), 0 unknown; `tid` the thread it was seen on, which need not be the one that
// handed it over (the bootstrap hands over in batches).
struct PythonFrameFixed {
    int64_t tid;
    int64_t file, line, function;
};

struct PythonCallFixed {
    uint64_t endNs;
    int64_t call; // the bootstrap's number for the watched call's name
    PythonFrameFixed frame;
};

// The caching allocator of one GPU as the Python bootstrap read it: its totals then and its peaks since sinceNs
// (its previous reset); -1 for what was not read.
struct MemoryReadingFixed {
    int64_t device, sinceNs;
    int64_t allocatedBytes, reservedBytes, peakAllocatedBytes, peakReservedBytes;
};

struct FrameworkFlagFixed {
    int64_t value; // 1 on, 0 off, -1 unknown
};

// A cuBLAS / cuBLASLt GEMM call (blas_interposer.cpp, blaslt_interposer.cpp). Unknown values are
// kUnknown (written as NULL); codes are the libraries' own (cudaDataType, cublasComputeType_t, ...).
inline constexpr int64_t kUnknown = INT64_MIN;
struct GemmCallFixed {
    uint64_t endNs;
    int64_t m, n, k, batch;
    int64_t lda, ldb, ldc;
    int64_t strideA, strideB, strideC;
    uint64_t externalId; // 0: none pushed
    int32_t status;
    int32_t aType, bType, cType, computeType, epilogue; // -1 unknown
    uint16_t function; // LibraryFunction (library_functions.h)
    int8_t transa, transb; // cublasOperation_t, -1 unknown
    uint8_t api; // schema::GemmApi
    uint8_t reserved[3];
};
static_assert(sizeof(GemmCallFixed) % 8 == 0);

// A cuDNN convolution call (cudnn_interposer.cpp, cudnn_backend_interposer.cpp). -1: unknown.
struct ConvShape {
    int32_t n = -1, c = -1, d = -1, h = -1, w = -1; // input (d: 3-D only)
    int32_t k = -1, filterC = -1, t = -1, r = -1, s = -1; // filter
    int32_t pad[3] = { -1, -1, -1 }, stride[3] = { -1, -1, -1 }, dilation[3] = { -1, -1, -1 }; // d, h, w
    int32_t groups = -1;
    int32_t dataType = -1, computeType = -1, mathType = -1;
    int8_t direction = -1; // schema::ConvDirection
    int8_t layout = -1; // schema::TensorLayout
    uint8_t reserved[2] = {};
};
static_assert(sizeof(ConvShape) % 4 == 0);

struct ConvCallFixed {
    uint64_t endNs;
    uint64_t externalId; // 0: none pushed
    uint64_t planId; // backend plans, numbered by the agent; 0: none
    int64_t algo; // kUnknown when not known
    ConvShape shape;
    int32_t status;
    uint16_t function; // LibraryFunction
    uint8_t api; // schema::ConvApi
    uint8_t callKind; // schema::ConvCallKind
    uint8_t algoSource; // schema::AlgoSource
    uint8_t reserved[7];
};
static_assert(sizeof(ConvCallFixed) % 8 == 0);

} // namespace tuneup::agent
