#include "import_command.h"

#include "export/tuneup_writer.h"
#include "import/format_detect.h"
#include "import/importer.h"
#include "import/tuneup_file.h"
#include "text_format.h"

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

constexpr int kBadInput = 1;
constexpr int kUsageError = 2;

int usageError(const std::string& message) {
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

// "reading IN: 120 MB" on a terminal while a big input is read; nothing otherwise.
class Progress {
public:
    explicit Progress(const std::string& input)
        : m_input(input) {
        struct stat st { };
        m_enabled = isatty(STDERR_FILENO) && stat(input.c_str(), &st) == 0 && st.st_size > (32 << 20);
    }
    ~Progress() { clear(); }
    void reading(uint64_t bytes) {
        if (!m_enabled) return;
        m_shown = true;
        fprintf(stderr, "\rtuneup: reading %s: %.0f MB", m_input.c_str(), double(bytes) / 1e6);
    }
    void writing(const std::string& output, size_t events) {
        if (!m_enabled) return;
        m_shown = true;
        fprintf(stderr, "\r\033[Ktuneup: writing %s events to %s", humanCount(int64_t(events)).c_str(), output.c_str());
    }
    void clear() {
        if (m_shown) fprintf(stderr, "\r\033[K");
        m_shown = false;
    }

private:
    std::string m_input;
    bool m_enabled = false, m_shown = false;
};

// "18 kernels, 3 copies, ..." for the tables with rows.
std::string tableCounts(const std::vector<std::pair<size_t, const char*>>& counts) {
    std::string text;
    for (const auto& [rows, what] : counts)
        if (rows > 0) text += (text.empty() ? "" : ", ") + groupedInteger(int64_t(rows)) + " " + what;
    return text;
}

} // namespace

int runImport(const ImportOptions& options) {
    // The output is checked before a long import, not after.
    if (options.output.empty() || options.output == "-")
        return usageError("name the tuneup file to write with -o, e.g. tuneup import " + options.input + " -o run.db");
    std::error_code ec;
    const fs::path output = fs::absolute(options.output, ec).lexically_normal();
    const fs::path directory = output.parent_path();
    if (!fs::is_directory(directory, ec))
        return usageError(
            "the output directory " + directory.string() + " does not exist; create it or choose another -o");
    if (access(directory.c_str(), W_OK) != 0)
        return usageError("cannot write in " + directory.string() + " (" + strerror(errno) + "); choose another -o");
    if (fs::is_directory(output, ec))
        return usageError(
            "-o " + options.output + " is a directory; name a file, e.g. -o " + (output / "run.db").string());
    if (fs::exists(options.input, ec) && fs::exists(output, ec) && fs::equivalent(options.input, output, ec))
        return usageError("the input and the output are the same file; choose another -o");
    std::vector<std::string> existing;
    for (const char* suffix : { "", "-wal", "-shm", "-journal" })
        if (fs::exists(output.string() + suffix, ec)) existing.push_back(output.string() + suffix);
    if (!existing.empty()) {
        if (fs::exists(output, ec) && !replaceable(output.string()))
            return usageError(output.string()
                + " exists and is not a tuneup trace, so tuneup will not replace it, "
                  "even with --force; move it away or choose another -o");
        if (!options.force)
            return usageError(existing.front() + " exists; add --force to replace it, or choose another -o");
    }

    Progress progress(options.input);
    TraceModel model;
    try {
        analysis::ImportOptions importOptions;
        importOptions.progress = [&progress](uint64_t bytes) { progress.reading(bytes); };
        model = importTrace(options.input, importOptions);
    } catch (const std::exception& e) {
        progress.clear();
        fprintf(stderr, "tuneup import: %s\n", e.what());
        return kBadInput;
    }

    // Written beside the output under another name, then renamed over it: a failed import never leaves
    // half a file, nor destroys the file it was to replace. A -wal of the old file would be applied to the
    // new one by SQLite: it goes first.
    progress.writing(output.string(), model.eventCount());
    const std::string staged = output.string() + ".importing";
    try {
        fs::remove(staged, ec);
        writeTuneupFile(model, staged);
        for (const char* suffix : { "-wal", "-shm", "-journal" })
            if (fs::remove(output.string() + suffix, ec); ec)
                throw std::runtime_error("cannot delete " + output.string() + suffix + " (" + ec.message() + ")");
        fs::rename(staged, output);
    } catch (const std::exception& e) {
        progress.clear();
        fs::remove(staged, ec);
        fprintf(stderr, "tuneup import: %s\n", e.what());
        return kUsageError;
    }
    progress.clear();

    const std::string written = tableCounts({ { model.kernels.size(), "kernels" }, { model.memcpys.size(), "copies" },
        { model.memsets.size(), "memsets" }, { model.syncs.size(), "syncs" }, { model.apiCalls.size(), "API calls" },
        { model.annotations.size(), "ranges" }, { model.gemmCalls.size(), "GEMM calls" },
        { model.convCalls.size(), "convolution calls" }, { model.frameworkFlags.size(), "framework flags" } });
    // What the tuneup schema has no table for (its stats list them too, as export.not_written.*).
    const std::string leftOut
        = tableCounts({ { model.cpuOps.size(), "CPU ops" }, { model.gpuAnnotations.size(), "GPU annotations" },
            { model.collectives.size(), "collectives" }, { model.flows.size(), "flows" },
            { model.counterRanges.size(), "counter ranges" }, { model.pythonFunctions.size(), "Python frames" } });
    struct stat st { };
    const uint64_t bytes = stat(output.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;
    fprintf(stderr, "tuneup: imported %s events from %s (%s) -> %s (%s)%s%s\n",
        humanCount(int64_t(model.eventCount())).c_str(), options.input.c_str(),
        std::string(sourceFormatName(model.info.format)).c_str(), output.c_str(), humanBytes(bytes).c_str(),
        written.empty() ? "" : ": ", written.c_str());
    if (!leftOut.empty())
        fprintf(stderr, "tuneup: not in the tuneup schema, so left out: %s (tuneup advise reads them from %s)\n",
            leftOut.c_str(), options.input.c_str());
    return 0;
}

} // namespace tuneup::cli
