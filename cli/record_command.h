#pragma once
// `tuneup record`: runs a command with the agent injected and says what was recorded.

#include <string>
#include <vector>

namespace tuneup::cli {

struct RecordOptions {
    std::string output = "run.db";
    bool force = false;
    std::string trace = "nvtx,torch,cuda,gemm,conv";
    std::vector<std::string> command;
};

// Checks everything before running anything; returns 2 on a usage or set-up error, else the
// command's exit code (128 + N when signal N ended it).
int runRecord(const RecordOptions& options);

// The files one recording writes beside its main file: run.db -> run.rank3.db, run.pid12.db, ...
struct RecordingFiles {
    std::string mainPath; // absolute; "<stem>.db"
    std::vector<std::string> traces; // existing .db files of the recording (main first, then ranks, pids)
    std::vector<std::string> sidecars; // their -wal, -shm and -journal files
};
RecordingFiles findRecordingFiles(const std::string& output);

} // namespace tuneup::cli
