#include "signal_guard.h"

#include "writer.h"

#include <atomic>
#include <cerrno>

// glibc's own name for sigaction, for the calls made before the interposer gave us the real one.
extern "C" int __sigaction(int, const struct sigaction*, struct sigaction*);

namespace tuneup::agent {

namespace {

constexpr int kFlushed[] = { SIGINT, SIGTERM, SIGHUP };

// Per flushed signal: what the program believes its disposition is, and whether the kernel has our
// handler in its place (only ever instead of SIG_DFL).
struct Disposition {
    std::atomic<bool> locked { false };
    bool known = false;
    bool ours = false;
    struct sigaction program { };
};
Disposition s_dispositions[NSIG];
std::atomic<bool> s_armed { false };
std::atomic<SigactionFunction> s_real { nullptr };

bool flushed(int sig) {
    for (int s : kFlushed)
        if (s == sig) return true;
    return false;
}

int realSigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    if (const SigactionFunction real = s_real.load(std::memory_order_acquire)) return real(sig, act, old);
#ifdef TUNEUP_AGENT_MODULE
    return __sigaction(sig, act, old); // `sigaction` is the agent's own there
#else
    return ::sigaction(sig, act, old); // a test binary: libc's, or its sanitizer's
#endif
}

bool isDefault(const struct sigaction& action) {
    return action.sa_handler == SIG_DFL; // sa_sigaction shares the field: SA_SIGINFO with null is default too
}

void onFlushedSignal(int sig) {
    const int savedErrno = errno;
    Writer::flushFromSignalHandler(); // async-signal-safe, at most 2 s
    // Die by the signal, as the process would have without us: the program's disposition is SIG_DFL.
    struct sigaction byDefault { };
    byDefault.sa_handler = SIG_DFL;
    sigemptyset(&byDefault.sa_mask);
    realSigaction(sig, &byDefault, nullptr);
    s_dispositions[sig].ours = false;
    raise(sig); // pending until this handler returns (the signal is blocked while it runs)
    errno = savedErrno;
}

// Held with every signal blocked, so a handler on this thread can never spin on it; other threads
// wait a few instructions. No allocation, async-signal-safe.
class Locked {
public:
    explicit Locked(Disposition& d)
        : m_d(d) {
        sigset_t all;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &m_mask);
        while (m_d.locked.exchange(true, std::memory_order_acquire)) { }
    }
    ~Locked() {
        m_d.locked.store(false, std::memory_order_release);
        pthread_sigmask(SIG_SETMASK, &m_mask, nullptr);
    }
    Locked(const Locked&) = delete;
    Locked& operator=(const Locked&) = delete;

private:
    Disposition& m_d;
    sigset_t m_mask;
};

// Sets the kernel's disposition for what the program asks: ours in place of SIG_DFL.
int apply(int sig, Disposition& d, const struct sigaction& program) {
    struct sigaction kernel = program;
    if (isDefault(program)) {
        kernel = {};
        kernel.sa_handler = onFlushedSignal;
        sigemptyset(&kernel.sa_mask);
        kernel.sa_flags = SA_RESTART;
    }
    const int rc = realSigaction(sig, &kernel, nullptr);
    if (rc == 0) {
        d.program = program;
        d.ours = isDefault(program);
    }
    return rc;
}

// The first time a signal is looked at after arming: what the kernel has is the program's.
void learn(int sig, Disposition& d) {
    if (d.known) return;
    struct sigaction current { };
    if (realSigaction(sig, nullptr, &current) != 0) return;
    d.known = true;
    d.program = current;
    if (isDefault(current)) apply(sig, d, current);
}

} // namespace

void setRealSigaction(SigactionFunction real) {
    s_real.store(real, std::memory_order_release);
}

void armSignalFlush() {
    s_armed.store(true, std::memory_order_release);
    for (int sig : kFlushed) {
        Disposition& d = s_dispositions[sig];
        Locked lock(d);
        learn(sig, d);
    }
}

int programSigaction(int sig, const struct sigaction* act, struct sigaction* old) {
    if (!flushed(sig) || !s_armed.load(std::memory_order_acquire)) return realSigaction(sig, act, old);
    Disposition& d = s_dispositions[sig];
    Locked lock(d);
    learn(sig, d);
    if (!d.known) return realSigaction(sig, act, old);
    const struct sigaction previous = d.program; // `old` may be `act`
    if (act && apply(sig, d, *act) != 0) return -1;
    if (old) *old = previous;
    return 0;
}

} // namespace tuneup::agent
