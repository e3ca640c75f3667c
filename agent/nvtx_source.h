#pragma once
// NVTX v3 capture through NVTX_INJECTION64_PATH: each library that uses NVTX calls
// InitializeInjectionNvtx2 once; we fill its function tables with our handlers, which write
// events to the calling thread's ring. No lock and no string interning on the hot path.

#include <cstddef>
#include <cstdint>
#include <nvtx3/nvToolsExt.h>
#include <optional>
#include <string>

namespace tuneup::agent {

// Installs the handlers into the calling library's NVTX tables. Returns NVTX's success value (1),
// or 0 so NVTX unloads us and its calls become no-ops (NVTX capture disabled).
int attachNvtx(NvtxGetExportTableFunc_t getExportTable);

// True once any library's NVTX calls reach the agent (inherited by forked children).
bool nvtxAttached();

// The name of a domain this process created with nvtxDomainCreate, if any: a forked child's writer
// names the domains it inherited (their creation was recorded in the parent's file).
std::optional<std::string> nvtxDomainName(uint64_t handle);

// Bytes another source's event must leave free in this thread's ring: the room kept for the pops of
// the NVTX ranges open on it (see nvtx_source.cpp), so no record of ours can make a pop drop.
size_t openRangeReserveBytes();

// For the Python bootstrap (agent/python/sitecustomize.py), which has no NVTX of its own in CPU
// builds of torch: ranges and marks with an int64 payload in the "tuneup" domain, recorded exactly
// as NVTX calls are. Push and pop return the nesting level as NVTX does (-1 when not recording).
int bootstrapRangePush(const char* name);
int bootstrapRangePop();
void bootstrapMark(const char* name, int64_t value);
// Whether the bootstrap's events are recorded in this process (the agent started, NVTX capture on).
bool bootstrapRecording();

} // namespace tuneup::agent
