#pragma once
// Keeps the recording safe across the process's life: fork (a child never touches the parent's
// file), exit (final flush from atexit and the ELF destructor) and SIGINT/SIGTERM (flush, then
// die by the signal as the process would have).

namespace tuneup::agent {

struct ForkHooks {
    void (*childAfterFork)() = nullptr; // runs in the child, single-threaded, after the agent's own reset
};

void installProcessGuard(const ForkHooks& hooks);

// For the interposed _exit/_Exit: finalises this process's file (async-signal-safe, waits at most
// 2 s), then ends the process as _exit does.
[[noreturn]] void exitWithoutHandlers(int status);

} // namespace tuneup::agent
