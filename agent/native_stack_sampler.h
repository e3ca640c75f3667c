#pragma once
// Where a native program's main thread runs: its stack, sampled for programs that are not Python (LibTorch C++
// training; Python's own stack is the bootstrap's). perf_event_open on that thread, a software clock of its CPU
// time, user space only (what perf_event_paranoid 2, the default, allows a process on itself): each sample
// carries the registers and a copy of the top of the stack, which the writer thread unwinds afterwards with
// libunwind (loaded at run time) through the program's own unwind tables. Kept of each sample: the innermost
// frame in the user's code (isUserCodeModule), as its module and address, for `tuneup record` to name with the
// binary's debug information. Nothing runs in the sampled thread: no signal, no handler, no interrupted call.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tuneup::agent {

// A frame of the user's code: the module's path, the ELF virtual address of the instruction (what addr2line takes;
// a call's address, not its return address), and the function's name where the module exports it ("" otherwise).
// `callers`: the addresses of the next frames out in the same module (at most kMaxCallers), for when the innermost
// is a library's template compiled into the program (LibTorch's headers): its name is then where the user called it.
struct UserFrame {
    static constexpr size_t kMaxCallers = 7;
    std::string module;
    uint64_t address = 0;
    std::string function;
    std::vector<uint64_t> callers;
};

// Whether code at `path` is the user's: not the system's libraries or programs, nor PyTorch's, CUDA's, an
// installed Python package's or tuneup's own. `path` as the loader names it, made absolute.
bool isUserCodeModule(std::string_view path);

struct NativeSamplerStats {
    uint64_t samples = 0; // samples read
    uint64_t withUserFrame = 0; // of which had a frame of the user's code
    uint64_t lost = 0; // samples the kernel dropped: its buffer was full
    uint64_t unwindNs = 0; // time spent unwinding, on the writer thread
};

class NativeStackSampler {
public:
    // Samples thread `tid` of this process every `periodNs` of its CPU time. Null, with the reason in `why`, where
    // it cannot or should not: the process is Python, its program is not the user's (a shell, a launcher),
    // libunwind is not installed, the kernel refuses (perf_event_paranoid 3, a seccomp filter).
    static std::unique_ptr<NativeStackSampler> open(int tid, uint64_t periodNs, std::string& why);
    // Loads what open() needs (libunwind, the table of loaded modules) for a program it will sample, on the calling
    // thread: at the agent's start, before the program can fork. A fork while the writer thread was loading them
    // would leave the child's writer waiting forever on their one-time initialisation.
    static void prepare();
    ~NativeStackSampler();
    NativeStackSampler(const NativeStackSampler&) = delete;
    NativeStackSampler& operator=(const NativeStackSampler&) = delete;

    // Unwinds the samples taken since the last call; `out` gets each one's time (CLOCK_MONOTONIC) and its user
    // frame, for those that have one.
    void drain(const std::function<void(uint64_t timeNs, const UserFrame&)>& out);
    const NativeSamplerStats& stats() const { return m_stats; }

    // In a forked child: the kernel's buffer is not mapped there (MADV_DONTFORK), and nothing is released.
    void abandonAfterFork() { m_ring = nullptr; }

    struct Unwinder; // libunwind, loaded once

private:
    NativeStackSampler(void* ring, size_t ringBytes, const Unwinder& unwinder);

    void* m_ring;
    size_t m_ringBytes;
    const Unwinder& m_unwinder;
    NativeSamplerStats m_stats;
};

} // namespace tuneup::agent
