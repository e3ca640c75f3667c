// The agent's entry points. Any of them may come first; all lead to one idempotent start.
//   LD_PRELOAD             -> the constructor below
//   CUDA_INJECTION64_PATH  -> InitializeInjection, called by the CUDA driver in cuInit
//   NVTX_INJECTION64_PATH  -> InitializeInjectionNvtx2, called once by every library using NVTX
// and, with LD_PRELOAD, _exit/_Exit, which run no atexit handler (see exitWithoutHandlers).

#include "agent.h"
#include "nvtx_source.h"
#include "process_guard.h"
#include "python_sites.h"
#include "writer.h"
#ifdef TUNEUP_HAVE_CUPTI
#include "cupti_source.h"
#endif

#include <string>

using namespace tuneup::agent;

#define TUNEUP_EXPORT extern "C" __attribute__((visibility("default")))

__attribute__((constructor)) static void onLoad() {
    // Cheap for the many processes that never record (compilers and tools a training run
    // starts): only the main process opens its file and starts a thread here.
    ensureStarted();
}

__attribute__((destructor)) static void onUnload() {
    shutdown();
}

TUNEUP_EXPORT int InitializeInjection(void) {
    if (!ensureStarted()) return 1; // 1 = loaded fine; we just do nothing
#ifdef TUNEUP_HAVE_CUPTI
    std::string status;
    startCuptiCapture(config(), status);
    // libcupti is loaded now (and its static destructors registered): stop before them at exit.
    registerStopBeforeCuptiTeardown();
#endif
    return 1;
}

TUNEUP_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t getExportTable) {
    return attachNvtx(getExportTable);
}

// The Python bootstrap's entry points (called through ctypes; see nvtx_source.h).
TUNEUP_EXPORT int tuneup_range_push(const char* name) {
    return bootstrapRangePush(name);
}
TUNEUP_EXPORT int tuneup_range_pop(void) {
    return bootstrapRangePop();
}
TUNEUP_EXPORT void tuneup_mark(const char* name, int64_t value) {
    bootstrapMark(name, value);
}
TUNEUP_EXPORT int tuneup_python_sample_ms(void) {
    return bootstrapPythonSampleMs();
}
TUNEUP_EXPORT void tuneup_python_name(int64_t id, const char* text) {
    bootstrapPythonName(id, text);
}
TUNEUP_EXPORT void tuneup_python_calls(int64_t tid, const int64_t* records, int64_t count) {
    bootstrapPythonCalls(tid, records, count);
}
TUNEUP_EXPORT void tuneup_python_samples(int64_t tid, const int64_t* records, int64_t count) {
    bootstrapPythonSamples(tid, records, count);
}
TUNEUP_EXPORT void tuneup_memory_reading(int64_t ts_ns, int64_t device, int64_t since_ns, int64_t allocated,
    int64_t reserved, int64_t peak_allocated, int64_t peak_reserved) {
    bootstrapMemoryReading(ts_ns, device, since_ns, allocated, reserved, peak_allocated, peak_reserved);
}

// Writes everything recorded so far and commits it. For hosts that want a checkpoint (the Python
// bootstrap before os._exit in DataLoader workers, benchmarks).
TUNEUP_EXPORT void tuneup_agent_flush(void) {
    Writer::flush();
}

// _exit runs no atexit handler and no destructor: a forked child that ends with it (Python's
// DataLoader workers call os._exit) lost every event its writer had not committed yet. Only
// reached when the agent is LD_PRELOADed; glibc's own internal calls are not interposed.
TUNEUP_EXPORT void _exit(int status) {
    exitWithoutHandlers(status);
}
TUNEUP_EXPORT void _Exit(int status) {
    exitWithoutHandlers(status);
}
