#pragma once
// Sums of counts and durations read from files: a damaged or hostile file can hold values near the
// ends of int64, whose plain sum would wrap around (a "median step of -1 ns"). These stop at the ends.

#include <cstdint>
#include <limits>

namespace tuneup {

inline int64_t saturatingAdd(int64_t a, int64_t b) {
    int64_t sum = 0;
    if (!__builtin_add_overflow(a, b, &sum)) return sum;
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

inline int64_t saturatingSub(int64_t a, int64_t b) {
    int64_t difference = 0;
    if (!__builtin_sub_overflow(a, b, &difference)) return difference;
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

} // namespace tuneup
