// The libc functions the agent defines when it is LD_PRELOADed, so that the program's calls reach it
// first (built into libtuneup-agent.so only: a test binary must keep libc's, and its sanitizer's).
//   sigaction, signal, bsd_signal, sysv_signal: the program sees and sets its own dispositions of
//     SIGINT/SIGTERM/SIGHUP while the agent flushes on them (signal_guard.h).
//   execve, execv, execvp, execvpe, execl, execle, execlp, fexecve, execveat: everything recorded
//     is written before a new program image replaces this one (Writer::finishForExec), instead of
//     being lost with it. posix_spawn, system and popen start a child and replace nothing here.
// Every function here is async-signal-safe (exec and sigaction may be called from signal handlers
// and between fork and exec): no allocation, no lock; the real functions are resolved at load.

#include "signal_guard.h"
#include "writer.h"

#include <alloca.h>
#include <cerrno>
#include <csignal>
#include <cstdarg>
#include <dlfcn.h>
#include <unistd.h>

using namespace tuneup::agent;

#define TUNEUP_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Real {
    sighandler_t (*signal)(int, sighandler_t);
    sighandler_t (*bsdSignal)(int, sighandler_t);
    sighandler_t (*sysvSignal)(int, sighandler_t);
    int (*execve)(const char*, char* const[], char* const[]);
    int (*execv)(const char*, char* const[]);
    int (*execvp)(const char*, char* const[]);
    int (*execvpe)(const char*, char* const[], char* const[]);
    int (*fexecve)(int, char* const[], char* const[]);
    int (*execveat)(int, const char*, char* const[], char* const[], int);
} s_real;

template <typename F> void resolve(F& out, const char* name) {
    out = reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// Before the agent's other constructors (which may install handlers), and before the program runs.
__attribute__((constructor(101))) void resolveRealFunctions() {
    SigactionFunction sigactionFunction = nullptr;
    resolve(sigactionFunction, "sigaction");
    setRealSigaction(sigactionFunction);
    resolve(s_real.signal, "signal");
    resolve(s_real.bsdSignal, "bsd_signal");
    resolve(s_real.sysvSignal, "sysv_signal");
    resolve(s_real.execve, "execve");
    resolve(s_real.execv, "execv");
    resolve(s_real.execvp, "execvp");
    resolve(s_real.execvpe, "execvpe");
    resolve(s_real.fexecve, "fexecve");
    resolve(s_real.execveat, "execveat");
}

// signal() as glibc defines it (BSD semantics: the handler stays, calls restart, the signal is
// blocked while its handler runs), through the program's view of the dispositions.
sighandler_t viaSigaction(int sig, sighandler_t handler, int flags, bool blockItself) {
    struct sigaction action {
    }, old {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    if (blockItself && sig > 0 && sig < NSIG) sigaddset(&action.sa_mask, sig);
    action.sa_flags = flags;
    return programSigaction(sig, &action, &old) == 0 ? old.sa_handler : SIG_ERR;
}

bool flushedSignal(int sig) {
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
}

// Runs an exec call with the file written first; resumes the writer if the call returns (failed).
template <typename Call> int execWithFlush(Call call) {
    const bool paused = Writer::finishForExec();
    const int rc = call();
    const int savedErrno = errno;
    if (paused) Writer::resumeAfterFailedExec();
    errno = savedErrno;
    return rc;
}

int missing() {
    errno = ENOSYS;
    return -1;
}

// The argument list of an execl-style call, on the stack: argv[0] = first, up to the null.
#define TUNEUP_COLLECT_ARGS(first, argv, afterNull)                                                                    \
    size_t count = 1;                                                                                                  \
    {                                                                                                                  \
        va_list probe;                                                                                                 \
        va_start(probe, first);                                                                                        \
        while (va_arg(probe, const char*))                                                                             \
            ++count;                                                                                                   \
        va_end(probe);                                                                                                 \
    }                                                                                                                  \
    auto** argv = static_cast<char**>(alloca((count + 1) * sizeof(char*)));                                            \
    {                                                                                                                  \
        va_list args;                                                                                                  \
        va_start(args, first);                                                                                         \
        argv[0] = const_cast<char*>(first);                                                                            \
        for (size_t i = 1; i <= count; ++i)                                                                            \
            argv[i] = va_arg(args, char*);                                                                             \
        afterNull;                                                                                                     \
        va_end(args);                                                                                                  \
    }

} // namespace

TUNEUP_EXPORT int sigaction(int sig, const struct sigaction* act, struct sigaction* old) noexcept {
    return programSigaction(sig, act, old);
}

TUNEUP_EXPORT sighandler_t signal(int sig, sighandler_t handler) noexcept {
    if (!flushedSignal(sig) && s_real.signal) return s_real.signal(sig, handler);
    return viaSigaction(sig, handler, SA_RESTART, true);
}

TUNEUP_EXPORT sighandler_t bsd_signal(int sig, sighandler_t handler) noexcept {
    if (!flushedSignal(sig) && s_real.bsdSignal) return s_real.bsdSignal(sig, handler);
    return viaSigaction(sig, handler, SA_RESTART, true);
}

TUNEUP_EXPORT sighandler_t sysv_signal(int sig, sighandler_t handler) noexcept {
    if (!flushedSignal(sig) && s_real.sysvSignal) return s_real.sysvSignal(sig, handler);
    return viaSigaction(sig, handler, int(SA_RESETHAND | SA_NODEFER), false);
}

TUNEUP_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) noexcept {
    if (!s_real.execve) return missing();
    return execWithFlush([&] { return s_real.execve(path, argv, envp); });
}

TUNEUP_EXPORT int execv(const char* path, char* const argv[]) noexcept {
    if (!s_real.execv) return missing();
    return execWithFlush([&] { return s_real.execv(path, argv); });
}

TUNEUP_EXPORT int execvp(const char* file, char* const argv[]) noexcept {
    if (!s_real.execvp) return missing();
    return execWithFlush([&] { return s_real.execvp(file, argv); });
}

TUNEUP_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) noexcept {
    if (!s_real.execvpe) return missing();
    return execWithFlush([&] { return s_real.execvpe(file, argv, envp); });
}

TUNEUP_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) noexcept {
    if (!s_real.fexecve) return missing();
    return execWithFlush([&] { return s_real.fexecve(fd, argv, envp); });
}

TUNEUP_EXPORT int execveat(int dirfd, const char* path, char* const argv[], char* const envp[], int flags) noexcept {
    if (!s_real.execveat) return missing();
    return execWithFlush([&] { return s_real.execveat(dirfd, path, argv, envp, flags); });
}

TUNEUP_EXPORT int execl(const char* path, const char* arg, ...) noexcept {
    TUNEUP_COLLECT_ARGS(arg, argv, (void)0)
    return execv(path, argv);
}

TUNEUP_EXPORT int execlp(const char* file, const char* arg, ...) noexcept {
    TUNEUP_COLLECT_ARGS(arg, argv, (void)0)
    return execvp(file, argv);
}

TUNEUP_EXPORT int execle(const char* path, const char* arg, ...) noexcept {
    char** envp = nullptr;
    TUNEUP_COLLECT_ARGS(arg, argv, envp = va_arg(args, char**))
    return execve(path, argv, envp);
}
