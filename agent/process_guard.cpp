#include "process_guard.h"

#include "agent.h"
#include "log.h"
#include "ring_registry.h"
#include "writer.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace tuneup::agent {

namespace {

ForkHooks s_hooks;
struct sigaction s_previous[NSIG];

void prepareFork() {
    // No other thread may be inside the registry while the address space is copied.
    RingRegistry::lockForFork();
}

void parentAfterFork() {
    RingRegistry::unlockAfterFork();
}

void childAfterFork() {
    RingRegistry::resetAfterFork();
    RingRegistry::unlockAfterFork();
    Writer::abandonAfterFork();
    if (s_hooks.childAfterFork) s_hooks.childAfterFork();
}

void onTerminatingSignal(int sig) {
    const int savedErrno = errno;
    Writer::flushFromSignalHandler();
    // Die by the signal as the process would have without us (exit status, core dumps).
    sigaction(sig, &s_previous[sig], nullptr);
    raise(sig);
    errno = savedErrno;
}

void installSignalFlush(int sig) {
    struct sigaction current;
    if (sigaction(sig, nullptr, &current) != 0) return;
    // Only where nobody else handles the signal: a host's own handler (Python's SIGINT ->
    // KeyboardInterrupt, torchrun's SIGTERM) ends in a normal exit, which flushes anyway.
    if (current.sa_handler != SIG_DFL || (current.sa_flags & SA_SIGINFO)) return;
    s_previous[sig] = current;
    struct sigaction action { };
    action.sa_handler = onTerminatingSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    sigaction(sig, &action, nullptr);
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
    installSignalFlush(SIGTERM);
    installSignalFlush(SIGINT);
    installSignalFlush(SIGHUP);
    atexit(onExit);
}

} // namespace tuneup::agent
