#pragma once
// NVTX v3 capture through NVTX_INJECTION64_PATH: each library that uses NVTX calls
// InitializeInjectionNvtx2 once; we fill its function tables with our handlers, which write
// events to the calling thread's ring. No lock and no string interning on the hot path.

#include <nvtx3/nvToolsExt.h>

namespace tuneup::agent {

// Installs the handlers into the calling library's NVTX tables. Returns NVTX's success value (1),
// or 0 so NVTX unloads us and its calls become no-ops (NVTX capture disabled).
int attachNvtx(NvtxGetExportTableFunc_t getExportTable);

// True once any library's NVTX calls reach the agent (inherited by forked children).
bool nvtxAttached();

// For the Python bootstrap (agent/python/sitecustomize.py), which has no NVTX of its own in CPU
// builds of torch: ranges and marks with an int64 payload in the "tuneup" domain, recorded exactly
// as NVTX calls are. Push and pop return the nesting level as NVTX does (-1 when not recording).
int bootstrapRangePush(const char* name);
int bootstrapRangePop();
void bootstrapMark(const char* name, int64_t value);

} // namespace tuneup::agent
