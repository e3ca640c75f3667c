#include "process_guard.h"

#include "agent.h"
#include "log.h"
#include "module_unload_lock.h"
#include "ring_registry.h"
#include "writer.h"

#include <atomic>
#include <cstdlib>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace tuneup::agent {

namespace {

ForkHooks s_hooks;

void prepareFork() {
    // No other thread may be inside the registry, or unwinding, while the address space is copied. The unwinding
    // writer takes no registry lock, so this order cannot wait in a circle.
    lockModuleUnloads();
    RingRegistry::lockForFork();
}

void parentAfterFork() {
    RingRegistry::unlockAfterFork();
    unlockModuleUnloads();
}

void childAfterFork() {
    RingRegistry::resetAfterFork();
    RingRegistry::unlockAfterFork();
    resetModuleUnloadsAfterFork();
    Writer::abandonAfterFork();
    if (s_hooks.childAfterFork) s_hooks.childAfterFork();
}

void onExit() {
    shutdown();
}

} // namespace

void exitWithoutHandlers(int status) {
    Writer::flushFromSignalHandler();
    for (;;)
        syscall(SYS_exit_group, status);
}

void installProcessGuard(const ForkHooks& hooks) {
    s_hooks = hooks;
    pthread_atfork(prepareFork, parentAfterFork, childAfterFork);
    atexit(onExit);
}

void registerStopBeforeCuptiTeardown() {
    static std::atomic<bool> registered { false };
    if (!registered.exchange(true)) atexit(onExit);
}

} // namespace tuneup::agent
