#pragma once
// Where an event came from: the unit in which the file counts what was written and dropped
// (table event_counts). The names are those of TUNEUP_TRACE where one exists.

#include <cstddef>
#include <cstdint>

namespace tuneup::agent {

enum class EventSource : uint8_t {
    Nvtx = 0, // NVTX calls of the program and its libraries
    Python = 1, // the Python bootstrap's ranges and marks (its "tuneup" NVTX domain)
    Torch = 2, // torch setting changes read by the torch probes
    Gemm = 3, // cuBLAS / cuBLASLt calls (interposers)
    Conv = 4, // cuDNN convolution calls (interposers)
    Cupti = 5, // GPU activity records
    HostSampler = 6, // the main thread's sampled states (thread_states)
};
inline constexpr size_t kEventSourceCount = 7;

inline constexpr const char* eventSourceName(EventSource source) {
    constexpr const char* kNames[kEventSourceCount]
        = { "nvtx", "python", "torch", "gemm", "conv", "cupti", "host_sampler" };
    return size_t(source) < kEventSourceCount ? kNames[size_t(source)] : "unknown";
}

} // namespace tuneup::agent
