#include "job/job_files.h"

#include "import/tuneup_file.h"
#include "run_files.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <glob.h>
#include <sys/stat.h>

namespace tuneup::analysis {

namespace fs = std::filesystem;

namespace {

// Names of files a folder's job is made of (anything else in the folder is left alone).
bool looksLikeTrace(const std::string& name) {
    for (std::string_view sidecar : { "-wal", "-shm", "-journal" })
        if (name.ends_with(sidecar)) return false;
    for (std::string_view ext : { ".db", ".json", ".json.gz", ".sqlite" })
        if (name.ends_with(ext)) return true;
    return false;
}

// "run.rank10.db" after "run.rank9.db": digit runs compare as numbers.
bool naturalLess(const std::string& a, const std::string& b) {
    size_t i = 0, j = 0;
    while (i < a.size() && j < b.size()) {
        if (isdigit(static_cast<unsigned char>(a[i])) && isdigit(static_cast<unsigned char>(b[j]))) {
            size_t ei = i, ej = j;
            while (ei < a.size() && isdigit(static_cast<unsigned char>(a[ei])))
                ++ei;
            while (ej < b.size() && isdigit(static_cast<unsigned char>(b[ej])))
                ++ej;
            const std::string_view na = std::string_view(a).substr(i, ei - i),
                                   nb = std::string_view(b).substr(j, ej - j);
            const auto trimmedA = na.substr(std::min(na.find_first_not_of('0'), na.size()));
            const auto trimmedB = nb.substr(std::min(nb.find_first_not_of('0'), nb.size()));
            if (trimmedA.size() != trimmedB.size()) return trimmedA.size() < trimmedB.size();
            if (trimmedA != trimmedB) return trimmedA < trimmedB;
            i = ei, j = ej;
            continue;
        }
        if (a[i] != b[j]) return a[i] < b[j];
        ++i, ++j;
    }
    return a.size() - i < b.size() - j;
}

bool hasGlob(const std::string& path) {
    return path.find_first_of("*?[") != std::string::npos;
}

std::vector<std::string> folderTraces(const std::string& folder) {
    std::vector<std::string> out;
    std::error_code ec;
    for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code typeError;
        if (it->is_regular_file(typeError) && looksLikeTrace(it->path().filename().string()))
            out.push_back(it->path().string());
    }
    if (ec) throw std::runtime_error(folder + ": cannot list the folder: " + ec.message());
    std::sort(out.begin(), out.end(), naturalLess);
    return out;
}

std::vector<std::string> globbed(const std::string& pattern) {
    glob_t matches {};
    std::vector<std::string> out;
    if (glob(pattern.c_str(), GLOB_NOSORT, nullptr, &matches) == 0)
        for (size_t i = 0; i < matches.gl_pathc; ++i)
            out.emplace_back(matches.gl_pathv[i]);
    globfree(&matches);
    std::erase_if(out, [](const std::string& p) { return !looksLikeTrace(fs::path(p).filename().string()); });
    std::sort(out.begin(), out.end(), naturalLess);
    return out;
}

} // namespace

std::string JobFile::label() const {
    const std::string name = fs::path(path).filename().string();
    return aside.empty() ? name : name + " (" + aside + ")";
}

std::vector<std::string> expandJobPaths(const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    for (const std::string& path : paths) {
        std::error_code ec;
        const fs::file_status status = fs::status(path, ec);
        if (fs::is_directory(status)) {
            const auto traces = folderTraces(path);
            if (traces.empty())
                throw std::runtime_error(path + ": the folder holds no trace file (*.db, *.json, *.json.gz, *.sqlite)");
            out.insert(out.end(), traces.begin(), traces.end());
        } else if (!fs::exists(status) && hasGlob(path)) {
            const auto matches = globbed(path);
            if (matches.empty()) throw std::runtime_error(path + ": no trace file matches");
            out.insert(out.end(), matches.begin(), matches.end());
        } else if (const auto run = parseRunFileName(path);
                   !fs::exists(status) && run && run->isMain() && !listRunFiles(run->stem).empty()) {
            // run.db after a distributed recording: its ranks (and other processes) wrote their own files.
            for (const RunFileName& file : listRunFiles(run->stem))
                out.push_back(file.path());
        } else {
            out.push_back(path); // a file, or one that is missing: the import says what is wrong with it
        }
    }
    return out;
}

