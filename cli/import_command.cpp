// `tuneup import IN -o OUT.db [--force]`: any trace tuneup reads (Kineto JSON, Nsight Systems SQLite, a
// tuneup file) written as a tuneup file, which the GUI and sqlite3 users open.

#include "export/tuneup_writer.h"
#include "import/format_detect.h"
#include "import/tuneup_file.h"
#include "job/job.h"
#include "job_progress.h"
#include "subcommand.h"
#include "units.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace tuneup::cli {

using namespace analysis;
namespace fs = std::filesystem;

namespace {

struct ImportOptions {
    std::string input;
    std::string output;
    bool force = false; // replace an existing tuneup file (never another kind of file)
};

int importUsageError(const std::string& message) {
    fprintf(stderr, "tuneup import: %s\n", message.c_str());
    return kUsageError;
}

// --force replaces a tuneup file (readable or not: its header says so) or an empty file, never anything
// else: somebody's database, an nsys export, a JSON trace, a damaged file of unknown kind.
bool replaceable(const std::string& path) {
    struct stat st { };
    if (stat(path.c_str(), &st) == 0 && st.st_size == 0) return true;
    try {
        if (detectFileFormat(path) == TraceFileFormat::TuneupDb) return true;
        TuneupFile::open(path); // ours by its meta table, though its header lacks the application id
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

// "18 kernels, 3 copies, ..." for the tables with rows.
std::string tableCounts(const std::vector<std::pair<size_t, const char*>>& counts) {
    std::string text;
    for (const auto& [rows, what] : counts)
        if (rows > 0) text += (text.empty() ? "" : ", ") + groupedInteger(int64_t(rows)) + " " + what;
    return text;
}

int runImport(const ImportOptions& options) {
    // The output is checked before a long import, not after.
    if (options.output.empty() || options.output == "-")
        return importUsageError(
            "name the tuneup file to write with -o, e.g. tuneup import " + options.input + " -o run.db");
    std::error_code ec;
    const fs::path output = fs::absolute(options.output, ec).lexically_normal();
    const fs::path directory = output.parent_path();
    if (!fs::is_directory(directory, ec))
        return importUsageError(
            "the output directory " + directory.string() + " does not exist; create it or choose another -o");
    if (access(directory.c_str(), W_OK) != 0)
        return importUsageError(
            "cannot write in " + directory.string() + " (" + strerror(errno) + "); choose another -o");
    if (fs::is_directory(output, ec))
        return importUsageError(
            "-o " + options.output + " is a directory; name a file, e.g. -o " + (output / "run.db").string());
    if (fs::exists(options.input, ec) && fs::exists(output, ec) && fs::equivalent(options.input, output, ec))
        return importUsageError("the input and the output are the same file; choose another -o");
    std::vector<std::string> existing;
    for (const char* suffix : { "", "-wal", "-shm", "-journal" })
        if (fs::exists(output.string() + suffix, ec)) existing.push_back(output.string() + suffix);
    if (!existing.empty()) {
        if (fs::exists(output, ec) && !replaceable(output.string()))
            return importUsageError(output.string()
                + " exists and is not a tuneup trace, so tuneup will not replace it, "
                  "even with --force; move it away or choose another -o");
        if (!options.force)
            return importUsageError(existing.front() + " exists; add --force to replace it, or choose another -o");
    }

    std::unique_ptr<Job> job;
    JobProgressLine progress;
    try {
        JobOptions jobOptions;
        jobOptions.advise = false;
        jobOptions.progress = [&progress](const JobProgress& p) { progress.update(p); };
        jobOptions.acceptSummaries = false;
        job = openJob({ options.input }, jobOptions);
        if (job->models.size() != 1)
            throw std::runtime_error(options.input + ": import writes one trace at a time; it names "
                + std::to_string(job->models.size()) + " (import each file on its own)");
    } catch (const std::exception& e) {
        progress.clear();
        fprintf(stderr, "tuneup import: %s\n", e.what());
        return kBadInput;
    }
    const TraceModel& model = job->models.front();

    // Written beside the output under another name, then renamed over it: a failed import never leaves
    // half a file, nor destroys the file it was to replace. A -wal of the old file would be applied to the
    // new one by SQLite: it goes first.
    progress.clear();
    const std::string staged = output.string() + ".importing";
    try {
        fs::remove(staged, ec);
        writeTuneupFile(model, staged);
        for (const char* suffix : { "-wal", "-shm", "-journal" })
            if (fs::remove(output.string() + suffix, ec); ec)
                throw std::runtime_error("cannot delete " + output.string() + suffix + " (" + ec.message() + ")");
        fs::rename(staged, output);
    } catch (const std::exception& e) {
        fs::remove(staged, ec);
        fprintf(stderr, "tuneup import: %s\n", e.what());
        return kUsageError;
    }
    const std::string written = tableCounts({ { model.kernels.size(), "kernels" }, { model.memcpys.size(), "copies" },
        { model.memsets.size(), "memsets" }, { model.syncs.size(), "syncs" }, { model.apiCalls.size(), "API calls" },
        { model.annotations.size(), "ranges" }, { model.gemmCalls.size(), "GEMM calls" },
        { model.convCalls.size(), "convolution calls" }, { model.frameworkFlags.size(), "framework flags" },
        { model.memoryEvents.size(), "memory events" }, { model.memoryPeaks.size(), "memory peaks" } });
    // What the tuneup schema has no table for (its stats list them too, as export.not_written.*).
    const std::string leftOut
        = tableCounts({ { model.cpuOps.size(), "CPU ops" }, { model.gpuAnnotations.size(), "GPU annotations" },
            { model.collectives.size(), "collectives" }, { model.flows.size(), "flows" },
            { model.counterRanges.size(), "counter ranges" }, { model.pythonFunctions.size(), "Python frames" } });
    struct stat st { };
    const uint64_t bytes = stat(output.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
    fprintf(stderr, "tuneup: imported %s events from %s (%s) -> %s (%s)%s%s\n",
        formatCount(int64_t(model.eventCount())).c_str(), options.input.c_str(),
        std::string(sourceFormatName(model.info.format)).c_str(), output.c_str(), formatBytes(int64_t(bytes)).c_str(),
        written.empty() ? "" : ": ", written.c_str());
    if (!leftOut.empty())
        fprintf(stderr, "tuneup: not in the tuneup schema, so left out: %s (tuneup advise reads them from %s)\n",
            leftOut.c_str(), options.input.c_str());
    return 0;
}

} // namespace

std::function<int()> addImportCommand(CLI::App& app, const std::vector<std::string>&) {
    auto options = std::make_shared<ImportOptions>();
    CLI::App* command = app.add_subcommand("import",
        "Write a trace of any readable format (PyTorch profiler / Kineto JSON, Nsight Systems SQLite export, tuneup "
        "file) as a tuneup file, which tuneup-gui and sqlite3 open (schema: docs/schema.md)");
    command->add_option("file", options->input, "a trace: trace.pt.trace.json[.gz], report.sqlite, run.db")->required();
    command->add_option("-o,--output", options->output, "the tuneup file to write (.db)")->required();
    command->add_flag(
        "-f,--force", options->force, "Replace an existing tuneup file (a file of another kind is never replaced)");
    command->footer(
        "Examples:\n"
        "  tuneup import report.sqlite -o run.db                 # nsys export --type sqlite report.nsys-rep\n"
        "  tuneup import worker0.pt.trace.json.gz -o worker0.db --force\n"
        "  sqlite3 run.db 'SELECT count(*), sum(end_ns - start_ns) FROM kernels'\n\n"
        "CPU operators, GPU annotations, collectives, flows and Python frames have no table in\n"
        "the tuneup schema: they are counted in the file's stats (export.not_written.*) and left out.\n\n"
        + std::string(kExitCodes));
    return [options] { return runImport(*options); };
}

} // namespace tuneup::cli
