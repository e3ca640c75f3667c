#include "import/kineto_names.h"

#include <array>

namespace tuneup::analysis::kineto {

bool isLegacyUserRange(std::string_view name) {
    return name.starts_with("ProfilerStep#") || name.starts_with("enumerate(DataLoader)#")
        || name.starts_with("Optimizer.") || name.starts_with("DistributedDataParallel.")
        || (name.size() > 6 && name.starts_with("## ") && name.ends_with(" ##"));
}

MemoryKind memoryKindFromName(std::string_view s) {
    if (s == "Pageable") return MemoryKind::Pageable;
    if (s == "Pinned") return MemoryKind::Pinned;
    if (s == "Device") return MemoryKind::Device;
    if (s == "Array") return MemoryKind::Array;
    if (s == "Managed") return MemoryKind::Managed;
    if (s == "Device Static") return MemoryKind::DeviceStatic;
    if (s == "Managed Static") return MemoryKind::ManagedStatic;
    return MemoryKind::Unknown; // "Unknown", and "Host" in ROCm traces (pinned or not is not said)
}

CopyKind copyKindFromName(std::string_view s) {
    static constexpr std::array<std::string_view, 11> kNames
        = { "", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" };
    for (size_t i = 1; i < kNames.size(); ++i)
        if (kNames[i] == s) return static_cast<CopyKind>(i);
    return CopyKind::Unknown;
}

void parseMemcpyName(std::string_view name, Memcpy& row) {
    if (!name.starts_with("Memcpy ")) return;
    name.remove_prefix(7);
    const size_t space = name.find(' ');
    row.copyKind = copyKindFromName(name.substr(0, space));
    const size_t open = name.find('('), arrow = name.find(" -> "), close = name.rfind(')');
    if (open == std::string_view::npos || arrow == std::string_view::npos || close == std::string_view::npos
        || !(open < arrow && arrow < close))
        return;
    row.srcKind = memoryKindFromName(name.substr(open + 1, arrow - open - 1));
    row.dstKind = memoryKindFromName(name.substr(arrow + 4, close - arrow - 4));
}

SyncType syncTypeFromName(std::string_view s) {
    if (s == "Event Sync") return SyncType::EventSynchronize;
    if (s == "Stream Wait Event") return SyncType::StreamWaitEvent;
    if (s == "Stream Sync") return SyncType::StreamSynchronize;
    if (s == "Context Sync") return SyncType::ContextSynchronize;
    return SyncType::Unknown;
}

bool isCollectiveKernel(std::string_view name) {
    return name.starts_with("nccl") || name.starts_with("rccl");
}

std::string_view collectiveFromKernelName(std::string_view name) {
    name.remove_prefix(4); // nccl / rccl
    for (std::string_view prefix : { "DevKernel_", "Kernel_", "_" })
        if (name.starts_with(prefix)) {
            name.remove_prefix(prefix.size());
            break;
        }
    struct Entry {
        std::string_view op;
        std::string_view collective;
    };
    // Longer names first: ReduceScatter before Reduce, SendRecv before Send.
    static constexpr Entry kOps[]
        = { { "AllReduce", "allreduce" }, { "AllGather", "allgather" }, { "ReduceScatter", "reducescatter" },
              { "Broadcast", "broadcast" }, { "Reduce", "reduce" }, { "SendRecv", "sendrecv" }, { "Send", "send" },
              { "Recv", "recv" }, { "AllToAll", "alltoall" }, { "AlltoAll", "alltoall" } };
    for (const auto& e : kOps)
        if (name.starts_with(e.op)) return e.collective;
    return "nccl"; // an NCCL kernel whose operation the name does not tell
}

GpuVendor vendorFromDeviceName(std::string_view name) {
    for (std::string_view amd : { "AMD", "Radeon", "Instinct" })
        if (name.find(amd) != std::string_view::npos) return GpuVendor::Amd;
    for (std::string_view nv : { "NVIDIA", "Tesla", "Quadro", "GeForce", "TITAN", "RTX" })
        if (name.find(nv) != std::string_view::npos) return GpuVendor::Nvidia;
    return GpuVendor::Unknown;
}

} // namespace tuneup::analysis::kineto