JobFile classifyJobFile(const std::string& path) {
    JobFile file;
    file.path = path;
    try {
        file.format = detectFileFormat(path);
    } catch (const std::exception&) {
        return file; // unreadable: the import will say why
    }
    if (file.format != TraceFileFormat::TuneupDb) return file;
    try {
        const auto tuneup = TuneupFile::open(path);
        const TuneupFileSummary summary = tuneup->summary(false);
        file.role = parseProcessRole(summary.metaValue("role"));
        bool gpuWork = false;
        for (const TableCount& count : summary.eventCounts)
            if ((count.table == "kernels" || count.table == "memcpys" || count.table == "memsets") && count.rows > 0)
                gpuWork = true;
        // Children and other processes that ran GPU work train (ranks started by mp.spawn without RANK
        // write run.pidN.db): only those without are helpers.
        if (file.role == ProcessRole::DataLoaderWorker)
            file.aside = "DataLoader worker";
        else if (gpuWork)
            file.aside.clear();
        else if (file.role == ProcessRole::Launcher)
            file.aside = "launcher";
        else if (file.role == ProcessRole::ForkedChild)
            file.aside = "forked child without GPU work";
        else if (file.role == ProcessRole::Other)
            file.aside = "process without GPU work";
    } catch (const std::exception&) {
        // Damaged or foreign: the import will say why.
    }
    return file;
}

void setHelpersAside(std::vector<JobFile>& files, std::vector<JobFile>& helpers, std::vector<std::string>& notes) {
    if (std::all_of(files.begin(), files.end(), [](const JobFile& f) { return !f.aside.empty(); })) {
        for (JobFile& f : files)
            f.aside.clear(); // nothing but helpers given: analyse them as asked
        return;
    }
    std::string names;
    for (const JobFile& f : files)
        if (!f.aside.empty()) names += (names.empty() ? "" : ", ") + f.path + " (" + f.aside + ")";
    if (names.empty()) return;
    std::copy_if(
        files.begin(), files.end(), std::back_inserter(helpers), [](const JobFile& f) { return !f.aside.empty(); });
    std::erase_if(files, [](const JobFile& f) { return !f.aside.empty(); });
    notes.push_back("not training processes, so not analysed as ranks: " + names
        + " (tuneup-gui shows them beside their main process)");
}

std::vector<JobFile> processesBeside(const JobFile& file) {
    std::vector<JobFile> out;
    if (file.format != TraceFileFormat::TuneupDb) return out;
    const auto name = parseRunFileName(file.path);
    if (!name || name->pid) return out;
    for (const RunFileName& other : listRunFiles(name->stem))
        if (other.pid && other.rank == name->rank) out.push_back(classifyJobFile(other.path()));
    return out;
}

uint64_t expectedTraceBytes(const std::string& path) {
    std::error_code ec;
    const uint64_t size = fs::file_size(path, ec);
    if (ec) return 0;
    std::ifstream in(path, std::ios::binary);
    unsigned char magic[2] = {};
    if (!in.read(reinterpret_cast<char*>(magic), 2) || magic[0] != 0x1f || magic[1] != 0x8b || size < 8) return size;
    unsigned char trailer[4] = {};
    in.seekg(-4, std::ios::end);
    if (!in.read(reinterpret_cast<char*>(trailer), 4)) return size;
    const uint64_t isize
        = uint64_t(trailer[0]) | uint64_t(trailer[1]) << 8 | uint64_t(trailer[2]) << 16 | uint64_t(trailer[3]) << 24;
    return std::max(isize, size);
}

} // namespace tuneup::analysis
