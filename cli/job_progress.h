#pragma once
// One progress line on stderr while a job's traces are read ("tuneup: reading 1000 files (312 done):
// 2.1 GB of 6.0 GB"), on a terminal and for inputs that take a while; nothing otherwise.

#include "job/job.h"

#include <chrono>

namespace tuneup::cli {

class JobProgressLine {
public:
    JobProgressLine();
    ~JobProgressLine(); // clears the line
    void update(const analysis::JobProgress& progress);
    void clear();

private:
    bool m_terminal = false, m_shown = false;
    std::chrono::steady_clock::time_point m_start, m_last;
};

} // namespace tuneup::cli
