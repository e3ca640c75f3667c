#pragma once
// What a box on the timeline is, for its colour and its legend. GPU work in five colours a reader
// tells apart at a glance (compute kernels, GEMM/convolution, communication, copies, sets), CPU work
// in muted ones, waits in red. The breakdown chart uses the same colours for the same parts
// (report_helpers.h kBreakdownParts). No Qt: colours are 0xRRGGBB.

#include <cstdint>
#include <string_view>

namespace tuneup::gui {

enum class EventKind : uint8_t {
    KernelCompute, // pointwise, reductions, fills, everything not below
    KernelGemm, // GEMM and convolution kernels
    KernelComm, // NCCL/RCCL collectives
    Memcpy,
    Memset,
    Range, // NVTX and torch ranges (record_function)
    DataWait, // the training loop waiting for the DataLoader
    CpuOp, // framework operators (aten::mm...)
    ApiCall, // CUDA runtime/driver calls
    SyncCall, // CUDA calls that block the host (cudaStreamSynchronize, synchronous copies)
    LibraryCall, // cuBLAS/cuDNN calls the agent's interposers recorded
    Step,
    IdleData, // GPU idle while the host waited for data
    IdleSync, // ... after a synchronisation
    IdleHost, // ... otherwise: launch and Python overhead
    HostRunning, // the main thread's sampled state: running
    HostWaiting, // ... blocked in a system call (a lock, a pipe, a sleep, the driver)
    IdleGraph, // GPU idle between the nodes of a CUDA graph replay (the host had queued them)
    Memory, // a GPU's memory level (memory tracks)
    Count,
};

struct KindStyle {
    uint32_t rgb;
    std::string_view label; // short, for the legend
};
const KindStyle& kindStyle(EventKind kind);
// The kinds a legend lists, in its order.
inline constexpr EventKind kLegendKinds[] = { EventKind::KernelCompute, EventKind::KernelGemm, EventKind::KernelComm,
    EventKind::Memcpy, EventKind::Memset, EventKind::Range, EventKind::CpuOp, EventKind::ApiCall, EventKind::SyncCall,
    EventKind::DataWait, EventKind::HostRunning, EventKind::HostWaiting };

// True for the names of CUDA calls during which the host waits for the GPU.
bool isBlockingCudaCall(std::string_view name);

} // namespace tuneup::gui
