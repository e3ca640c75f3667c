#pragma once
// The codes an Nsight Systems export uses (memory and copy kinds, sync types, NVTX event types, API
// event classes) mapped to the TraceModel's. Read from the export's own ENUM_* tables when it has them,
// by name, so a renumbering in a later nsys changes nothing; else nsys's documented numbering.
// nsys numbers memory kinds from 0 = pageable where CUPTI (and the model) has 0 = unknown.

#include "model/trace_model.h"

#include <cstdint>
#include <string_view>
#include <unordered_map>

namespace tuneup::analysis {

class NsysDb;

enum class NvtxEventKind : uint8_t { Other, Mark, PushPopRange, StartEndRange, DomainCreate, ThreadName };

class NsysKinds {
public:
    static NsysKinds read(NsysDb& db);

    MemoryKind memoryKind(int64_t code) const { return lookup(m_memory, code, MemoryKind::Unknown); }
    CopyKind copyKind(int64_t code) const { return lookup(m_copy, code, CopyKind::Unknown); }
    // Only for exports without stream and event ids: nsys versions disagree on these codes.
    SyncType syncType(int64_t code) const { return lookup(m_sync, code, SyncType::Unknown); }
    NvtxEventKind nvtxEvent(int64_t code) const { return lookup(m_nvtx, code, NvtxEventKind::Other); }
    // CUPTI_ACTIVITY_KIND_RUNTIME holds both runtime and driver calls, told apart by eventClass.
    ApiKind apiKind(int64_t eventClass) const { return lookup(m_apiClass, eventClass, ApiKind::Runtime); }

private:
    template <class T> static T lookup(const std::unordered_map<int64_t, T>& map, int64_t code, T fallback) {
        const auto it = map.find(code);
        return it == map.end() ? fallback : it->second;
    }
    std::unordered_map<int64_t, MemoryKind> m_memory;
    std::unordered_map<int64_t, CopyKind> m_copy;
    std::unordered_map<int64_t, SyncType> m_sync;
    std::unordered_map<int64_t, NvtxEventKind> m_nvtx;
    std::unordered_map<int64_t, ApiKind> m_apiClass;
};

// "cudaLaunchKernel_v7000" -> "cudaLaunchKernel": drops the "_v<CUDA version>" tag (4+ digits) nsys
// keeps in API names, as the tuneup agent does; keeps real suffixes such as cuMemcpyHtoD_v2.
std::string_view nsysApiName(std::string_view name);

} // namespace tuneup::analysis
