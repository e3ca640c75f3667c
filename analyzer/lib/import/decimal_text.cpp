#include "import/decimal_text.h"

#include <algorithm>

namespace tuneup::analysis {

namespace {

__extension__ typedef unsigned __int128 u128; // -Wpedantic: __int128 is a GNU extension
__extension__ typedef __int128 i128;
constexpr u128 kTooBig = static_cast<u128>(1) << 65; // beyond any int64/uint64, checked while accumulating

bool isDigit(char c) {
    return c >= '0' && c <= '9';
}

constexpr uint64_t kPowersOf10[]
    = { 1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull,
          10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull, 100000000000000ull, 1000000000000000ull,
          10000000000000000ull, 100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull };

// The common case in 64-bit arithmetic: an optional '-', at most 19 digits (below 10^19, so within
// uint64) and at most one '.'; Kineto's timestamps in microseconds are 16 or 19 digits. Returns false to
// leave anything else (exponents, longer numbers, a product past uint64, bad text) to the general path.
bool scaledMagnitudeFast(std::string_view t, int scale, u128& magnitude, bool& negative) {
    size_t i = 0;
    negative = !t.empty() && t[0] == '-';
    if (negative) i = 1;
    uint64_t v = 0;
    int digits = 0, fraction = -1;
    for (; i < t.size(); ++i) {
        const char c = t[i];
        if (isDigit(c)) {
            if (++digits > 19) return false;
            v = v * 10 + static_cast<uint64_t>(c - '0');
            if (fraction >= 0) ++fraction;
        } else if (c == '.' && fraction < 0) {
            fraction = 0;
        } else {
            return false;
        }
    }
    if (digits == 0 || scale < 0 || scale > 19) return false;
    const int shift = scale - std::max(fraction, 0);
    if (shift >= 0) {
        if (__builtin_mul_overflow(v, kPowersOf10[shift], &v)) return false;
    } else {
        const uint64_t divisor = kPowersOf10[-shift]; // -shift <= digits <= 19
        const uint64_t rest = v % divisor;
        v /= divisor;
        if (rest >= divisor - rest) // halves away from zero (rest * 2 could pass uint64)
            ++v;
    }
    magnitude = v;
    return true;
}

// |value| * 10^scale, rounded half away from zero, into magnitude; false on bad syntax or overflow.
bool scaledMagnitude(std::string_view t, int scale, u128& magnitude, bool& negative) {
    if (scaledMagnitudeFast(t, scale, magnitude, negative)) return true;
    const size_t n = t.size();
    size_t i = 0;
    negative = false;
    if (i < n && (t[i] == '-' || t[i] == '+')) {
        negative = t[i] == '-';
        ++i;
    }
    const size_t intBegin = i;
    while (i < n && isDigit(t[i]))
        ++i;
    const size_t intLen = i - intBegin;
    size_t fracBegin = i, fracLen = 0;
    if (i < n && t[i] == '.') {
        fracBegin = ++i;
        while (i < n && isDigit(t[i]))
            ++i;
        fracLen = i - fracBegin;
    }
    if (intLen + fracLen == 0) return false;
    long exponent = 0;
    if (i < n && (t[i] == 'e' || t[i] == 'E')) {
        ++i;
        bool expNegative = false;
        if (i < n && (t[i] == '-' || t[i] == '+')) {
            expNegative = t[i] == '-';
            ++i;
        }
        if (i >= n || !isDigit(t[i])) return false;
        while (i < n && isDigit(t[i])) {
            if (exponent < 100000) // beyond this the value is 0 or overflows anyway
                exponent = exponent * 10 + (t[i] - '0');
            ++i;
        }
        if (expNegative) exponent = -exponent;
    }
    if (i != n) return false;

    // value = digits * 10^shift, digits being the integer digits followed by the fraction digits.
    const long digitCount = static_cast<long>(intLen + fracLen);
    const long shift = exponent + scale - static_cast<long>(fracLen);
    auto digitAt = [&](long k) -> int {
        const auto idx = static_cast<size_t>(k);
        return idx < intLen ? t[intBegin + idx] - '0' : t[fracBegin + idx - intLen] - '0';
    };
    const long keep = shift < 0 ? digitCount + shift : digitCount; // digits left of the rounding point
    u128 acc = 0;
    for (long k = 0; k < keep; ++k) {
        acc = acc * 10 + static_cast<u128>(digitAt(k));
        if (acc > kTooBig) return false;
    }
    if (shift < 0 && keep >= 0 && keep < digitCount && digitAt(keep) >= 5) acc += 1;
    for (long k = 0; k < shift; ++k) {
        if (acc == 0) break;
        acc *= 10;
        if (acc > kTooBig) return false;
    }
    magnitude = acc;
    return true;
}

} // namespace

std::optional<int64_t> scaledDecimal(std::string_view text, int scale) {
    u128 magnitude = 0;
    bool negative = false;
    if (!scaledMagnitude(text, scale, magnitude, negative)) return std::nullopt;
    constexpr u128 kMaxPositive = static_cast<u128>(INT64_MAX);
    if (negative) {
        if (magnitude > kMaxPositive + 1) return std::nullopt;
        return static_cast<int64_t>(-static_cast<i128>(magnitude));
    }
    if (magnitude > kMaxPositive) return std::nullopt;
    return static_cast<int64_t>(magnitude);
}

std::optional<uint64_t> parseUnsigned(std::string_view text) {
    if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
        uint64_t value = 0;
        if (text.size() > 18) return std::nullopt;
        for (size_t i = 2; i < text.size(); ++i) {
            const char c = text[i];
            int d;
            if (c >= '0' && c <= '9')
                d = c - '0';
            else if (c >= 'a' && c <= 'f')
                d = c - 'a' + 10;
            else if (c >= 'A' && c <= 'F')
                d = c - 'A' + 10;
            else
                return std::nullopt;
            value = value * 16 + static_cast<uint64_t>(d);
        }
        return value;
    }
    u128 magnitude = 0;
    bool negative = false;
    if (!scaledMagnitude(text, 0, magnitude, negative) || (negative && magnitude != 0)) return std::nullopt;
    if (magnitude > static_cast<u128>(UINT64_MAX)) return std::nullopt;
    return static_cast<uint64_t>(magnitude);
}

} // namespace tuneup::analysis
