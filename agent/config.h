#pragma once
// The agent's settings, read once from the environment (documented in docs/agent.md).
// `tuneup record` sets them; users who set LD_PRELOAD themselves may set them by hand.

#include <cstdint>
#include <string>
#include <vector>

namespace tuneup::agent {

// What to capture (TUNEUP_TRACE, a comma list; "cuda" = kernel,memcpy,memset,sync,runtime,driver,memory).
struct TraceSelection {
    bool nvtx = true;
    bool torch = true; // the torch probes (torch_probe.h), read during NVTX calls
    bool gemm = true; // cuBLAS / cuBLASLt GEMM calls (blas_interposer, blaslt_interposer)
    bool conv = true; // cuDNN convolution calls (cudnn_interposer, cudnn_backend_interposer)
    bool kernel = true, memcpy = true, memset = true, sync = true, runtime = true, driver = true;
    // CUPTI's memory records: allocations through the CUDA API, rare under a caching allocator, so cheap.
    bool memory = true;
    // Noisy CUDA API calls (common/cuda_api.h) as api_calls rows too; else only counted per name.
    bool noisyApi = false;
    bool anyCuda() const { return kernel || memcpy || memset || sync || runtime || driver || memory; }
};

struct Config {
    bool disabled = false; // TUNEUP_DISABLE=1: load and do nothing
    std::string outputBase; // TUNEUP_OUTPUT, default "tuneup.db" in the working directory
    long mainPid = 0; // TUNEUP_MAIN_PID: the process that owns run.db (set by tuneup record)
    long launcherPid = 0; // TUNEUP_MAIN_PID=-N: process N is the launcher (torchrun) that tuneup record started
    TraceSelection trace; // TUNEUP_TRACE
    uint32_t threadBufferKiB = 1024; // TUNEUP_BUFFER_KB: what a thread's event buffer grows by at a time
    uint32_t maxBufferMiB = 32; // TUNEUP_MAX_BUFFER_MB: the budget of all threads' event buffers (buffer_budget.h)
    uint32_t flushIntervalMs = 200; // TUNEUP_FLUSH_MS: longest time an event waits to be committed
    uint32_t samplePeriodMs = 10; // TUNEUP_SAMPLE_MS: the main thread's state; 0 = not sampled
    std::string cuptiPath; // TUNEUP_CUPTI_PATH: libcupti to load when none is loaded yet
    std::string cuptiDumpDir; // TUNEUP_CUPTI_DUMP: also write CUPTI's buffers to files here (cupti_dump.h)
    uint32_t cuptiDumpMiB = 16; // TUNEUP_CUPTI_DUMP_MB: at most this much of them per process
    // Settings that were not understood ("TUNEUP_SAMPLE_MS=abc is not a number in [0, 10000]; using
    // 10"): said once, by the process that records (logConfigWarnings), not by every tool it starts.
    std::vector<std::string> warnings;
};

// Parses a TUNEUP_TRACE value; returns false and names the bad item in `error`.
bool parseTraceSelection(const std::string& text, TraceSelection& out, std::string& error);

// Reads the environment. Never fails: a bad value falls back to its default, with a warning in
// `warnings`. TUNEUP_LOG takes effect at once.
Config configFromEnvironment();

// Logs the warnings once and forgets them (a forked child does not repeat its parent's).
void logConfigWarnings(Config& config);

} // namespace tuneup::agent
