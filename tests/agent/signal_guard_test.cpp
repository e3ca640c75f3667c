// The program's view of SIGINT/SIGTERM/SIGHUP while the agent flushes on them (signal_guard.h): the
// program reads and sets its own dispositions as if the agent were not there, the kernel has the
// agent's handler only in place of SIG_DFL, and a signal the program leaves at SIG_DFL still ends the
// process by that signal. Each case runs in a forked child: dispositions are per process.

#include "signal_guard.h"

#include <csignal>
#include <functional>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tuneup::agent;

namespace {

void programHandler(int) {
}

// The disposition the kernel has (libc's sigaction, not the program's view).
sighandler_t kernelHandler(int sig) {
    struct sigaction current { };
    sigaction(sig, nullptr, &current);
    return current.sa_handler;
}

sighandler_t programView(int sig) {
    struct sigaction current { };
    EXPECT_EQ(programSigaction(sig, nullptr, &current), 0);
    return current.sa_handler;
}

struct sigaction handlerAction(sighandler_t handler) {
    struct sigaction action { };
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    return action;
}

void setKernel(int sig, sighandler_t handler) {
    const struct sigaction action = handlerAction(handler);
    sigaction(sig, &action, nullptr);
}

int setProgram(int sig, sighandler_t handler, struct sigaction* old = nullptr) {
    const struct sigaction action = handlerAction(handler);
    return programSigaction(sig, &action, old);
}

// Runs `body` in a child; returns its wait status. A failed expectation in the child exits 1.
int inChild(const std::function<void()>& body) {
    const pid_t pid = fork();
    if (pid == 0) {
        body();
        _exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

} // namespace

TEST(SignalGuard, TheProgramSeesAndSetsItsOwnDispositions) {
    const int status = inChild([] {
        for (int sig : { SIGINT, SIGTERM, SIGHUP })
            setKernel(sig, SIG_DFL);
        armSignalFlush();
        for (int sig : { SIGINT, SIGTERM, SIGHUP }) {
            EXPECT_EQ(programView(sig), SIG_DFL) << sig;
            EXPECT_NE(kernelHandler(sig), SIG_DFL) << "the agent flushes on " << sig;
        }
        // old = signal.signal(SIGTERM, handler); signal.signal(SIGTERM, old)
        struct sigaction old { };
        ASSERT_EQ(setProgram(SIGTERM, programHandler, &old), 0);
        EXPECT_EQ(old.sa_handler, SIG_DFL);
        EXPECT_EQ(kernelHandler(SIGTERM), programHandler) << "the program's handler runs itself";
        EXPECT_EQ(programView(SIGTERM), programHandler);
        struct sigaction mine { };
        ASSERT_EQ(programSigaction(SIGTERM, &old, &mine), 0);
        EXPECT_EQ(mine.sa_handler, programHandler);
        EXPECT_EQ(programView(SIGTERM), SIG_DFL);
        EXPECT_NE(kernelHandler(SIGTERM), SIG_DFL) << "back to SIG_DFL: the agent flushes again";
        // SIG_IGN is the program's too.
        ASSERT_EQ(setProgram(SIGHUP, SIG_IGN), 0);
        EXPECT_EQ(kernelHandler(SIGHUP), SIG_IGN);
        EXPECT_EQ(programView(SIGHUP), SIG_IGN);
        // `act` and `old` may be the same struct.
        struct sigaction same = handlerAction(programHandler);
        ASSERT_EQ(programSigaction(SIGINT, &same, &same), 0);
        EXPECT_EQ(same.sa_handler, SIG_DFL);
        EXPECT_EQ(kernelHandler(SIGINT), programHandler);
        // Other signals are not the agent's business.
        ASSERT_EQ(setProgram(SIGUSR1, programHandler), 0);
        EXPECT_EQ(kernelHandler(SIGUSR1), programHandler);
    });
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST(SignalGuard, AHandlerTheProgramHadAlreadyIsLeftAlone) {
    // Python installs its SIGINT handler before the agent arms in a lazily recording process.
    const int status = inChild([] {
        setKernel(SIGINT, programHandler);
        setKernel(SIGTERM, SIG_DFL);
        armSignalFlush();
        EXPECT_EQ(kernelHandler(SIGINT), programHandler);
        EXPECT_EQ(programView(SIGINT), programHandler);
        EXPECT_NE(kernelHandler(SIGTERM), SIG_DFL);
    });
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST(SignalGuard, ASignalLeftAtItsDefaultStillEndsTheProcessByThatSignal) {
    for (int sig : { SIGINT, SIGTERM, SIGHUP }) {
        const int status = inChild([sig] {
            setKernel(sig, SIG_DFL);
            armSignalFlush();
            raise(sig);
            _exit(3); // not reached: the process dies by the signal
        });
        EXPECT_TRUE(WIFSIGNALED(status)) << "status " << status;
        EXPECT_EQ(WTERMSIG(status), sig);
    }
}
