// `tuneup record` and signals, with real processes: a signal sent to tuneup alone (kill, a scheduler,
// Python's send_signal) reaches the command once; one the terminal sends to the whole foreground group
// (Ctrl-C) is not passed on a second time; a killed tuneup tells the command to stop (PR_SET_PDEATHSIG).
// The command is tests/clients/signal_client, which logs each signal with its sender.

#include "temp_dir.h"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <termios.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using tuneup::test::readFile;

namespace {

class RecordSignalsTest : public ::testing::Test {
protected:
    std::string path(const std::string& name) const { return m_tmp.path() + "/" + name; }

    std::vector<std::string> command() const {
        return { TUNEUP_BINARY, "record", "-o", path("run.db"), "--", TUNEUP_SIGNAL_CLIENT, path("signals"),
            path("ready") };
    }

    // Starts tuneup; `terminal`: as the session leader of a new session whose controlling terminal is
    // the slave of `terminal` (a pseudo-terminal), as in a terminal window.
    pid_t start(int terminal = -1) {
        std::vector<std::string> args = command();
        const std::string err = path("tuneup.err"), slave = terminal >= 0 ? ptsname(terminal) : "";
        const pid_t pid = fork();
        if (pid == 0) {
            for (int sig : { SIGINT, SIGQUIT, SIGTERM, SIGHUP })
                signal(sig, SIG_DFL);
            if (terminal >= 0) {
                setsid();
                const int tty = open(slave.c_str(), O_RDWR); // the first terminal a session leader opens
                if (tty < 0 || dup2(tty, 0) < 0) _exit(125);
            }
            const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (e < 0 || dup2(e, 2) < 0) _exit(126);
            std::vector<char*> argv;
            argv.reserve(args.size() + 1);
            for (std::string& arg : args)
                argv.push_back(arg.data());
            argv.push_back(nullptr);
            execv(argv[0], argv.data());
            _exit(127);
        }
        return pid;
    }

    int finish(pid_t pid) {
        int status = 0;
        for (int i = 0; i < 6000 && waitpid(pid, &status, WNOHANG) == 0; ++i)
            std::this_thread::sleep_for(10ms);
        if (waitpid(pid, &status, WNOHANG) == 0) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            ADD_FAILURE() << "tuneup still running after 60 s";
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    bool waitFor(const std::string& file, const std::string& content = "") {
        for (int i = 0; i < 3000; ++i) {
            if (fs::exists(file) && readFile(file).find(content) != std::string::npos) return true;
            std::this_thread::sleep_for(10ms);
        }
        return false;
    }

    // The signals the command got: "<name> <si_code> <sender>" lines.
    std::vector<std::string> received() const {
        std::vector<std::string> lines;
        std::istringstream log(readFile(path("signals")));
        for (std::string line; std::getline(log, line);)
            lines.push_back(line);
        return lines;
    }

    tuneup::test::TempDir m_tmp { "tuneup_record_signals" };
};

class ForwardedSignalTest : public RecordSignalsTest, public ::testing::WithParamInterface<int> { };

} // namespace

TEST_P(ForwardedSignalTest, ASignalSentToTuneupAloneReachesTheCommandOnce) {
    const int sig = GetParam();
    const pid_t tuneup = start();
    ASSERT_TRUE(waitFor(path("ready"))) << readFile(path("tuneup.err"));
    kill(tuneup, sig);
    EXPECT_EQ(finish(tuneup), 0) << "the command exits 0 once it got a signal\n" << readFile(path("tuneup.err"));
    const char* name = sig == SIGINT ? "INT" : sig == SIGQUIT ? "QUIT" : sig == SIGTERM ? "TERM" : "HUP";
    EXPECT_EQ(received(),
        (std::vector<std::string> { std::string(name) + " " + std::to_string(SI_USER) + " " + std::to_string(tuneup) }))
        << "sent on by tuneup with kill()";
}

INSTANTIATE_TEST_SUITE_P(Record, ForwardedSignalTest, ::testing::Values(SIGINT, SIGQUIT, SIGTERM, SIGHUP),
    [](const ::testing::TestParamInfo<int>& p) { return std::string(sigabbrev_np(p.param)); });

TEST_F(RecordSignalsTest, CtrlCInATerminalReachesTheCommandFromTheTerminalOnly) {
    const int terminal = posix_openpt(O_RDWR | O_NOCTTY);
    ASSERT_GE(terminal, 0);
    ASSERT_EQ(grantpt(terminal), 0);
    ASSERT_EQ(unlockpt(terminal), 0);
    const pid_t tuneup = start(terminal);
    ASSERT_TRUE(waitFor(path("ready"))) << readFile(path("tuneup.err"));
    ASSERT_EQ(write(terminal, "\x03", 1), 1); // Ctrl-C: SIGINT to the foreground process group
    EXPECT_EQ(finish(tuneup), 0) << readFile(path("tuneup.err"));
    const std::vector<std::string> lines = received();
    ASSERT_FALSE(lines.empty()) << "the terminal's SIGINT never came";
    EXPECT_EQ(lines.front(), "INT " + std::to_string(SI_KERNEL) + " 0") << "from the terminal driver";
    for (const std::string& line : lines)
        EXPECT_EQ(line.find(" " + std::to_string(tuneup)), std::string::npos) << "tuneup passed it on again: " << line;
    close(terminal);
}

TEST_F(RecordSignalsTest, AKilledTuneupTellsTheCommandToStop) {
    const pid_t tuneup = start();
    ASSERT_TRUE(waitFor(path("ready"))) << readFile(path("tuneup.err"));
    kill(tuneup, SIGKILL);
    EXPECT_EQ(finish(tuneup), 128 + SIGKILL);
    // PR_SET_PDEATHSIG: the kernel sends SIGTERM (si_code SI_USER, from the dying parent's pid).
    EXPECT_TRUE(waitFor(path("signals"), "TERM ")) << "the command runs on, orphaned";
}
