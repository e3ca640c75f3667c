#pragma once
// The timeline's horizontal geometry as pure functions: which time sits under which pixel, zooming
// around a point, keeping the visible range sensible, and the ruler's ticks with their units. No Qt,
// so the tests check it without a window (hotspot's TimeLineData idea).

#include "units.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tuneup::gui {

/** A half-open span of time [startNs, endNs) on the trace's clock. */
struct TimeRange {
    int64_t startNs = 0;
    int64_t endNs = 0;
    int64_t duration() const { return endNs - startNs; }
    bool empty() const { return endNs <= startNs; }
    bool contains(int64_t t) const { return t >= startNs && t < endNs; }
    bool contains(const TimeRange& r) const { return r.startNs >= startNs && r.endNs <= endNs; }
    bool overlaps(const TimeRange& r) const { return r.startNs < endNs && r.endNs > startNs; }
    bool operator==(const TimeRange&) const = default;
};

/** Maps the visible range onto `widthPx` pixels, x = 0 at its start. */
class TimeMapping {
public:
    TimeMapping() = default;
    TimeMapping(TimeRange visible, double widthPx);

    const TimeRange& visible() const { return m_visible; }
    double widthPx() const { return m_width; }
    double nsPerPx() const { return m_nsPerPx; }
    // Differences are taken in int64 before converting: absolute Kineto times (~1.7e18 ns) do not fit
    // a double's 53 bits, their offsets from the visible start do.
    double toX(int64_t timeNs) const { return double(timeNs - m_visible.startNs) / m_nsPerPx; }
    int64_t toTime(double x) const;

private:
    TimeRange m_visible { 0, 1 };
    double m_width = 1;
    double m_nsPerPx = 1;
};

// The range after zooming by `factor` (< 1 zooms in, > 1 out) so that the time under pixel x stays there.
TimeRange zoomAround(const TimeMapping& mapping, double x, double factor);
// The range moved by `dx` pixels; positive dx brings later times into view.
TimeRange panByPixels(const TimeMapping& mapping, double dx);
// `wanted` made sensible for a trace spanning `trace`: at least `minDurationNs` long, no longer than
// the trace with a 5% margin each side, and moved (not shrunk) to stay within that margin.
TimeRange clampVisible(TimeRange wanted, TimeRange trace, int64_t minDurationNs);
// `range` grown by `fraction` of its duration on each side (at least 1 ns).
TimeRange padded(TimeRange range, double fraction);

// The ruler: ticks every 1, 2 or 5 x 10^k ns, the smallest such step that leaves `minSpacingPx` between
// two ticks.
int64_t tickStepNs(double nsPerPx, double minSpacingPx);
// Tick times in `visible`, on multiples of `stepNs` counted from `originNs` (the trace's start, which
// the ruler labels 0).
std::vector<int64_t> tickTimes(TimeRange visible, int64_t stepNs, int64_t originNs);
// A tick's label: its offset from the origin in the unit its size calls for, with as many decimals as
// the step needs to tell neighbours apart ("1.5 ms", "250 µs", "12 ns", "2 s", "1.2000005 s").
std::string formatTickLabel(int64_t offsetNs, int64_t stepNs);

} // namespace tuneup::gui
