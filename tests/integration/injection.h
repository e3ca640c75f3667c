#pragma once
// Runs a real program with the agent injected, in a fresh temporary directory, the way
// `tuneup record` does: LD_PRELOAD and NVTX_INJECTION64_PATH point at the agent, TUNEUP_OUTPUT at
// <dir>/out/run.db and TUNEUP_MAIN_PID at the program's own pid (set in the child between fork and
// exec). Nothing of the test's own environment leaks in (TUNEUP_*, RANK, injection variables).

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace tuneup::test {

// The agent and test client built with the tests (set by CMake).
std::string agentPath();
std::string nvtxClientPath();

// CLOCK_MONOTONIC in nanoseconds: the agent's clock.
uint64_t monotonicNs();

std::string readFile(const std::string& path);

/** A directory removed at the end of the test (kept when TUNEUP_KEEP_TEST_DIRS is set). */
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const std::string& path() const { return m_path; }
    // Where the agent writes: TUNEUP_OUTPUT is out() + "/run.db".
    std::string out() const { return m_path + "/out"; }
    std::string base() const { return out() + "/run.db"; }
    // Names of the *.db files in out(), sorted (no -wal/-shm).
    std::vector<std::string> traceFiles() const;
    // Every entry in out().
    std::vector<std::string> outEntries() const;

private:
    std::string m_path;
};

struct InjectOptions {
    bool inject = true; // LD_PRELOAD and NVTX_INJECTION64_PATH
    bool mainPid = true; // TUNEUP_MAIN_PID = the program's pid
    // Extra variables; nullopt removes one.
    std::map<std::string, std::optional<std::string>> env;
};

/** A program started in a TempDir; killed (SIGKILL) and reaped if still running at destruction. */
class InjectedProcess {
public:
    // `argv[0]` must be an absolute path. stdout and stderr go to files in the directory;
    // the run's label tells them apart when one test runs several programs.
    InjectedProcess(const TempDir& dir, const std::vector<std::string>& argv, const InjectOptions& options = {},
        const std::string& label = "run");
    ~InjectedProcess();
    InjectedProcess(const InjectedProcess&) = delete;
    InjectedProcess& operator=(const InjectedProcess&) = delete;

    pid_t pid() const { return m_pid; }
    // Waits for the exit; false (and the process still running) after `timeout`.
    bool wait(std::chrono::milliseconds timeout);
    bool exited() const { return m_exited; }
    int rawStatus() const { return m_status; }
    // Exit code when it exited normally, else -1.
    int exitCode() const;
    // The signal that ended it, else 0.
    int termSignal() const;
    void kill(int signal);

    std::string out() const;
    std::string err() const;

private:
    pid_t m_pid = -1;
    bool m_exited = false;
    int m_status = 0;
    std::string m_outPath, m_errPath;
};

} // namespace tuneup::test
