#pragma once
// One `tuneup record` at a time per output: two recordings started with the same -o would otherwise
// delete (--force) or list each other's files as their own. The claim is an flock on a lock file
// beside the output (".run.db.lock"), so it ends with the process however it ends, never goes stale.

#include <memory>
#include <string>

namespace tuneup::cli {

class OutputClaim {
public:
    // Claims `mainPath` ("/runs/run.db"); nullptr with `error` set when another live process holds it
    // ("another tuneup record (pid 4242) is recording to /runs/run.db") or the lock cannot be made.
    static std::unique_ptr<OutputClaim> claim(const std::string& mainPath, std::string& error);
    ~OutputClaim(); // removes the lock file, then lets go
    OutputClaim(const OutputClaim&) = delete;
    OutputClaim& operator=(const OutputClaim&) = delete;

    static std::string lockPath(const std::string& mainPath);

private:
    OutputClaim(std::string path, int fd)
        : m_path(std::move(path))
        , m_fd(fd) { }
    std::string m_path;
    int m_fd;
};

} // namespace tuneup::cli
