#include "output_claim.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace tuneup::cli {

std::string OutputClaim::lockPath(const std::string& mainPath) {
    const fs::path path(mainPath);
    return (path.parent_path() / ("." + path.filename().string() + ".lock")).string();
}

std::unique_ptr<OutputClaim> OutputClaim::claim(const std::string& mainPath, std::string& error) {
    const std::string path = lockPath(mainPath);
    // The holder removes the file before it lets go, so a lock taken on a file that is no longer the one
    // at `path` proves nothing: try again on the new one.
    for (int attempt = 0; attempt < 100; ++attempt) {
        const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0) {
            error = "cannot create the lock file " + path + " (" + strerror(errno) + "); choose another -o";
            return nullptr;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            const int why = errno;
            char holder[32] = {};
            const ssize_t n = pread(fd, holder, sizeof holder - 1, 0);
            ::close(fd);
            if (why != EWOULDBLOCK) {
                error = "cannot lock " + path + " (" + strerror(why) + "); choose another -o";
                return nullptr;
            }
            std::string pid = n > 0 ? std::string(holder, size_t(n)) : "";
            while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' '))
                pid.pop_back();
            error = "another tuneup record" + (pid.empty() ? std::string() : " (pid " + pid + ")") + " is recording to "
                + mainPath + " now; wait for it to end or choose another -o";
            return nullptr;
        }
        struct stat held {
        }, current {};
        if (fstat(fd, &held) == 0 && stat(path.c_str(), &current) == 0 && held.st_dev == current.st_dev
            && held.st_ino == current.st_ino) {
            const std::string pid = std::to_string(getpid()) + "\n";
            if (ftruncate(fd, 0) == 0 && pwrite(fd, pid.data(), pid.size(), 0) < 0) {
                // The pid only makes the other launcher's message better: the lock holds without it.
            }
            return std::unique_ptr<OutputClaim>(new OutputClaim(path, fd));
        }
        ::close(fd);
    }
    error = "cannot lock " + path + ": it keeps being replaced; choose another -o";
    return nullptr;
}

OutputClaim::~OutputClaim() {
    unlink(m_path.c_str());
    ::close(m_fd);
}

} // namespace tuneup::cli
