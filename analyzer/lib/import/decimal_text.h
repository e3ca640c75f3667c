#pragma once
// Exact conversion of JSON number text to integers, with no double in between: a Kineto timestamp
// such as 1712195495519689.047 (µs) has 19 significant digits, more than a double holds.

#include <cstdint>
#include <optional>
#include <string_view>

namespace tuneup::analysis {

// The value of a JSON number (sign, digits, fraction, exponent) times 10^scale, rounded to the
// nearest integer, halves away from zero. nullopt for text that is not a number (NaN, "abc") or a
// result outside int64.
std::optional<int64_t> scaledDecimal(std::string_view text, int scale);

// Kineto "ts"/"dur" (microseconds, maybe fractional) to nanoseconds.
inline std::optional<int64_t> microsToNanos(std::string_view text) {
    return scaledDecimal(text, 3);
}
inline std::optional<int64_t> parseInteger(std::string_view text) {
    return scaledDecimal(text, 0);
}
// Full unsigned 64-bit range for ids (beyond 2^63 too); also accepts "0x..." hex strings.
std::optional<uint64_t> parseUnsigned(std::string_view text);

} // namespace tuneup::analysis
