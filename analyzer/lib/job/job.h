#pragma once
// The job core: the one door into analysis for every front end (the CLI's advise, info, export and
// import, the GUI and its compare dialog). It takes files, globs or folders, recognises each file's
// format, finds the files of one run, gives every process its role (common/process_role.h), sets
// helper processes aside with a note, reads the ranks — side by side, or one by one keeping only a
// small summary of each so that a thousand ranks fit — runs the rules and returns the report.

#include "advise/advisor.h"
#include "import/format_detect.h"
#include "process_role.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tuneup::analysis {

// One input file and what it is to its run.
struct JobFile {
    std::string path;
    TraceFileFormat format = TraceFileFormat::Unknown;
    std::optional<ProcessRole> role; // tuneup recordings: what the agent wrote
    std::string aside; // why it is not a rank ("DataLoader worker"); empty for a rank
    std::string label() const; // "run.pid77.db (DataLoader worker)"
};

struct JobProgress {
    std::string phase; // "Reading 8 files"
    size_t filesDone = 0, files = 0;
    uint64_t bytesRead = 0, bytesExpected = 0; // of the traces' text (gzip inflated)
    double fraction() const;
};

/** Thrown by openJob when JobOptions::cancel was set. */
class JobCancelled : public std::runtime_error {
public:
    JobCancelled()
        : std::runtime_error("cancelled") { }
};

struct JobOptions {
    std::function<RuleSet()> builtinRules; // the front end's built-in rules (rules::builtinRules); none if empty
    std::string userRules; // --rules: a folder or file of SQL rules
    std::string stepRange; // --step-range
    bool advise = true; // run the rules (false: only read and analyse the steps)
    // Findings about time under this floor are not raised (advise --min-gain, --min-gain-ms, --all).
    MaterialityFloor materiality;
    // Every rank's events and analysis are kept (the GUI, export, import) unless the job has at least this
    // many rank files: then each is read, advised and dropped, keeping its summary, so that memory grows
    // with the largest rank and the threads, not with the number of ranks.
    size_t streamFromRanks = SIZE_MAX;
    bool withHelperProcesses = false; // also read the set-aside processes' files found beside the ranks (GUI)
    bool acceptSummaries = true; // false: a job summary is an error (export and import need events)
    unsigned threads = 0; // files read side by side; 0: one per core
    std::function<void(const JobProgress&)> progress; // from the reading threads, one call at a time
    const std::atomic<bool>* cancel = nullptr;
};

struct Job {
    std::vector<JobFile> ranks; // the files analysed as ranks, in job order
    std::vector<JobFile> summaries; // job summary files whose ranks were merged in (after `ranks`)
    std::vector<JobFile> helpers; // set aside: helper processes (and, with withHelperProcesses, those beside)
    std::vector<std::string> notes; // for the user: what was set aside and why
    // Unless streamed (JobOptions::streamFromRanks), parallel to `ranks`: the traces and their analyses
    // (which point into them).
    std::vector<TraceModel> models;
    std::vector<RankAnalysis> analyses;
    // With withHelperProcesses, parallel to `helpers`; a file that cannot be read is left out of both.
    std::vector<TraceModel> helperModels;
    RuleSet rules; // built-in, then the user's
    AdviceReport report; // ranks and summaries' ranks, in that order
};

// Expands folders (their trace files), globs and a run's main name given after a distributed recording
// (run.db -> run.rank*.db) into files. Throws std::runtime_error naming an input that matches nothing.
std::vector<std::string> expandJobPaths(const std::vector<std::string>& paths);

// Throws ImportError, TuneupFileError, SummaryFileError, SqlRuleError (all std::runtime_error, saying
// which file, where and what to do) or JobCancelled.
std::unique_ptr<Job> openJob(const std::vector<std::string>& paths, const JobOptions& options);

} // namespace tuneup::analysis
