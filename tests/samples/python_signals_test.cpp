// Python under the agent keeps what it does with signals and descriptors (python3-torch, Debian's CPU
// build): its SIGINT handler and KeyboardInterrupt, the handlers it saves and restores, a DataLoader
// whose workers come from a forkserver (which saves and restores handlers that way), and a program that
// closes every inherited descriptor. Each program runs under `tuneup record`, as a user runs it.

#include "sqlite_query.h"
#include "temp_dir.h"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using tuneup::test::readFile;

namespace {

class PythonSignalsTest : public ::testing::Test {
protected:
    // Starts `tuneup record -o DIR/NAME.db -- python3 SCRIPT` (the script written to a file first).
    pid_t start(const std::string& name, const std::string& script) {
        const std::string scriptPath = m_dir + "/" + name + ".py";
        std::ofstream(scriptPath) << script;
        const std::string out = m_dir + "/" + name + ".out", err = m_dir + "/" + name + ".err";
        std::vector<std::string> args { TUNEUP_BINARY, "record", "-o", db(name), "--", TUNEUP_PYTHON, scriptPath };
        const pid_t pid = fork();
        if (pid == 0) {
            // ctest may start us with SIGINT ignored, which Python would keep: the default, as in a shell.
            signal(SIGINT, SIG_DFL);
            const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 || chdir(m_dir.c_str()) != 0) _exit(126);
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

    // Waits for the launcher (bounded); its exit code, or -1 if it had to be killed.
    int finish(pid_t pid, std::chrono::seconds limit = 240s) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        int status = 0;
        while (waitpid(pid, &status, WNOHANG) == 0) {
            if (std::chrono::steady_clock::now() > deadline) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
                ADD_FAILURE() << "still running after " << limit.count() << " s";
                return -1;
            }
            std::this_thread::sleep_for(20ms);
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    int record(const std::string& name, const std::string& script) { return finish(start(name, script)); }

    bool waitForFile(const std::string& path) {
        for (int i = 0; i < 6000 && !fs::exists(path); ++i)
            std::this_thread::sleep_for(20ms);
        return fs::exists(path);
    }

    std::string db(const std::string& name) const { return m_dir + "/" + name + ".db"; }
    std::string out(const std::string& name) const { return readFile(m_dir + "/" + name + ".out"); }
    std::string err(const std::string& name) const { return readFile(m_dir + "/" + name + ".err"); }

    tuneup::test::TempDir m_tmp { "tuneup_python_signals" };
    std::string m_dir = m_tmp.path();
};

// Waits in a sleep for SIGINT; KeyboardInterrupt's handler and the finally block each say they ran.
const char* kInterruptible = R"(import os, time
open("ready.tmp", "w").write(str(os.getpid()))
os.rename("ready.tmp", "ready")
try:
    time.sleep(120)
    print("not interrupted")
except KeyboardInterrupt:
    print("caught KeyboardInterrupt", flush=True)
finally:
    print("finally ran", flush=True)
)";

} // namespace

TEST_F(PythonSignalsTest, PythonSeesAndRestoresItsOwnHandlers) {
    const char* script = R"(import signal
assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, signal.getsignal(signal.SIGINT)
assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, signal.getsignal(signal.SIGTERM)
assert signal.getsignal(signal.SIGHUP) == signal.SIG_DFL, signal.getsignal(signal.SIGHUP)
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    old = signal.signal(sig, lambda *args: None)
    signal.signal(sig, old)
    assert signal.getsignal(sig) == old, (sig, signal.getsignal(sig))
print("ok")
)";
    EXPECT_EQ(record("handlers", script), 0) << err("handlers");
    EXPECT_EQ(out("handlers"), "ok\n") << err("handlers");
}

TEST_F(PythonSignalsTest, InterruptingThePythonProcessRunsExceptAndFinally) {
    const pid_t launcher = start("interrupt", kInterruptible);
    ASSERT_TRUE(waitForFile(m_dir + "/ready")) << err("interrupt");
    const pid_t python = std::stoi(readFile(m_dir + "/ready"));
    kill(python, SIGINT); // as Ctrl-C does to the program
    EXPECT_EQ(finish(launcher), 0) << err("interrupt");
    EXPECT_EQ(out("interrupt"), "caught KeyboardInterrupt\nfinally ran\n") << err("interrupt");
    tuneup::test::SqliteQuery q(db("interrupt"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_TRUE(q.meta("end_ns")) << "a normal exit finishes the file";
}

TEST_F(PythonSignalsTest, InterruptingTheLauncherReachesThePythonProcessOnce) {
    // A scheduler, or Python's Popen.send_signal, signals `tuneup record` itself.
    const pid_t launcher = start("forwarded", kInterruptible);
    ASSERT_TRUE(waitForFile(m_dir + "/ready")) << err("forwarded");
    kill(launcher, SIGINT);
    EXPECT_EQ(finish(launcher), 0) << err("forwarded");
    EXPECT_EQ(out("forwarded"), "caught KeyboardInterrupt\nfinally ran\n") << err("forwarded");
}

TEST_F(PythonSignalsTest, ADataLoaderWithForkserverWorkersWorks) {
    // The forkserver saves the handlers it finds and restores them in each worker: with SIGINT's
    // handler unknown to Python (None) the restore raised TypeError and every worker died.
    const char* script = R"(import torch
from torch.utils.data import DataLoader, TensorDataset
if __name__ == "__main__":
    data = TensorDataset(torch.arange(64, dtype=torch.float32))
    loader = DataLoader(data, batch_size=8, num_workers=2, multiprocessing_context="forkserver")
    print("sum", int(sum(batch[0].sum().item() for batch in loader)))
)";
    EXPECT_EQ(record("forkserver", script), 0) << err("forkserver");
    EXPECT_EQ(out("forkserver"), "sum 2016\n") << err("forkserver");
    tuneup::test::SqliteQuery q(db("forkserver"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_TRUE(q.meta("end_ns"));
}

TEST_F(PythonSignalsTest, AProgramThatClosesItsDescriptorsExitsWithItsFileWhole) {
    const auto before = std::chrono::steady_clock::now();
    EXPECT_EQ(record("closerange", "import os\nos.closerange(3, 1024)\n"), 0) << err("closerange");
    EXPECT_LT(std::chrono::steady_clock::now() - before, 60s) << "it hung at exit before the fix";
    tuneup::test::SqliteQuery q(db("closerange"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(q.text("PRAGMA quick_check"), "ok");
    EXPECT_TRUE(q.meta("end_ns"));
}
