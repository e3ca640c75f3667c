#pragma once
// Host-side events as they travel from a producing thread to the writer through its ring.
// Each record is a RecordHeader, a kind-specific fixed part, then `textBytes` of text (not
// NUL-terminated). Records are 16-byte aligned. Strings are copied, never interned, on the hot path.

#include <cstdint>

namespace tuneup::agent {

enum class HostEventKind : uint16_t {
    Padding = 0,        // filler to the end of the ring; skipped
    NvtxPush = 1,       // NvtxEventFixed + message
    NvtxPop = 2,        // NvtxScopeFixed
    NvtxStart = 3,      // NvtxEventFixed + message; rangeId set
    NvtxEnd = 4,        // NvtxScopeFixed; rangeId set
    NvtxMark = 5,       // NvtxEventFixed + message
    NvtxDomainCreate = 6,   // NvtxNameFixed(id = domain) + name
    NvtxStringRegister = 7, // NvtxNameFixed(id = string handle id) + text
    NvtxCategoryName = 8,   // NvtxNameFixed(id = category) + name
    NvtxThreadName = 9,     // NvtxNameFixed(id = tid) + name
    FrameworkFlag = 10,     // FrameworkFlagFixed + flag name (torch_probe.h)
};

struct RecordHeader {
    uint32_t size;      // whole record, header included, multiple of 16
    HostEventKind kind;
    uint16_t textBytes; // text after the fixed part
    uint64_t timeNs;
};
static_assert(sizeof(RecordHeader) == 16);

// How an NVTX message was given.
enum class MessageKind : uint8_t { None = 0, Text = 1, Registered = 2 };

struct NvtxEventFixed {
    uint64_t domain;       // 0 = default domain
    uint64_t rangeId;      // start/end ranges only
    uint64_t registeredId; // when messageKind == Registered
    uint64_t payload;      // raw bits of the payload
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

struct FrameworkFlagFixed {
    int64_t value; // 1 on, 0 off, -1 unknown
};

} // namespace tuneup::agent
