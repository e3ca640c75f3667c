#include "injection.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace tuneup::test {

std::string agentPath() {
    return TUNEUP_TEST_AGENT_PATH;
}
std::string nvtxClientPath() {
    return TUNEUP_TEST_NVTX_CLIENT_PATH;
}

uint64_t monotonicNs() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TempDir::TempDir() {
    const char* root = getenv("TMPDIR");
    std::string pattern = std::string(root && *root ? root : "/tmp") + "/tuneup-injection-XXXXXX";
    if (!mkdtemp(pattern.data())) {
        ADD_FAILURE() << "mkdtemp failed: " << strerror(errno);
        return;
    }
    m_path = pattern;
    std::filesystem::create_directory(out());
}

TempDir::~TempDir() {
    if (m_path.empty()) return;
    if (getenv("TUNEUP_KEEP_TEST_DIRS")) {
        fprintf(stderr, "kept %s\n", m_path.c_str());
        return;
    }
    std::error_code ignored;
    std::filesystem::remove_all(m_path, ignored);
}

std::vector<std::string> TempDir::outEntries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(out()))
        names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::vector<std::string> TempDir::traceFiles() const {
    std::vector<std::string> names;
    for (const std::string& name : outEntries())
        if (name.ends_with(".db")) names.push_back(name);
    return names;
}

namespace {

bool inheritable(const std::string& entry) {
    const std::string name = entry.substr(0, entry.find('='));
    if (name.starts_with("TUNEUP_")) return false;
    for (const char* dropped : { "LD_PRELOAD", "NVTX_INJECTION64_PATH", "CUDA_INJECTION64_PATH", "RANK",
             "OMPI_COMM_WORLD_RANK", "PMI_RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE" })
        if (name == dropped) return false;
    return true;
}

} // namespace

InjectedProcess::InjectedProcess(
    const TempDir& dir, const std::vector<std::string>& argv, const InjectOptions& options, const std::string& label) {
    m_outPath = dir.path() + "/" + label + ".stdout";
    m_errPath = dir.path() + "/" + label + ".stderr";

    // Everything the child needs is built here: between fork and exec it only calls
    // async-signal-safe functions.
    std::map<std::string, std::string> env;
    for (char** e = environ; *e; ++e) {
        const std::string entry = *e;
        if (inheritable(entry)) env[entry.substr(0, entry.find('='))] = entry.substr(entry.find('=') + 1);
    }
    if (options.inject) {
        env["LD_PRELOAD"] = agentPath();
        env["NVTX_INJECTION64_PATH"] = agentPath();
    }
    env["TUNEUP_OUTPUT"] = dir.base();
    for (const auto& [name, value] : options.env) {
        if (value)
            env[name] = *value;
        else
            env.erase(name);
    }
    std::vector<std::string> envStrings;
    envStrings.reserve(env.size());
    for (const auto& [name, value] : env)
        envStrings.push_back(name + "=" + value);
    std::vector<char*> envp;
    envp.reserve(envStrings.size() + 2);
    for (std::string& entry : envStrings)
        envp.push_back(entry.data());
    char mainPid[64] = "TUNEUP_MAIN_PID=";
    if (options.mainPid) envp.push_back(mainPid);
    envp.push_back(nullptr);
    std::vector<std::string> args = argv;
    std::vector<char*> argp;
    argp.reserve(args.size() + 1);
    for (std::string& arg : args)
        argp.push_back(arg.data());
    argp.push_back(nullptr);
    const std::string& cwd = dir.path();

    m_pid = fork();
    if (m_pid < 0) {
        ADD_FAILURE() << "fork failed: " << strerror(errno);
        return;
    }
    if (m_pid == 0) {
        // Dispositions and the mask survive exec: give the program a clean signal state whatever
        // the test runner had (ctest may ignore SIGINT).
        for (int sig : { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE })
            signal(sig, SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        if (options.mainPid) {
            // "TUNEUP_MAIN_PID=" then the pid, without snprintf.
            char digits[16];
            int n = 0;
            for (long pid = long(getpid()); pid > 0; pid /= 10)
                digits[n++] = char('0' + pid % 10);
            char* at = mainPid + strlen("TUNEUP_MAIN_PID=");
            while (n > 0)
                *at++ = digits[--n];
            *at = '\0';
        }
        const int in = open("/dev/null", O_RDONLY);
        const int out = open(m_outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = open(m_errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0
            || chdir(cwd.c_str()) != 0)
            _exit(126);
        execve(argp[0], argp.data(), envp.data());
        _exit(127);
    }
}

InjectedProcess::~InjectedProcess() {
    if (m_pid > 0 && !m_exited) {
        ::kill(m_pid, SIGKILL);
        waitpid(m_pid, &m_status, 0);
    }
}

bool InjectedProcess::wait(std::chrono::milliseconds timeout) {
    if (m_exited || m_pid <= 0) return m_exited;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const pid_t done = waitpid(m_pid, &m_status, WNOHANG);
        if (done == m_pid) {
            m_exited = true;
            return true;
        }
        if (done < 0 && errno != EINTR) {
            ADD_FAILURE() << "waitpid failed: " << strerror(errno);
            return false;
        }
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

int InjectedProcess::exitCode() const {
    return m_exited && WIFEXITED(m_status) ? WEXITSTATUS(m_status) : -1;
}

int InjectedProcess::termSignal() const {
    return m_exited && WIFSIGNALED(m_status) ? WTERMSIG(m_status) : 0;
}

void InjectedProcess::kill(int signal) {
    if (m_pid > 0 && !m_exited) ::kill(m_pid, signal);
}

std::string InjectedProcess::out() const {
    return readFile(m_outPath);
}

std::string InjectedProcess::err() const {
    return readFile(m_errPath);
}

} // namespace tuneup::test
