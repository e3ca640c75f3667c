#include "steps/memory_peak.h"

#include "saturating.h"

#include <algorithm>
#include <map>

namespace tuneup::analysis {

namespace {

int64_t totalOf(const MemoryEventTable& e, size_t i, MemoryTotal total) {
    return total == MemoryTotal::Allocated ? e.allocatedBytes[i] : e.reservedBytes[i];
}

// The GPU whose memory to read: the steps' device when it has memory events, else the one with the most.
int32_t memoryDevice(const TraceModel& model, int32_t stepsDevice) {
    std::map<int32_t, size_t> events;
    for (const int32_t device : model.memoryEvents.device)
        if (device != kHostMemory) ++events[device];
    for (const int32_t device : model.memoryPeaks.device)
        if (device != kHostMemory) ++events[device];
    if (events.count(stepsDevice)) return stepsDevice;
    int32_t best = -1;
    size_t most = 0;
    for (const auto& [device, n] : events)
        if (n > most) {
            best = device;
            most = n;
        }
    return best;
}

// The allocator's peak windows on `device` for `total`, each given to the step in which it was read (a window
// may begin in the step before: the reset came at the end of the previous optimizer step). -1: none.
std::vector<int64_t> windowPeaks(
    const TraceModel& model, int32_t device, MemoryTotal total, const std::vector<TimeSpan>& spans) {
    std::vector<int64_t> peaks(spans.size(), -1);
    const MemoryPeakTable& w = model.memoryPeaks;
    for (size_t i = 0; i < w.size(); ++i) {
        const int64_t bytes = total == MemoryTotal::Allocated ? w.allocatedBytes[i] : w.reservedBytes[i];
        if (w.device[i] != device || bytes < 0) continue;
        const auto after = std::upper_bound(
            spans.begin(), spans.end(), w.endNs[i], [](int64_t t, const TimeSpan& span) { return t < span.startNs; });
        if (after == spans.begin() || w.endNs[i] >= std::prev(after)->endNs) continue; // read outside every step
        int64_t& peak = peaks[size_t(after - spans.begin()) - 1];
        peak = std::max(peak, bytes);
    }
    return peaks;
}

MemoryTotalPeak peakOver(const MemoryCurve& curve, const std::vector<int64_t>& windows,
    const std::vector<TimeSpan>& spans, size_t firstSteady) {
    MemoryTotalPeak p;
    p.source = curve.source;
    p.beforeTraceBytes = curve.beforeTraceBytes;
    const bool anyWindow = std::any_of(windows.begin(), windows.end(), [](int64_t b) { return b >= 0; });
    // A peak the allocator kept is a level it reached: exact, where sizes alone give lower bounds.
    if (anyWindow && curve.source != MemorySource::Totals) {
        p.source = MemorySource::Totals;
        p.beforeTraceBytes = 0;
    }
    if (p.source == MemorySource::None) return p;
    const bool levels = curve.source == p.source; // the curve's points are levels of this kind
    p.perStep.resize(spans.size());
    for (size_t s = 0; s < spans.size(); ++s) {
        StepMemory& m = p.perStep[s];
        RowIndex peakRow = kNoRow;
        int64_t start = -1;
        if (levels) {
            const auto first = std::lower_bound(curve.timeNs.begin(), curve.timeNs.end(), spans[s].startNs);
            const auto last = std::lower_bound(first, curve.timeNs.end(), spans[s].endNs);
            start = curve.levelBefore(spans[s].startNs);
            m.peakBytes = m.lowBytes = start;
            for (auto it = first; it != last; ++it) {
                const int64_t level = curve.bytes[size_t(it - curve.timeNs.begin())];
                if (level > m.peakBytes) {
                    m.peakBytes = level;
                    peakRow = curve.rows[size_t(it - curve.timeNs.begin())];
                }
                m.lowBytes = std::min(m.lowBytes, level);
            }
        }
        if (windows[s] > m.peakBytes) {
            m.peakBytes = windows[s];
            peakRow = kNoRow; // reached somewhere in the window, at no event the trace holds
            ++p.windowPeaks;
        }
        m.riseBytes = start >= 0 && m.peakBytes >= 0 ? saturatingSub(m.peakBytes, start) : -1;
        if (s < firstSteady || m.peakBytes < 0) continue;
        if (m.peakBytes > p.peakBytes) {
            p.peakBytes = m.peakBytes;
            p.peakStep = s;
            p.peakRow = peakRow;
        }
        if (m.lowBytes >= 0) p.baseBytes = p.baseBytes < 0 ? m.lowBytes : std::min(p.baseBytes, m.lowBytes);
        p.riseBytes = std::max(p.riseBytes, m.riseBytes);
    }
    return p;
}

} // namespace

int64_t MemoryCurve::levelBefore(int64_t t) const {
    const auto it = std::lower_bound(timeNs.begin(), timeNs.end(), t);
    return it == timeNs.begin() ? startBytes : bytes[size_t(it - timeNs.begin()) - 1];
}

MemoryCurve memoryCurve(const TraceModel& model, int32_t device, MemoryTotal total) {
    const MemoryEventTable& e = model.memoryEvents;
    MemoryCurve c;
    for (size_t i = 0; i < e.size() && c.source == MemorySource::None; ++i)
        if (e.device[i] == device && totalOf(e, i, total) >= 0) c.source = MemorySource::Totals;
    if (c.source == MemorySource::Totals) {
        for (size_t i = 0; i < e.size(); ++i) {
            if (e.device[i] != device || totalOf(e, i, total) < 0) continue;
            if (c.timeNs.empty()) // before the first event: its total without its own change, when it is one
                c.startBytes = std::max<int64_t>(
                    0, saturatingSub(totalOf(e, i, total), e.deltaOf[i] == total ? e.deltaBytes[i] : 0));
            c.timeNs.push_back(e.timeNs[i]);
            c.bytes.push_back(totalOf(e, i, total));
            c.rows.push_back(RowIndex(i));
        }
        return c;
    }
    int64_t sum = 0, lowest = 0;
    for (size_t i = 0; i < e.size(); ++i) {
        if (e.device[i] != device || e.deltaOf[i] != total) continue;
        c.source = MemorySource::Deltas;
        sum = saturatingAdd(sum, e.deltaBytes[i]);
        lowest = std::min(lowest, sum);
        c.timeNs.push_back(e.timeNs[i]);
        c.bytes.push_back(sum);
        c.rows.push_back(RowIndex(i));
    }
    // Memory is never negative: a running sum that falls below zero freed what was allocated before.
    c.beforeTraceBytes = saturatingSub(0, lowest);
    c.startBytes = c.beforeTraceBytes;
    for (int64_t& b : c.bytes)
        b = saturatingAdd(b, c.beforeTraceBytes);
    return c;
}

MemoryPeaks memoryPeaks(const TraceModel& model, const StepAnalysis& steps) {
    MemoryPeaks peaks;
    peaks.device = memoryDevice(model, steps.device);
    if (peaks.device < 0) return peaks;
    if (const DeviceInfo* d = model.device(peaks.device))
        peaks.capacityBytes = std::max<int64_t>(d->globalMemoryBytes, 0);
    const MemoryCurve allocated = memoryCurve(model, peaks.device, MemoryTotal::Allocated);
    const MemoryCurve reserved = memoryCurve(model, peaks.device, MemoryTotal::Reserved);
    std::vector<TimeSpan> spans;
    for (const Step& s : steps.detection.steps)
        spans.push_back({ s.startNs, s.endNs });
    if (spans.empty()) { // the whole span of the device's memory events and peak windows
        TimeSpan all { INT64_MAX, INT64_MIN };
        for (const MemoryCurve* c : { &allocated, &reserved })
            if (!c->timeNs.empty()) {
                all.startNs = std::min(all.startNs, c->timeNs.front());
                all.endNs = std::max(all.endNs, c->timeNs.back() + 1);
            }
        const MemoryPeakTable& w = model.memoryPeaks;
        for (size_t i = 0; i < w.size(); ++i)
            if (w.device[i] == peaks.device) {
                all.startNs = std::min(all.startNs, w.endNs[i]);
                all.endNs = std::max(all.endNs, w.endNs[i] + 1);
            }
        spans.push_back(all);
    }
    peaks.steps = spans.size();
    peaks.firstSteadyStep = spans.size() >= 2 ? 1 : 0;
    peaks.allocated = peakOver(
        allocated, windowPeaks(model, peaks.device, MemoryTotal::Allocated, spans), spans, peaks.firstSteadyStep);
    peaks.reserved = peakOver(
        reserved, windowPeaks(model, peaks.device, MemoryTotal::Reserved, spans), spans, peaks.firstSteadyStep);
    return peaks;
}

std::string_view memorySourceName(MemorySource s) {
    switch (s) {
    case MemorySource::None:
        return "not recorded";
    case MemorySource::Totals:
        return "the allocator's totals";
    case MemorySource::Deltas:
        return "allocation sizes only";
    }
    return "?";
}

} // namespace tuneup::analysis
