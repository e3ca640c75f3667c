#pragma once
// Reads PyTorch's settings from inside the process without linking LibTorch: finds libtorch_cpu.so
// among the loaded objects, resolves its accessors with dlsym and calls them. A setting whose
// symbol is missing (another version) reads as unknown, never a crash. Autocast and the profiler
// are thread-local: read them on the training thread (the NVTX calls do).

#include <cstddef>
#include <cstdint>

namespace tuneup::agent {

// The flags, in this order (the names are the trace's framework_flags names, docs/schema.md).
inline constexpr const char* kTorchFlagNames[] = { "cudnn.benchmark", "cudnn.deterministic", "tf32.cublas",
    "tf32.cudnn", "autograd.anomaly", "autocast.enabled", "profiler.enabled" };
inline constexpr size_t kTorchFlagCount = sizeof kTorchFlagNames / sizeof kTorchFlagNames[0];

// Values: 1 on, 0 off, -1 unknown (the symbol is missing in this torch).
struct TorchFlags {
    int8_t values[kTorchFlagCount];
};

// Reads every flag on the calling thread. False while libtorch is not loaded (or TUNEUP_TRACE leaves
// "torch" out); the first call after it loads resolves the symbols, later calls only read.
bool readTorchFlags(TorchFlags& out);

// In a forked child: the lock around the symbols' search starts free (a thread of the parent may have held it at
// fork(), searching on its own NVTX call, and the child's first NVTX call would wait for it forever).
void resetTorchProbeAfterFork();

} // namespace tuneup::agent
