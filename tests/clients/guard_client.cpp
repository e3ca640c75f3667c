// A program that does what unfriendly or unlucky programs do to an injected agent, for the agent's
// reliability tests (tests/integration/reliability_test.cpp):
//   guard_client close-fds [--reopen N]    ranges, then closes every descriptor above 2 as daemons do;
//                                          with --reopen, opens N files of its own (taking the freed
//                                          numbers), records more ranges while the agent commits, and
//                                          exits 3 if any of its files changed
//   guard_client exec --ranges R [--fail]  R ranges, then execs itself as `after-exec R` (R more ranges);
//                                          --fail first tries an exec that fails, then records R more
//   guard_client after-exec R              (the image after the exec)
//   guard_client fill --fsize BYTES --ranges R
//                                          limits its files to BYTES (RLIMIT_FSIZE, SIGXFSZ left at its
//                                          default), then records R ranges with distinct names
//   guard_client cupti --exit return|exit|sigterm|_exit|fork
//                                          calls InitializeInjection as the CUDA driver does (the agent
//                                          then loads CUPTI: the stand-in, via TUNEUP_CUPTI_PATH), records
//                                          ranges, and ends the way named
// Each mode prints "emitted <ranges>" on stdout (flushed) before its end.

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

long option(int argc, char** argv, const char* name, long fallback) {
    for (int i = 2; i + 1 < argc; ++i)
        if (!strcmp(argv[i], name)) return atol(argv[i + 1]);
    return fallback;
}

const char* textOption(int argc, char** argv, const char* name, const char* fallback) {
    for (int i = 2; i + 1 < argc; ++i)
        if (!strcmp(argv[i], name)) return argv[i + 1];
    return fallback;
}

bool flag(int argc, char** argv, const char* name) {
    for (int i = 2; i < argc; ++i)
        if (!strcmp(argv[i], name)) return true;
    return false;
}

void ranges(long count, const char* name) {
    for (long i = 0; i < count; ++i) {
        nvtxRangePushA(name);
        nvtxRangePop();
    }
}

void emitted(long count) {
    printf("emitted %ld\n", count);
    fflush(stdout);
}

const char kContent[] = "the program's own data, which no one else may touch\n";

int closeFds(int argc, char** argv) {
    const long reopen = option(argc, argv, "--reopen", 0);
    ranges(1000, "before-close");
    // Committed now (the agent's checkpoint call): the closing below falls between two transactions,
    // which the agent gets round without losing anything.
    using Flush = void (*)();
    if (const auto flush = reinterpret_cast<Flush>(dlsym(RTLD_DEFAULT, "tuneup_agent_flush"))) flush();
    for (int fd = 3; fd < 1024; ++fd)
        close(fd);
    // Its own files now take the numbers the agent's descriptors had.
    std::vector<int> mine;
    for (long i = 0; i < reopen; ++i) {
        const std::string path = "mine." + std::to_string(i);
        const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || write(fd, kContent, sizeof kContent - 1) != long(sizeof kContent - 1)) return 4;
        mine.push_back(fd);
    }
    long count = 1000;
    for (int round = 0; round < 10; ++round) { // a second of ranges: several commits
        ranges(100, "after-close");
        count += 100;
        usleep(100'000);
    }
    int changed = 0;
    for (size_t i = 0; i < mine.size(); ++i) {
        char back[256] = {};
        const ssize_t n = pread(mine[i], back, sizeof back, 0);
        if (n != long(sizeof kContent - 1) || memcmp(back, kContent, size_t(n)) != 0) {
            fprintf(stderr, "mine.%zu changed: %zd bytes\n", i, n);
            ++changed;
        }
    }
    emitted(count);
    return changed ? 3 : 0;
}

int execSelf(int argc, char** argv) {
    const long count = option(argc, argv, "--ranges", 500);
    ranges(count, "before-exec");
    long total = count;
    if (flag(argc, argv, "--fail")) {
        char* failing[] = { const_cast<char*>("/nonexistent/program"), nullptr };
        execv(failing[0], failing);
        ranges(count, "after-failed-exec");
        total += count;
    }
    emitted(total);
    const std::string more = std::to_string(count);
    char* next[] = { argv[0], const_cast<char*>("after-exec"), const_cast<char*>(more.c_str()), nullptr };
    execv("/proc/self/exe", next);
    perror("execv");
    return 5;
}

int afterExec(int argc, char** argv) {
    const long count = argc > 2 ? atol(argv[2]) : 0;
    ranges(count, "after-exec");
    emitted(count);
    return 0;
}

int fill(int argc, char** argv) {
    const rlim_t bytes = rlim_t(option(argc, argv, "--fsize", 4 << 20));
    const long count = option(argc, argv, "--ranges", 100000);
    const rlimit limit { bytes, bytes };
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 4;
    // Committed every 2000 ranges (the agent's checkpoint call): the writer never falls behind, so
    // nothing is dropped for full buffers, only for the file.
    using Flush = void (*)();
    const auto flush = reinterpret_cast<Flush>(dlsym(RTLD_DEFAULT, "tuneup_agent_flush"));
    char name[64];
    for (long i = 0; i < count; ++i) { // distinct names: the strings table grows too
        snprintf(name, sizeof name, "range-%ld", i);
        nvtxRangePushA(name);
        nvtxRangePop();
        if (i % 2000 == 1999 && flush) flush();
    }
    emitted(count);
    return 0;
}

int cupti(int argc, char** argv) {
    const std::string how = textOption(argc, argv, "--exit", "return");
    using Init = int (*)();
    const auto init = reinterpret_cast<Init>(dlsym(RTLD_DEFAULT, "InitializeInjection"));
    if (!init) {
        fprintf(stderr, "InitializeInjection not found: is the agent preloaded?\n");
        return 4;
    }
    init(); // what libcuda does in cuInit
    ranges(100, "with-cupti");
    emitted(100);
    if (how == "exit") exit(0);
    if (how == "_exit") _exit(0);
    if (how == "sigterm") raise(SIGTERM);
    if (how == "fork") { // a child that ends as DataLoader workers do, then the parent returns
        const pid_t child = fork();
        if (child == 0) {
            ranges(10, "in-child");
            _exit(0);
        }
        int status = 0;
        waitpid(child, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 6;
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "";
    if (mode == "close-fds") return closeFds(argc, argv);
    if (mode == "exec") return execSelf(argc, argv);
    if (mode == "after-exec") return afterExec(argc, argv);
    if (mode == "fill") return fill(argc, argv);
    if (mode == "cupti") return cupti(argc, argv);
    fprintf(stderr, "usage: guard_client close-fds|exec|fill|cupti [options]\n");
    return 2;
}
