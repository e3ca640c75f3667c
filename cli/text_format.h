#pragma once
// Number, size and time formatting shared by the commands' human-readable output.

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>

namespace tuneup::cli {

// Three significant digits with a unit: 950, 12.3 k, 1.42 M.
inline std::string humanCount(int64_t value) {
    static const char* kUnits[] = { "k", "M", "G", "T" };
    if (value < 1000 && value > -1000) return std::to_string(value);
    double scaled = double(value);
    int unit = -1;
    while ((scaled >= 1000 || scaled <= -1000) && unit < 3) {
        scaled /= 1000;
        ++unit;
    }
    char text[32];
    snprintf(text, sizeof text, "%.3g %s", scaled, kUnits[unit]);
    return text;
}

// Decimal units, as `ls -h --si` and most tools print them: 512 B, 1.2 kB, 38 MB.
inline std::string humanBytes(uint64_t bytes) {
    static const char* kUnits[] = { "kB", "MB", "GB", "TB" };
    if (bytes < 1000) return std::to_string(bytes) + " B";
    double scaled = double(bytes);
    int unit = -1;
    while (scaled >= 1000 && unit < 3) {
        scaled /= 1000;
        ++unit;
    }
    char text[32];
    snprintf(text, sizeof text, "%.3g %s", scaled, kUnits[unit]);
    return text;
}

inline std::string humanDuration(int64_t ns) {
    char text[48];
    const double seconds = double(ns) / 1e9;
    if (seconds < 1)
        snprintf(text, sizeof text, "%.3g ms", double(ns) / 1e6);
    else if (seconds < 60)
        snprintf(text, sizeof text, "%.3g s", seconds);
    else if (seconds < 3600)
        snprintf(text, sizeof text, "%d min %d s", int(seconds) / 60, int(seconds) % 60);
    else
        snprintf(text, sizeof text, "%d h %d min", int(seconds) / 3600, int(seconds) % 3600 / 60);
    return text;
}

// 1420113 -> "1,420,113"
inline std::string groupedInteger(int64_t value) {
    std::string digits = std::to_string(value < 0 ? -value : value);
    for (int i = int(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(size_t(i), ",");
    return value < 0 ? "-" + digits : digits;
}

// Local wall-clock time of an epoch time in nanoseconds: "2024-05-01 12:03:04 CEST".
inline std::string localTime(int64_t epochNs) {
    const time_t seconds = time_t(epochNs / 1000000000);
    struct tm local { };
    if (!localtime_r(&seconds, &local)) return "?";
    char text[64];
    strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S %Z", &local);
    return text;
}

} // namespace tuneup::cli
