#pragma once
// Runs a program as a user would, and collects its exit code and output.

#include "temp_dir.h"

#include <cerrno>
#include <fcntl.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace tuneup::test {

struct ProgramResult {
    int code = -1; // the exit status; 1000 + the signal for a program killed by one
    std::string out, err;
};

// Runs `binary` with `args`; its stdout and stderr go through files in a folder of its own, so that
// output of any size comes back whole.
inline ProgramResult runProgram(const std::string& binary, const std::vector<std::string>& args) {
    const TempDir dir("tuneup_program");
    const std::string outPath = dir.path() + "/stdout", errPath = dir.path() + "/stderr";
    const pid_t pid = fork();
    if (pid == 0) {
        const int out = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || err < 0) _exit(98);
        dup2(out, 1);
        dup2(err, 2);
        std::vector<char*> argv { const_cast<char*>(binary.c_str()) };
        for (const std::string& arg : args)
            argv.push_back(const_cast<char*>(arg.c_str()));
        argv.push_back(nullptr);
        execv(binary.c_str(), argv.data());
        _exit(99);
    }
    ProgramResult result;
    if (pid < 0) return result;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
    result.out = readFile(outPath);
    result.err = readFile(errPath);
    return result;
}

} // namespace tuneup::test
