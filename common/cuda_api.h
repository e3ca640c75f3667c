#pragma once
// CUDA API names that the agent and the readers treat specially.
//
// Noisy calls are made so often by frameworks that one row each would swamp the trace and the agent's
// buffers (PyTorch makes millions a minute) while telling little one by one: by default the agent
// keeps them as a count per name (stats `cupti.api_counted.<name>`, docs/schema.md) instead of rows.
// Why each is here:
//   cudaGetDevice, cudaSetDevice, cuCtxGetCurrent, cuCtxSetCurrent, cuCtxGetDevice: device guards around
//     nearly every PyTorch op (Kineto mutes cudaGetDevice and cuCtxGetCurrent for the same reason);
//   cudaGetLastError, cudaPeekAtLastError: C10_CUDA_KERNEL_LAUNCH_CHECK after every kernel launch;
//   cudaStreamQuery, cudaEventQuery, cuStreamQuery, cuEventQuery: polls (the caching allocator's event
//     processing, the NCCL watchdog, DataLoader pinning threads); they never wait;
//   cudaStreamIsCapturing, cudaStreamGetCaptureInfo, cuStreamIsCapturing, cuStreamGetCaptureInfo,
//     cudaThreadExchangeStreamCaptureMode: the caching allocator checks graph capture on every allocation;
//   cudaGetDeviceCount, cudaDeviceGetAttribute, cuDeviceGetAttribute, cuDevicePrimaryCtxGetState,
//     cuKernelGetAttribute, cuFuncGetAttribute, cuGetProcAddress, cuPointerGetAttribute(s): queries the
//     runtime and libraries repeat (Kineto mutes cuDevicePrimaryCtxGetState and cuKernelGetAttribute;
//     CUPTI's own device records call cuDeviceGetAttribute).

#include <string_view>

namespace tuneup::cuda_api {

inline constexpr std::string_view kNoisy[] = { "cudaGetDevice", "cudaSetDevice", "cudaGetLastError",
    "cudaPeekAtLastError", "cudaStreamQuery", "cudaEventQuery", "cudaStreamIsCapturing", "cudaStreamGetCaptureInfo",
    "cudaThreadExchangeStreamCaptureMode", "cudaGetDeviceCount", "cudaDeviceGetAttribute", "cuCtxGetCurrent",
    "cuCtxSetCurrent", "cuCtxGetDevice", "cuStreamQuery", "cuEventQuery", "cuStreamIsCapturing",
    "cuStreamGetCaptureInfo", "cuDeviceGetAttribute", "cuDevicePrimaryCtxGetState", "cuKernelGetAttribute",
    "cuFuncGetAttribute", "cuGetProcAddress", "cuPointerGetAttribute", "cuPointerGetAttributes" };

// Calls that only ask whether work finished: CUDA 13's CUPTI reports them as synchronisation records
// too, which are not waits.
inline constexpr std::string_view kQueries[] = { "cudaStreamQuery", "cudaEventQuery", "cuStreamQuery", "cuEventQuery" };

// "cudaStreamQuery_ptsz" -> "cudaStreamQuery", "cuStreamGetCaptureInfo_v3" -> "cuStreamGetCaptureInfo",
// "cudaGetDevice_v3020" -> "cudaGetDevice": the function without per-thread-stream and version suffixes.
constexpr std::string_view baseName(std::string_view name) {
    for (;;) {
        if (name.ends_with("_ptsz") || name.ends_with("_ptds")) {
            name.remove_suffix(5);
            continue;
        }
        const size_t tag = name.rfind("_v");
        if (tag == std::string_view::npos || tag + 2 == name.size()) return name;
        for (size_t i = tag + 2; i < name.size(); ++i)
            if (name[i] < '0' || name[i] > '9') return name;
        name = name.substr(0, tag);
    }
}

constexpr bool isNoisy(std::string_view name) {
    const std::string_view base = baseName(name);
    for (std::string_view noisy : kNoisy)
        if (base == noisy) return true;
    return false;
}

constexpr bool isQuery(std::string_view name) {
    const std::string_view base = baseName(name);
    for (std::string_view query : kQueries)
        if (base == query) return true;
    return false;
}

} // namespace tuneup::cuda_api
