#include "units.h"

#include <cstdint>
#include <cstdio>
#include <iterator>

namespace tuneup {

std::string formatDuration(int64_t ns) {
    if (ns < 0) return std::string("-").append(formatDuration(ns == INT64_MIN ? INT64_MAX : -ns));
    if (ns < 1000) return std::to_string(ns) + " ns";
    struct Unit {
        double ns;
        const char* name;
    };
    static constexpr Unit kUnits[] = { { 1e3, "us" }, { 1e6, "ms" }, { 1e9, "s" } };
    // Three significant digits; a value that rounds up to 1000 is written in the next unit.
    size_t unit = 0;
    while (unit + 1 < std::size(kUnits) && double(ns) / kUnits[unit].ns >= 999.5)
        ++unit;
    const double value = double(ns) / kUnits[unit].ns;
    char text[48];
    if (value >= 999.5)
        snprintf(text, sizeof text, "%.0f %s", value, kUnits[unit].name); // thousands of seconds
    else
        snprintf(text, sizeof text, "%.3g %s", value, kUnits[unit].name);
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
    const std::string digits = std::to_string(magnitude);
    std::string out = value < 0 ? "-" : "";
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

} // namespace tuneup
