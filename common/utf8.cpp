#include "utf8.h"

#include <cstdint>

namespace tuneup {

namespace {

// The length of the valid UTF-8 sequence at text[i], or 0 when the bytes there are not one; `maximal`
// gets how many bytes form the longest invalid prefix (at least 1), which one U+FFFD replaces.
size_t sequenceAt(std::string_view text, size_t i, size_t& maximal) {
    const auto byte = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
    const uint8_t lead = byte(i);
    maximal = 1;
    if (lead < 0x80) return 1;
    size_t length = 0;
    uint8_t low = 0x80, high = 0xBF; // the allowed range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF)
        length = 2;
    else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0) low = 0xA0; // overlong
        if (lead == 0xED) high = 0x9F; // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0) low = 0x90; // overlong
        if (lead == 0xF4) high = 0x8F; // beyond U+10FFFF
    } else
        return 0;
    for (size_t k = 1; k < length; ++k) {
        if (i + k >= text.size()) return 0;
        const uint8_t b = byte(i + k);
        if (k == 1 ? (b < low || b > high) : (b < 0x80 || b > 0xBF)) return 0;
        maximal = k + 1;
    }
    return length;
}

} // namespace

bool isValidUtf8(std::string_view text) {
    for (size_t i = 0; i < text.size();) {
        if (static_cast<uint8_t>(text[i]) < 0x80) {
            ++i;
            continue;
        }
        size_t maximal = 0;
        const size_t length = sequenceAt(text, i, maximal);
        if (length == 0) return false;
        i += length;
    }
    return true;
}

std::string validUtf8(std::string_view text) {
    if (isValidUtf8(text)) return std::string(text);
    std::string out;
    out.reserve(text.size() + 8);
    for (size_t i = 0; i < text.size();) {
        size_t maximal = 0;
        const size_t length = sequenceAt(text, i, maximal);
        if (length > 0) {
            out.append(text.substr(i, length));
            i += length;
        } else {
            out += "\xEF\xBF\xBD"; // U+FFFD
            i += maximal;
        }
    }
    return out;
}

} // namespace tuneup
