#pragma once
// The text of an event's fields, and the numbers read from it: timestamps, ids, sizes, tracks named by
// text. Inline, as these come several times per event. Internal to the Kineto importer.

#include "import/decimal_text.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace tuneup::analysis::kineto {

// A stable id for a track named by text ("Spans", "PyTorch Profiler"): a hash of the name, so that
// every window gives the same id without sharing a string table. Its low 32 bits, from which a GPU row
// without device/stream args takes them, lie in [-2^31 + 1, -2]: never -1 ("unknown") nor a real id.
inline int64_t namedTrackId(std::string_view name) {
    uint64_t h = 14695981039346656037ull; // FNV-1a
    for (const char c : name) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return -(int64_t(1) << 40) - static_cast<int64_t>(2 + h % ((uint64_t(1) << 31) - 2));
}

// Non-negative decimal integers of up to 18 digits: pid, tid, device, stream, ids, sizes. Inline, as
// these come several times per event; anything else goes to the exact general parsers.
inline bool smallUnsigned(std::string_view t, uint64_t& value) {
    if (t.empty() || t.size() > 18) return false;
    uint64_t v = 0;
    for (const char c : t) {
        const auto digit = static_cast<unsigned>(static_cast<unsigned char>(c) - '0');
        if (digit > 9) return false;
        v = v * 10 + digit;
    }
    value = v;
    return true;
}

// ts / dur in their common form (at most 15 digits before a point and 3 after it) to nanoseconds,
// inline; the same value as microsToNanos, which takes everything else.
inline std::optional<int64_t> nanosFromMicros(std::string_view t) {
    uint64_t v = 0;
    size_t i = 0, integerDigits = 0;
    for (; i < t.size() && static_cast<unsigned>(t[i] - '0') <= 9; ++i, ++integerDigits)
        v = v * 10 + static_cast<unsigned>(t[i] - '0');
    int fraction = 0;
    if (i < t.size() && t[i] == '.')
        for (++i; i < t.size() && fraction < 3 && static_cast<unsigned>(t[i] - '0') <= 9; ++i, ++fraction)
            v = v * 10 + static_cast<unsigned>(t[i] - '0');
    if (i != t.size() || integerDigits == 0 || integerDigits > 15) return microsToNanos(t);
    for (; fraction < 3; ++fraction)
        v *= 10;
    return static_cast<int64_t>(v);
}

inline std::optional<int64_t> integerValue(std::string_view t) {
    if (uint64_t v; smallUnsigned(t, v)) return static_cast<int64_t>(v);
    return parseInteger(t);
}

inline std::optional<uint64_t> unsignedValue(std::string_view t) {
    if (uint64_t v; smallUnsigned(t, v)) return v;
    return parseUnsigned(t);
}

// Copies of the text of one event's fields where RapidJSON hands it out only for the call (streams
// not parsed in place); views into it stay valid until clear(). Windows are parsed in place: their
// text is kept where it lies, and this stays empty.
class EventText {
public:
    std::string_view keep(const char* s, size_t n) {
        if (m_blocks.empty() || n > m_size - m_used) grow(n);
        char* dst = m_blocks.back().get() + m_used;
        std::memcpy(dst, s, n);
        m_used += n;
        return { dst, n };
    }
    void clear() {
        if (m_blocks.size() > 1) {
            m_blocks.resize(1);
            m_size = kBlockBytes;
        }
        m_used = 0;
    }

private:
    static constexpr size_t kBlockBytes = 16 * 1024;
    void grow(size_t n) {
        // Earlier views must stay valid: a new block, never a reallocation.
        const size_t size = m_blocks.empty() ? std::max(n, kBlockBytes) : std::max(n, m_size * 2);
        m_blocks.push_back(std::make_unique_for_overwrite<char[]>(size));
        m_size = size;
        m_used = 0;
    }
    std::vector<std::unique_ptr<char[]>> m_blocks;
    size_t m_size = 0, m_used = 0;
};

} // namespace tuneup::analysis::kineto
