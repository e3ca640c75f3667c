#pragma once
// A file descriptor the agent opened, remembered with the identity (device, inode) of what it
// opened. The program may close any descriptor and get the same number back for a file of its own
// (os.closerange, daemons): the agent reads, writes or closes a descriptor only after checking that
// the number still names its own file.

#include <sys/stat.h>
#include <unistd.h>

namespace tuneup::agent {

struct FdIdentity {
    dev_t dev = 0;
    ino_t ino = 0;
};

// The identity of what `fd` names now; false when it names nothing.
inline bool fdIdentity(int fd, FdIdentity& out) {
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) return false;
    out = { st.st_dev, st.st_ino };
    return true;
}

inline bool sameFile(int fd, const FdIdentity& expected) {
    FdIdentity now;
    return fdIdentity(fd, now) && now.dev == expected.dev && now.ino == expected.ino;
}

class OwnedFd {
public:
    OwnedFd() = default;
    // Takes `fd` just opened by the agent (-1 allowed).
    explicit OwnedFd(int fd) { reset(fd); }
    ~OwnedFd() { closeIfOurs(); }
    OwnedFd(const OwnedFd&) = delete;
    OwnedFd& operator=(const OwnedFd&) = delete;

    // The descriptor when it still names the file the agent opened, else -1 (and forgotten).
    int get() {
        if (m_fd >= 0 && !sameFile(m_fd, m_identity)) m_fd = -1;
        return m_fd;
    }
    // Closes it if it is still ours; a number the program took over is left alone.
    void closeIfOurs() {
        if (get() >= 0) ::close(m_fd);
        m_fd = -1;
    }
    // Closes the one held (if still ours) and takes `fd`, just opened by the agent.
    void reset(int fd) {
        closeIfOurs();
        if (fdIdentity(fd, m_identity)) m_fd = fd;
    }
    // Forgets it without closing (a forked child leaves the parent's descriptors alone).
    void forget() { m_fd = -1; }

private:
    int m_fd = -1;
    FdIdentity m_identity;
};

} // namespace tuneup::agent
