#pragma once
// Keeps the recording safe across the process's life: fork (a child never touches the parent's
// file) and exit (the final flush from atexit and the ELF destructor, ordered before the CUDA
// libraries' own teardown). Signals: signal_guard.h; exec: libc_interposer.cpp.

namespace tuneup::agent {

struct ForkHooks {
    void (*childAfterFork)() = nullptr; // runs in the child, single-threaded, after the agent's own reset
};

void installProcessGuard(const ForkHooks& hooks);

// Once CUPTI is loaded: registers the exit-time stop again, so that it runs before libcupti's own
// destructors (exit runs atexit handlers and C++ static destructors in reverse order of registration;
// the one from start-up, registered before libcupti was loaded, would run after them).
void registerStopBeforeCuptiTeardown();

// For the interposed _exit/_Exit: finalises this process's file (async-signal-safe, waits at most
// 2 s), then ends the process as _exit does.
[[noreturn]] void exitWithoutHandlers(int status);

} // namespace tuneup::agent
