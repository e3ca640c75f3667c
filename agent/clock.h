#pragma once
// The one clock of a recording: CLOCK_MONOTONIC in nanoseconds. CUPTI is told to use it too
// (cuptiActivityRegisterTimestampCallback), so host and GPU events share a time base.

#include <cstdint>
#include <ctime>

namespace tuneup::agent {

inline uint64_t nowNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

inline uint64_t realtimeNs() {
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

} // namespace tuneup::agent
