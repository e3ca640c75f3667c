#pragma once
// What Kineto's event and device names say: copy and memory kinds, synchronisation kinds, NCCL
// collectives, the ranges 2020 traces wrote as operators, GPU vendors. Internal to the Kineto importer.

#include "model/trace_model.h"

#include <string_view>

namespace tuneup::analysis::kineto {

// In 2020 traces record_function ranges came as "Operator" events; these names are the ranges
// PyTorch itself opens, which later traces mark as user_annotation.
bool isLegacyUserRange(std::string_view name);

MemoryKind memoryKindFromName(std::string_view s); // "Pageable", "Device", ...
CopyKind copyKindFromName(std::string_view s); // "HtoD", ...
// "Memcpy HtoD (Pageable -> Device)" -> HtoD, Pageable, Device.
void parseMemcpyName(std::string_view name, Memcpy& row);
SyncType syncTypeFromName(std::string_view s); // "Event Sync", ...

bool isCollectiveKernel(std::string_view name); // nccl*, rccl*
// The collective of an NCCL kernel from its name: "ncclKernel_AllReduce_RING_LL_Sum_float(...)",
// "ncclDevKernel_AllGather_RING_LL(...)", "ncclAllReduceRingLLKernel_sum_f32(ncclColl)" -> "allreduce".
std::string_view collectiveFromKernelName(std::string_view name);

GpuVendor vendorFromDeviceName(std::string_view name);

} // namespace tuneup::analysis::kineto
