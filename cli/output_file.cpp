#include "output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

namespace tuneup::cli {

namespace fs = std::filesystem;

namespace {

// Runs `write`; what it throws (a writer that checks its stream) becomes the error, "" when none.
std::string run(const std::function<void(std::ostream&)>& write, std::ostream& out) {
    try {
        write(out);
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

// errno says why a write failed, when the failing call set it; else the likely causes.
std::string why(int error) {
    return error ? strerror(error) : "the stream failed (a full disk or a closed pipe?)";
}

// stdout: it may be a full disk (/dev/full) or a closed pipe; fflush and the stream's state say so.
std::string writeStdout(const std::function<void(std::ostream&)>& write) {
    errno = 0;
    const std::string thrown = run(write, std::cout);
    std::cout.flush();
    const int writeError = errno; // from a write(2) that failed on the way, if one did
    errno = 0;
    const bool flushed = fflush(stdout) == 0;
    const int flushError = errno;
    if (!flushed || !std::cout || ferror(stdout))
        return "cannot write to stdout: " + why(flushError ? flushError : writeError);
    return thrown.empty() ? "" : "cannot write to stdout: " + thrown;
}

// A device or a FIFO named with -o (/dev/null, /dev/stdout, a pipe): written in place, nothing to rename.
std::string writeInPlace(const std::string& path, const std::function<void(std::ostream&)>& write) {
    std::ofstream file(path, std::ios::binary);
    if (!file) return "cannot write " + path + ": " + strerror(errno);
    errno = 0;
    const std::string thrown = run(write, file);
    file.flush();
    const int error = errno;
    if (!file) return "cannot write " + path + ": " + why(error);
    if (!thrown.empty()) return "cannot write " + path + ": " + thrown;
    file.close();
    if (!file) return "cannot write " + path + ": closing it failed";
    return {};
}

// Makes what was written durable before the rename publishes it: a full disk or a lost connection to
// an NFS server may only show here. File systems that cannot sync (EINVAL) are taken at their word.
std::string syncFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return strerror(errno);
    const int rc = ::fsync(fd);
    const int error = errno;
    ::close(fd);
    return rc != 0 && error != EINVAL && error != EROFS ? strerror(error) : "";
}

} // namespace

std::string writeOutput(const std::string& path, const std::function<void(std::ostream&)>& write) {
    if (path.empty() || path == "-") return writeStdout(write);
    struct stat st { };
    if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return writeInPlace(path, write);
    const std::string partial = path + ".partial";
    std::error_code ec;
    {
        std::ofstream file(partial, std::ios::binary | std::ios::trunc);
        if (!file) return "cannot write " + partial + ": " + strerror(errno);
        errno = 0;
        const std::string thrown = run(write, file);
        file.flush();
        const int error = errno;
        if (!file || !thrown.empty()) {
            file.close();
            fs::remove(partial, ec);
            return "cannot write " + path + ": " + (!file ? why(error) : thrown) + "; nothing was written";
        }
        file.close();
        if (!file) {
            fs::remove(partial, ec);
            return "cannot write " + path + ": closing it failed (disk full?); nothing was written";
        }
    }
    if (const std::string error = syncFile(partial); !error.empty()) {
        fs::remove(partial, ec);
        return "cannot write " + path + ": " + error + " (disk full?); nothing was written";
    }
    fs::rename(partial, path, ec);
    if (ec) {
        fs::remove(partial, ec);
        return "cannot write " + path + ": " + ec.message();
    }
    return {};
}

std::string checkStdout() {
    errno = 0;
    const bool flushed = fflush(stdout) == 0;
    const int error = errno;
    if (flushed && std::cout && !ferror(stdout)) return {};
    return "cannot write to stdout: " + why(flushed ? 0 : error);
}

} // namespace tuneup::cli
