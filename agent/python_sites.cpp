#include "python_sites.h"

#include "agent.h"
#include "host_events.h"
#include "nvtx_source.h"
#include "ring_registry.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace tuneup::agent {

namespace {
// More in one batch is a bootstrap gone wrong, not a program: the bootstrap hands over every 1024.
constexpr int64_t kMaxBatch = int64_t(1) << 20;

bool batchValid(const int64_t* records, int64_t count) {
    return records && count > 0 && count <= kMaxBatch && bootstrapRecording();
}
} // namespace

int bootstrapPythonSampleMs() {
    return bootstrapRecording() ? int(config().samplePeriodMs) : -1;
}

void bootstrapPythonName(int64_t id, const char* text) {
    if (id <= 0 || !text || !bootstrapRecording()) return;
    const NvtxNameFixed name { 0, uint64_t(id) };
    RingRegistry::emit(
        EventSource::Python, HostEventKind::PythonName, 0, &name, sizeof name, text, openRangeReserveBytes());
}

void bootstrapPythonCalls(int64_t tid, const int64_t* records, int64_t count) {
    if (!batchValid(records, count)) return;
    for (int64_t i = 0; i < count; ++i) {
        const int64_t* r = records + 6 * i;
        PythonCallFixed call {};
        call.endNs = uint64_t(r[1]);
        call.call = r[2];
        call.frame = { tid, r[3], r[4], r[5] };
        RingRegistry::emit(EventSource::Python, HostEventKind::PythonCall, uint64_t(r[0]), &call, sizeof call, {},
            openRangeReserveBytes());
    }
}

void bootstrapPythonSamples(int64_t tid, const int64_t* records, int64_t count) {
    if (!batchValid(records, count)) return;
    for (int64_t i = 0; i < count; ++i) {
        const int64_t* r = records + 4 * i;
        const PythonFrameFixed frame { tid, r[1], r[2], r[3] };
        RingRegistry::emit(EventSource::Python, HostEventKind::PythonSample, uint64_t(r[0]), &frame, sizeof frame, {},
            openRangeReserveBytes());
    }
}

void bootstrapMemoryReading(int64_t tsNs, int64_t device, int64_t sinceNs, int64_t allocatedBytes,
    int64_t reservedBytes, int64_t peakAllocatedBytes, int64_t peakReservedBytes) {
    if (tsNs <= 0 || device < 0 || device > INT32_MAX || !bootstrapRecording()) return;
    const auto bytes = [](int64_t b) { return b >= 0 ? b : int64_t(-1); };
    const MemoryReadingFixed reading { device, std::clamp<int64_t>(sinceNs, 0, tsNs), bytes(allocatedBytes),
        bytes(reservedBytes), bytes(peakAllocatedBytes), bytes(peakReservedBytes) };
    RingRegistry::emit(EventSource::Python, HostEventKind::MemoryReading, uint64_t(tsNs), &reading, sizeof reading, {},
        openRangeReserveBytes());
}

} // namespace tuneup::agent
