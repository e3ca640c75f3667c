#include "sqlite_fd_guard.h"

#include "owned_fd.h"

#include <atomic>
#include <cerrno>
#include <cstdarg>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/mman.h>
#include <sys/types.h>

namespace tuneup::agent {

namespace {

// The descriptors SQLite opened, with what they named. Lock-free (no mutex a fork could leave
// held); each entry is claimed, filled, then published by storing its fd.
constexpr int kSlots = 64;
struct Slot {
    std::atomic<bool> claimed { false };
    std::atomic<int> fd { -1 };
    FdIdentity identity;
};
Slot s_slots[kSlots];
// More descriptors than slots (never seen: a connection holds three): unknown ones are let through
// rather than breaking the recording.
std::atomic<bool> s_overflowed { false };

void forget(Slot& slot) {
    slot.fd.store(-1, std::memory_order_release);
    slot.claimed.store(false, std::memory_order_release);
}

void remember(int fd) {
    FdIdentity identity;
    if (!fdIdentity(fd, identity)) return;
    for (Slot& slot : s_slots) // a number SQLite lost to the program and now got back
        if (slot.fd.load(std::memory_order_acquire) == fd) forget(slot);
    for (Slot& slot : s_slots) {
        bool expected = false;
        if (!slot.claimed.compare_exchange_strong(expected, true)) continue;
        slot.identity = identity;
        slot.fd.store(fd, std::memory_order_release);
        return;
    }
    s_overflowed.store(true);
}

Slot* find(int fd) {
    for (Slot& slot : s_slots)
        if (slot.fd.load(std::memory_order_acquire) == fd) return &slot;
    return nullptr;
}

// Whether SQLite may use `fd`; sets errno to EBADF when not.
bool ours(int fd) {
    const Slot* slot = find(fd);
    if (slot ? sameFile(fd, slot->identity) : s_overflowed.load()) return true;
    errno = EBADF;
    return false;
}

// The real calls, as SQLite's VFS had them.
struct Real {
    int (*open)(const char*, int, int);
    int (*close)(int);
    int (*fstat)(int, struct stat*);
    int (*ftruncate)(int, off_t);
    int (*fcntl)(int, int, ...);
    ssize_t (*read)(int, void*, size_t);
    ssize_t (*pread)(int, void*, size_t, off_t);
    ssize_t (*pread64)(int, void*, size_t, off64_t);
    ssize_t (*write)(int, const void*, size_t);
    ssize_t (*pwrite)(int, const void*, size_t, off_t);
    ssize_t (*pwrite64)(int, const void*, size_t, off64_t);
    int (*fchmod)(int, mode_t);
    int (*fallocate)(int, off_t, off_t);
    int (*fchown)(int, uid_t, gid_t);
    void* (*mmap)(void*, size_t, int, int, int, off_t);
} s_real;

int guardedOpen(const char* path, int flags, int mode) {
    const int fd = s_real.open(path, flags, mode);
    if (fd >= 0) remember(fd);
    return fd;
}

int guardedClose(int fd) {
    Slot* slot = find(fd);
    if (!slot) return s_overflowed.load() ? s_real.close(fd) : 0;
    const bool stillOurs = sameFile(fd, slot->identity);
    forget(*slot);
    // A number the program closed, or took over for a file of its own, is not ours to close.
    return stillOurs ? s_real.close(fd) : 0;
}

int guardedFstat(int fd, struct stat* st) {
    return ours(fd) ? s_real.fstat(fd, st) : -1;
}
int guardedFtruncate(int fd, off_t size) {
    return ours(fd) ? s_real.ftruncate(fd, size) : -1;
}
int guardedFcntl(int fd, int op, ...) {
    va_list args;
    va_start(args, op);
    // SQLite passes an int or a pointer (struct flock*); both travel as one register-sized word.
    void* arg = va_arg(args, void*);
    va_end(args);
    return ours(fd) ? s_real.fcntl(fd, op, arg) : -1;
}
ssize_t guardedRead(int fd, void* buffer, size_t size) {
    return ours(fd) ? s_real.read(fd, buffer, size) : -1;
}
ssize_t guardedPread(int fd, void* buffer, size_t size, off_t offset) {
    return ours(fd) ? s_real.pread(fd, buffer, size, offset) : -1;
}
ssize_t guardedPread64(int fd, void* buffer, size_t size, off64_t offset) {
    return ours(fd) ? s_real.pread64(fd, buffer, size, offset) : -1;
}
ssize_t guardedWrite(int fd, const void* buffer, size_t size) {
    return ours(fd) ? s_real.write(fd, buffer, size) : -1;
}
ssize_t guardedPwrite(int fd, const void* buffer, size_t size, off_t offset) {
    return ours(fd) ? s_real.pwrite(fd, buffer, size, offset) : -1;
}
ssize_t guardedPwrite64(int fd, const void* buffer, size_t size, off64_t offset) {
    return ours(fd) ? s_real.pwrite64(fd, buffer, size, offset) : -1;
}
int guardedFchmod(int fd, mode_t mode) {
    return ours(fd) ? s_real.fchmod(fd, mode) : -1;
}
int guardedFallocate(int fd, off_t offset, off_t length) {
    return ours(fd) ? s_real.fallocate(fd, offset, length) : EBADF; // posix_fallocate returns the error
}
int guardedFchown(int fd, uid_t uid, gid_t gid) {
    return ours(fd) ? s_real.fchown(fd, uid, gid) : -1;
}
void* guardedMmap(void* address, size_t size, int protection, int flags, int fd, off_t offset) {
    if (fd >= 0 && !ours(fd)) return MAP_FAILED;
    return s_real.mmap(address, size, protection, flags, fd, offset);
}

template <typename F> void swap(sqlite3_vfs* vfs, const char* name, F& real, F guarded) {
    real = reinterpret_cast<F>(vfs->xGetSystemCall(vfs, name));
    if (real) vfs->xSetSystemCall(vfs, name, reinterpret_cast<sqlite3_syscall_ptr>(guarded));
}

} // namespace

void installSqliteFdGuard() {
    static bool installed = false;
    if (installed) return;
    installed = true;
    sqlite3_vfs* vfs = sqlite3_vfs_find(nullptr);
    if (!vfs || vfs->iVersion < 3 || !vfs->xGetSystemCall || !vfs->xSetSystemCall) return;
    swap(vfs, "open", s_real.open, guardedOpen);
    swap(vfs, "close", s_real.close, guardedClose);
    swap(vfs, "fstat", s_real.fstat, guardedFstat);
    swap(vfs, "ftruncate", s_real.ftruncate, guardedFtruncate);
    swap(vfs, "fcntl", s_real.fcntl, guardedFcntl);
    swap(vfs, "read", s_real.read, guardedRead);
    swap(vfs, "pread", s_real.pread, guardedPread);
    swap(vfs, "pread64", s_real.pread64, guardedPread64);
    swap(vfs, "write", s_real.write, guardedWrite);
    swap(vfs, "pwrite", s_real.pwrite, guardedPwrite);
    swap(vfs, "pwrite64", s_real.pwrite64, guardedPwrite64);
    swap(vfs, "fchmod", s_real.fchmod, guardedFchmod);
    swap(vfs, "fallocate", s_real.fallocate, guardedFallocate);
    swap(vfs, "fchown", s_real.fchown, guardedFchown);
    swap(vfs, "mmap", s_real.mmap, guardedMmap);
}

void forgetSqliteFdsAfterFork() {
    for (Slot& slot : s_slots)
        forget(slot);
    s_overflowed.store(false);
}

bool sqliteFdsIntact() {
    for (const Slot& slot : s_slots) {
        const int fd = slot.fd.load(std::memory_order_acquire);
        if (fd >= 0 && !sameFile(fd, slot.identity)) return false;
    }
    return true;
}

} // namespace tuneup::agent
