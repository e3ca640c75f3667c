#include "job/job.h"

#include "advise/sql_rule.h"
#include "import/import_many.h"
#include "import/importer.h"
#include "job/job_files.h"
#include "job/summary_file.h"

#include <algorithm>
#include <filesystem>
#include <mutex>

namespace tuneup::analysis {

namespace fs = std::filesystem;

double JobProgress::fraction() const {
    if (bytesExpected > 0) return std::min(1.0, double(bytesRead) / double(bytesExpected));
    return files ? double(filesDone) / double(files) : 0.0;
}

namespace {

RuleSet loadRules(const JobOptions& options) {
    RuleSet rules = options.builtinRules ? options.builtinRules() : RuleSet {};
    if (!options.userRules.empty())
        for (auto& rule : loadSqlRules(options.userRules, rules))
            rules.push_back(std::move(rule));
    return rules;
}

void checkCancel(const JobOptions& options) {
    if (options.cancel && options.cancel->load()) throw JobCancelled();
}

// The DataLoader workers recorded beside a rank's tuneup file (run.pid<N>.db whose parent is the rank's
// process): dataloader-stall weighs what they did against the main thread's waits. One that cannot be read
// is left out with a note.
std::vector<LoaderWorker> readLoaderWorkers(
    const JobFile& rank, const TraceModel& model, std::vector<std::string>& notes) {
    std::vector<LoaderWorker> workers;
    const std::string pid = model.info.metadataValue("pid");
    for (const JobFile& other : processesBeside(rank)) {
        if (other.role != ProcessRole::DataLoaderWorker) continue;
        try {
            LoaderWorker worker = loaderWorkerActivity(importTrace(other.path));
            if (pid.empty() || std::to_string(worker.parentPid) == pid) workers.push_back(std::move(worker));
        } catch (const std::exception& e) {
            notes.push_back("DataLoader worker left out of dataloader-stall: " + std::string(e.what()));
        }
    }
    return workers;
}

// Reads the ranks side by side; each is advised as soon as it is read, and its events are kept or
// dropped as the options say.
void readRanks(Job& job, std::vector<RankSummary>& summaries, std::vector<std::vector<RuleOutcome>>& outcomes,
    size_t jobRanks, const JobOptions& options) {
    std::vector<std::string> paths;
    for (const JobFile& f : job.ranks)
        paths.push_back(f.path);
    const size_t n = paths.size();
    summaries.resize(n);
    outcomes.resize(n);
    const bool keepModels = n < options.streamFromRanks;
    if (keepModels) {
        job.models.resize(n);
        job.analyses.resize(n);
    }
    JobProgress progress;
    progress.phase
        = n == 1 ? "Reading " + fs::path(paths.front()).filename().string() : "Reading " + std::to_string(n) + " files";
    progress.files = n;
    for (const std::string& p : paths)
        progress.bytesExpected += expectedTraceBytes(p);

    static const RuleSet kNoRules;
    const RuleSet& rules = options.advise ? job.rules : kNoRules;
    std::vector<std::vector<std::string>> notes(n); // per rank, so that they keep the job's order
    AdviseOptions adviseOptions;
    adviseOptions.stepRange = options.stepRange;
    ImportManyOptions importOptions;
    importOptions.threads = options.threads;
    importOptions.progress = [&](size_t done, uint64_t bytes) {
        checkCancel(options);
        progress.filesDone = done;
        progress.bytesRead = bytes;
        if (options.progress) options.progress(progress);
    };
    forEachTrace(
        paths,
        [&](size_t i, TraceModel&& read) {
            checkCancel(options);
            TraceModel local;
            TraceModel& model = keepModels ? job.models[i] : local;
            model = std::move(read);
            std::vector<LoaderWorker> workers;
            if (options.advise && job.ranks[i].format == TraceFileFormat::TuneupDb)
                workers = readLoaderWorkers(job.ranks[i], model, notes[i]);
            RankAdvice advice = adviseRank(model, int(i), jobRanks, rules, adviseOptions, std::move(workers));
            summaries[i] = std::move(advice.summary);
            outcomes[i] = std::move(advice.outcomes);
            if (keepModels) job.analyses[i] = std::move(advice.analysis);
        },
        importOptions);
    for (std::vector<std::string>& rankNotes : notes)
        job.notes.insert(job.notes.end(), rankNotes.begin(), rankNotes.end());
}

// Helpers' files for the GUI's timeline: one that cannot be read (a worker killed mid-write) must not
// stop the job from opening; it is left out with a note.
void readHelpers(Job& job, const JobOptions& options) {
    std::vector<JobFile> kept;
    for (JobFile& helper : job.helpers) {
        checkCancel(options);
        try {
            job.helperModels.push_back(importTrace(helper.path));
            kept.push_back(std::move(helper));
        } catch (const std::exception& e) {
            job.notes.push_back(std::string("left out: ") + e.what());
        }
    }
    job.helpers = std::move(kept);
}

} // namespace

std::unique_ptr<Job> openJob(const std::vector<std::string>& paths, const JobOptions& options) {
    if (paths.empty()) throw std::runtime_error("no file to open");
    auto job = std::make_unique<Job>();
    std::vector<JobFile> files;
    for (const std::string& path : expandJobPaths(paths)) {
        JobFile file = classifyJobFile(path);
        if (file.format == TraceFileFormat::JobSummary && !options.acceptSummaries)
            importTrace(path); // throws: says what a summary is for
        (file.format == TraceFileFormat::JobSummary ? job->summaries : files).push_back(std::move(file));
    }
    setHelpersAside(files, job->helpers, job->notes);
    job->ranks = std::move(files);
    if (options.withHelperProcesses)
        for (const JobFile& rank : job->ranks)
            for (JobFile& other : processesBeside(rank))
                if (std::none_of(job->helpers.begin(), job->helpers.end(),
                        [&](const JobFile& h) { return h.path == other.path; })) {
                    if (other.aside.empty()) other.aside = other.role ? std::string(processRoleLabel(*other.role)) : "";
                    job->helpers.push_back(std::move(other));
                }
    if (options.advise) job->rules = loadRules(options);

    std::vector<SummarizedRank> merged;
    for (const JobFile& summary : job->summaries) {
        checkCancel(options);
        for (SummarizedRank& rank : readJobSummary(summary.path))
            merged.push_back(std::move(rank));
    }
    const size_t jobRanks = job->ranks.size() + merged.size();
    std::vector<RankSummary> summaries;
    std::vector<std::vector<RuleOutcome>> outcomes;
    if (!job->ranks.empty()) readRanks(*job, summaries, outcomes, jobRanks, options);
    for (SummarizedRank& rank : merged) {
        summaries.push_back(std::move(rank.summary));
        outcomes.push_back(std::move(rank.outcomes));
    }
    if (options.withHelperProcesses) readHelpers(*job, options);
    checkCancel(options);
    static const RuleSet kNoRules;
    job->report = finishAdvice(std::move(summaries), std::move(outcomes), options.advise ? job->rules : kNoRules);
    job->report.findingsBelowFloor = applyMaterialityFloor(job->report.outcomes, options.materiality);
    job->report.floor = options.materiality;
    return job;
}

} // namespace tuneup::analysis
