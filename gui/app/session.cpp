#include "app/session.h"

#include "advise/sql_rule.h"
#include "all_rules.h"
#include "import/import_many.h"
#include "report/report_helpers.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <unordered_map>

namespace tuneup::gui {

using namespace analysis;
namespace fs = std::filesystem;

const StepAnalysis* Session::steps() const {
    if (report.ranks.empty() || report.ranks.front().steps.detection.steps.empty()) return nullptr;
    return &report.ranks.front().steps;
}

std::string Session::title() const {
    if (files.empty()) return {};
    std::string t = fs::path(files.front()).filename().string();
    if (files.size() > 1) t += " +" + std::to_string(files.size() - 1);
    return t;
}

std::vector<std::string> otherProcessFiles(const std::string& file) {
    std::vector<std::string> out;
    const fs::path path(file);
    if (path.extension() != ".db") return out;
    const std::string stem = path.stem().string(); // "run" or "run.rank3"
    // Escape the stem for the pattern: file names may hold regex characters.
    std::string escaped;
    for (char c : stem) {
        if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) escaped += '\\';
        escaped += c;
    }
    const std::regex pattern(escaped + R"(\.pid[0-9]+\.db)");
    std::error_code ec;
    const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (entry.is_regular_file(ec) && std::regex_match(name, pattern))
            out.push_back((path.has_parent_path() ? dir / name : fs::path(name)).string());
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<KernelRow> kernelRows(const std::vector<const TraceModel*>& models, int64_t* totalNs) {
    std::unordered_map<std::string, size_t> byName;
    std::vector<KernelRow> rows;
    int64_t all = 0;
    for (const TraceModel* model : models) {
        // By StringId within a model (cheap), by name across models (their string tables differ).
        std::unordered_map<StringId, size_t> byId;
        const KernelTable& k = model->kernels;
        for (size_t i = 0; i < k.size(); ++i) {
            auto it = byId.find(k.name[i]);
            if (it == byId.end()) {
                const std::string name(model->str(k.name[i]));
                auto [named, added] = byName.try_emplace(name, rows.size());
                if (added) {
                    KernelRow row;
                    row.name = name;
                    row.minNs = INT64_MAX;
                    rows.push_back(std::move(row));
                }
                it = byId.emplace(k.name[i], named->second).first;
            }
            KernelRow& row = rows[it->second];
            const int64_t d = std::max<int64_t>(k.endNs[i] - k.startNs[i], 0);
            ++row.count;
            row.totalNs += d;
            row.minNs = std::min(row.minNs, d);
            row.maxNs = std::max(row.maxNs, d);
            all += d;
        }
    }
    for (KernelRow& row : rows) {
        row.shortName = shortKernelName(row.name);
        row.kernelClass = classifyKernel(row.name);
    }
    std::sort(rows.begin(), rows.end(), [](const KernelRow& a, const KernelRow& b) {
        return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.name < b.name;
    });
    if (totalNs) *totalNs = all;
    return rows;
}

namespace {

// The size of the text an importer will read, for progress: the file's size, or for gzip the
// uncompressed size its trailer records (modulo 4 GiB, so never less than the file itself).
uint64_t expectedBytes(const std::string& path) {
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

std::string roleLabel(const TraceModel& model) {
    const std::string role = model.info.metadataValue("role");
    if (role == "dataloader-worker") return "DataLoader worker";
    if (role == "forked-child") return "forked child";
    if (role == "launcher") return "launcher";
    return role;
}

void check(const LoadProgress& progress) {
    if (progress.cancel && progress.cancel->load()) throw LoadCancelled();
}

void report(const LoadProgress& progress, const std::string& phase, double fraction) {
    check(progress);
    if (progress.report) progress.report(phase, fraction);
}

} // namespace

std::shared_ptr<Session> loadSession(const LoadRequest& request, const LoadProgress& progress) {
    const auto started = std::chrono::steady_clock::now();
    if (request.files.empty()) throw std::runtime_error("no file to open");
    auto session = std::make_shared<Session>();
    session->files = request.files;

    auto rules = rules::builtinRules();
    if (!request.userRules.empty())
        for (auto& rule : loadSqlRules(request.userRules, rules))
            rules.push_back(std::move(rule));

    if (request.withOtherProcesses)
        for (const std::string& file : request.files)
            for (std::string& other : otherProcessFiles(file))
                if (std::find(request.files.begin(), request.files.end(), other) == request.files.end())
                    session->otherFiles.push_back(std::move(other));

    // Import: 0..70%. Progress comes from the importers' threads; cancelling throws from there, and the
    // importer hands the exception back to this thread once its threads have stopped.
    uint64_t expected = 0;
    for (const std::string& f : request.files)
        expected += expectedBytes(f);
    const std::string phase = request.files.size() == 1
        ? "Reading " + fs::path(request.files.front()).filename().string()
        : "Reading " + std::to_string(request.files.size()) + " files";
    report(progress, phase, 0);
    ImportManyOptions options;
    options.progress = [&](size_t, uint64_t bytes) {
        report(progress, phase, expected ? 0.7 * std::min(1.0, double(bytes) / double(expected)) : 0.0);
    };
    session->job = importTraces(request.files, options);
    for (size_t i = 0; i < session->otherFiles.size(); ++i) {
        report(progress, "Reading other processes", 0.7);
        try {
            session->others.push_back(importTrace(session->otherFiles[i]));
        } catch (const LoadCancelled&) {
            throw;
        } catch (const std::exception&) {
            // A worker's file cut short (the worker was killed) must not stop the main one from opening.
            session->otherFiles.erase(session->otherFiles.begin() + long(i--));
        }
    }

    // Advice: 70..80%.
    report(progress, "Finding steps and running the rules", 0.72);
    AdviseOptions adviseOptions;
    adviseOptions.stepRange = request.stepRange;
    session->report = advise(session->job, rules, adviseOptions);

    // Labels and the timeline: 80..97%.
    report(progress, "Laying out the timeline", 0.8);
    std::vector<TimelineInput> inputs;
    for (size_t i = 0; i < session->job.size(); ++i) {
        std::string label = fs::path(request.files[i]).filename().string();
        if (request.files.size() > 1 && session->job[i].info.rank)
            label += " (rank " + std::to_string(*session->job[i].info.rank) + ")";
        session->labels.push_back(label);
    }
    for (size_t i = 0; i < session->others.size(); ++i) {
        std::string label = fs::path(session->otherFiles[i]).filename().string();
        if (const std::string role = roleLabel(session->others[i]); !role.empty()) label += " (" + role + ")";
        session->labels.push_back(label);
    }
    for (size_t i = 0; i < session->modelCount(); ++i)
        inputs.push_back({ &session->model(i), session->labels[i],
            i < session->report.ranks.size() ? &session->report.ranks[i].steps : nullptr });
    session->timeline = buildTimeline(inputs, progress.cancel);
    check(progress);

    report(progress, "Counting kernels", 0.97);
    std::vector<const TraceModel*> jobModels;
    for (const TraceModel& m : session->job)
        jobModels.push_back(&m);
    session->kernels = kernelRows(jobModels, &session->kernelTotalNs);
    session->loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    report(progress, "Done", 1.0);
    return session;
}

} // namespace tuneup::gui
