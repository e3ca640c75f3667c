#pragma once
// Binding the agent's values to its INSERT statements (trace_db.cpp, trace_db_gpu.cpp): optional and
// unknown values as NULL, text without a copy, NVTX payloads as the number type they hold.

#include <cstdint>
#include <cstring>
#include <optional>
#include <sqlite3.h>
#include <string_view>

namespace tuneup::agent {

inline void bindOptional(sqlite3_stmt* s, int index, const std::optional<int64_t>& value) {
    if (value)
        sqlite3_bind_int64(s, index, *value);
    else
        sqlite3_bind_null(s, index);
}

inline void bindText(sqlite3_stmt* s, int index, std::string_view text) {
    sqlite3_bind_text(s, index, text.data(), int(text.size()), SQLITE_STATIC);
}

// Payload bits as a number of the type NVTX says they hold (nvtxPayloadType_t).
inline void bindPayload(sqlite3_stmt* s, int typeIndex, int valueIndex, uint8_t type, uint64_t bits) {
    if (type == 0) {
        sqlite3_bind_null(s, typeIndex);
        sqlite3_bind_null(s, valueIndex);
        return;
    }
    sqlite3_bind_int(s, typeIndex, type);
    switch (type) {
    case 1: // unsigned int64: stored as a signed integer when it fits, else as a real
        if (bits > uint64_t(INT64_MAX))
            sqlite3_bind_double(s, valueIndex, double(bits));
        else
            sqlite3_bind_int64(s, valueIndex, int64_t(bits));
        break;
    case 2:
        sqlite3_bind_int64(s, valueIndex, int64_t(bits));
        break;
    case 3: {
        double d;
        memcpy(&d, &bits, sizeof d);
        sqlite3_bind_double(s, valueIndex, d);
        break;
    }
    case 4:
        sqlite3_bind_int64(s, valueIndex, uint32_t(bits));
        break;
    case 5:
        sqlite3_bind_int64(s, valueIndex, int32_t(uint32_t(bits)));
        break;
    case 6: {
        float f;
        uint32_t low = uint32_t(bits);
        memcpy(&f, &low, sizeof f);
        sqlite3_bind_double(s, valueIndex, f);
        break;
    }
    default: // extended payloads (schema-described binary) are not decoded in v1
        sqlite3_bind_null(s, valueIndex);
    }
}

// A value the agent may not know: NULL when it is the `unknown` marker.
inline void bindKnown(sqlite3_stmt* s, int index, int64_t value, int64_t unknown) {
    if (value == unknown)
        sqlite3_bind_null(s, index);
    else
        sqlite3_bind_int64(s, index, value);
}

} // namespace tuneup::agent
