#include "timeline/time_mapping.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tuneup::gui {

TimeMapping::TimeMapping(TimeRange visible, double widthPx)
    : m_visible(visible.empty() ? TimeRange { visible.startNs, visible.startNs + 1 } : visible)
    , m_width(std::max(widthPx, 1.0))
    , m_nsPerPx(double(m_visible.duration()) / m_width) {
}

int64_t TimeMapping::toTime(double x) const {
    return m_visible.startNs + int64_t(std::llround(x * m_nsPerPx));
}

TimeRange zoomAround(const TimeMapping& mapping, double x, double factor) {
    const int64_t anchor = mapping.toTime(x);
    const double before = double(anchor - mapping.visible().startNs) * factor;
    const double after = double(mapping.visible().endNs - anchor) * factor;
    TimeRange out { anchor - int64_t(std::llround(before)), anchor + int64_t(std::llround(after)) };
    if (out.empty()) // zoomed in to nothing: keep one nanosecond
        out.endNs = out.startNs + 1;
    return out;
}

TimeRange panByPixels(const TimeMapping& mapping, double dx) {
    const int64_t shift = int64_t(std::llround(dx * mapping.nsPerPx()));
    return { mapping.visible().startNs + shift, mapping.visible().endNs + shift };
}

TimeRange clampVisible(TimeRange wanted, TimeRange trace, int64_t minDurationNs) {
    if (trace.empty()) trace.endNs = trace.startNs + std::max<int64_t>(minDurationNs, 1);
    const int64_t margin = std::max<int64_t>(trace.duration() / 20, 1);
    const TimeRange bounds { trace.startNs - margin, trace.endNs + margin };
    minDurationNs = std::clamp<int64_t>(minDurationNs, 1, bounds.duration());
    if (wanted.duration() < minDurationNs) {
        const int64_t centre = wanted.startNs + wanted.duration() / 2;
        wanted = { centre - minDurationNs / 2, centre - minDurationNs / 2 + minDurationNs };
    }
    if (wanted.duration() >= bounds.duration()) return bounds;
    if (wanted.startNs < bounds.startNs) return { bounds.startNs, bounds.startNs + wanted.duration() };
    if (wanted.endNs > bounds.endNs) return { bounds.endNs - wanted.duration(), bounds.endNs };
    return wanted;
}

TimeRange padded(TimeRange range, double fraction) {
    const int64_t pad = std::max<int64_t>(int64_t(double(range.duration()) * fraction), 1);
    return { range.startNs - pad, range.endNs + pad };
}

int64_t tickStepNs(double nsPerPx, double minSpacingPx) {
    const double wanted = std::max(nsPerPx * minSpacingPx, 1.0);
    int64_t decade = 1;
    while (decade <= INT64_MAX / 10) {
        for (int64_t m : { 1, 2, 5 })
            if (double(decade * m) >= wanted) return decade * m;
        decade *= 10;
    }
    return decade;
}

std::vector<int64_t> tickTimes(TimeRange visible, int64_t stepNs, int64_t originNs) {
    std::vector<int64_t> out;
    if (stepNs <= 0 || visible.empty()) return out;
    // The first multiple of step (from the origin) at or after the visible start; floor division so
    // that times before the origin work too.
    const int64_t offset = visible.startNs - originNs;
    int64_t k = offset / stepNs;
    if (k * stepNs < offset) ++k;
    for (int64_t t = originNs + k * stepNs; t < visible.endNs; t += stepNs)
        out.push_back(t);
    return out;
}

namespace {

struct Unit {
    int64_t ns;
    const char* name;
};
constexpr Unit kUnits[] = { { 1'000'000'000, "s" }, { 1'000'000, "ms" }, { 1'000, "µs" }, { 1, "ns" } };

// The largest unit no larger than `ns` (ns for anything below a microsecond).
const Unit& unitFor(int64_t ns) {
    for (const Unit& u : kUnits)
        if (std::llabs(ns) >= u.ns) return u;
    return kUnits[3];
}

} // namespace

std::string formatTickLabel(int64_t offsetNs, int64_t stepNs) {
    // The unit follows the offset's size and the decimals the step, so that every label is exact and
    // neighbours differ in their last digits: "1.2000005 s" beside "1.200001 s" when zoomed in far.
    stepNs = std::max<int64_t>(stepNs, 1);
    const Unit& unit = unitFor(std::max<int64_t>(std::llabs(offsetNs), stepNs));
    int decimals = 0;
    for (int64_t q = unit.ns; q > 1 && stepNs % q != 0; q /= 10)
        ++decimals;
    char text[48];
    snprintf(text, sizeof text, "%.*f %s", decimals, double(offsetNs) / double(unit.ns), unit.name);
    return text;
}

} // namespace tuneup::gui
