#pragma once
// Space held back on the trace file's filesystem for the file's final record. When the disk fills
// up, the writer stops writing events; giving this space back lets it still write the file's end
// (the stats that say what was lost, the end time), so the file says what happened instead of
// looking like a killed process's.
//
// The space is an unnamed file (O_TMPFILE) in the trace's directory: nothing to clean up, freed
// when the process ends. Filesystems without O_TMPFILE or fallocate (some network ones) get none.

#include "owned_fd.h"

#include <cstddef>
#include <string>

namespace tuneup::agent {

class DiskReserve {
public:
    // Holds `bytes` in `directory`; false where the filesystem cannot (or already too full).
    bool hold(const std::string& directory, size_t bytes);
    // Gives the space back (truncating, so a forked child's copy of the descriptor does not keep it).
    void release();
    // In a forked child: closes the child's copy only; the parent's reserve stays.
    void dropCopyAfterFork() { m_fd.closeIfOurs(); }

private:
    OwnedFd m_fd;
};

// With a per-file size limit (RLIMIT_FSIZE, `ulimit -f`) the space held back does not help: the final
// record must fit under the limit. Returns why the trace (`path` or its WAL) is within `headroom` of
// the limit, or "" when it is not (or there is no limit). Two stat calls.
std::string fileSizeLimitNear(const std::string& path, size_t headroom);

} // namespace tuneup::agent
