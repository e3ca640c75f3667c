#pragma once
// SIGINT, SIGTERM and SIGHUP end a process that leaves them at their default without running any of
// its code: the agent flushes the file first, then the process dies by the same signal (exit status
// and core dump as without the agent). The program never sees this: the agent handles a signal only
// while the program's own disposition for it is SIG_DFL, and sigaction()/signal() (interposed) report
// and set the program's dispositions as if the agent were not there. So Python's
// signal.getsignal(SIGINT) is default_int_handler, KeyboardInterrupt works, and
// `old = signal.signal(s, h); signal.signal(s, old)` restores what was there.

#include <csignal>

namespace tuneup::agent {

using SigactionFunction = int (*)(int, const struct sigaction*, struct sigaction*);

// The libc sigaction the agent's interposer calls (set once, at load, by the interposer).
void setRealSigaction(SigactionFunction real);

// Starts flushing on these signals, when the process starts writing a file: from then on, whenever
// the program's disposition for one of them is SIG_DFL, the agent's handler is what the kernel has.
void armSignalFlush();

// The interposed sigaction: the program's view of the three signals once armed, else libc's call.
int programSigaction(int sig, const struct sigaction* act, struct sigaction* old);

} // namespace tuneup::agent
