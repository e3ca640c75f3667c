#include "units.h"

#include <cstdio>

namespace tuneup {

std::string formatDuration(int64_t ns) {
    char text[32];
    const double v = double(ns);
    if (ns >= 1'000'000'000)
        snprintf(text, sizeof text, "%.2f s", v / 1e9);
    else if (ns >= 1'000'000)
        snprintf(text, sizeof text, "%.1f ms", v / 1e6);
    else if (ns >= 1'000)
        snprintf(text, sizeof text, "%.0f us", v / 1e3);
    else
        snprintf(text, sizeof text, "%lld ns", static_cast<long long>(ns));
    return text;
}

std::string formatElapsed(int64_t ns) {
    char text[48];
    const double seconds = double(ns) / 1e9;
    if (seconds < 1)
        snprintf(text, sizeof text, "%.3g ms", double(ns) / 1e6);
    else if (seconds < 60)
        snprintf(text, sizeof text, "%.3g s", seconds);
    else if (seconds < 3600)
        snprintf(text, sizeof text, "%d min %d s", int(seconds) / 60, int(seconds) % 60);
    else
        snprintf(text, sizeof text, "%lld h %d min", static_cast<long long>(seconds) / 3600,
            int(static_cast<long long>(seconds) % 3600 / 60));
    return text;
}

std::string formatBytes(int64_t bytes) {
    static const char* kUnits[] = { "kB", "MB", "GB", "TB", "PB" };
    if (bytes < 1000) return std::to_string(bytes) + " B";
    double scaled = double(bytes);
    int unit = -1;
    while (scaled >= 1000 && unit < 4) {
        scaled /= 1000;
        ++unit;
    }
    char text[32];
    snprintf(text, sizeof text, "%.3g %s", scaled, kUnits[unit]);
    return text;
}

std::string formatCount(int64_t value) {
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

std::string formatPercent(double share) {
    char text[16];
    snprintf(text, sizeof text, share < 0.01 && share > 0 ? "%.1f%%" : "%.0f%%", share * 100);
    return text;
}

std::string groupedInteger(int64_t value) {
    // The magnitude as unsigned, so that INT64_MIN has one too.
    const uint64_t magnitude = value < 0 ? uint64_t(-(value + 1)) + 1 : uint64_t(value);
    std::string digits = std::to_string(magnitude);
    for (int i = int(digits.size()) - 3; i > 0; i -= 3)
        digits.insert(size_t(i), ",");
    return value < 0 ? "-" + digits : digits;
}

} // namespace tuneup
