#include "disk_reserve.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tuneup::agent {

bool DiskReserve::hold(const std::string& directory, size_t bytes) {
    release();
    // Never grow a file past RLIMIT_FSIZE: the writer blocks SIGXFSZ, but the reserve would fail anyway.
    if (rlimit limit {};
        getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < bytes)
        return false;
    const int fd = ::open(directory.empty() ? "." : directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    // fallocate, not posix_fallocate: where the filesystem cannot allocate without writing, hold nothing.
    if (fallocate(fd, 0, 0, off_t(bytes)) != 0) {
        ::close(fd);
        return false;
    }
    m_fd.reset(fd);
    return true;
}

void DiskReserve::release() {
    if (const int fd = m_fd.get(); fd >= 0) {
        const int ignored = ftruncate(fd, 0);
        (void)ignored;
    }
    m_fd.closeIfOurs();
}

std::string fileSizeLimitNear(const std::string& path, size_t headroom) {
    rlimit limit {};
    if (getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return "";
    for (const std::string& file : { path, path + "-wal" }) {
        struct stat st;
        if (stat(file.c_str(), &st) == 0 && uint64_t(st.st_size) + headroom > uint64_t(limit.rlim_cur))
            return "the file size limit (RLIMIT_FSIZE = " + std::to_string(uint64_t(limit.rlim_cur))
                + " bytes) is reached";
    }
    return "";
}

} // namespace tuneup::agent
