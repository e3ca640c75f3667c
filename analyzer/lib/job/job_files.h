#pragma once
// Which files make a job, and what each process was: the job core's reading of a run's files
// before any event is imported (job.h is the public door).

#include "job/job.h"

#include <string>
#include <vector>

namespace tuneup::analysis {

// The file with its format and, for tuneup recordings, the role the agent wrote and why it is set
// aside (a helper process: DataLoader worker, launcher, a child without GPU work). Files that cannot be
// read are left for the import to report.
JobFile classifyJobFile(const std::string& path);

// Sets helpers aside (into `helpers`) unless every file is one, and says which in `notes`.
void setHelpersAside(std::vector<JobFile>& files, std::vector<JobFile>& helpers, std::vector<std::string>& notes);

// The other processes recorded beside a recording's file (run.db: run.pid<N>.db; run.rank3.db:
// run.rank3.pid<N>.db), classified; empty for files that are not tuneup recordings.
std::vector<JobFile> processesBeside(const JobFile& file);

// The bytes an importer will read from a file, for progress: its size, or for gzip the uncompressed
// size its trailer records (modulo 4 GiB, so never less than the file itself).
uint64_t expectedTraceBytes(const std::string& path);

} // namespace tuneup::analysis
