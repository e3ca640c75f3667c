#include "app/session.h"

#include "all_rules.h"
#include "report/report_helpers.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <unordered_map>

namespace tuneup::gui {

using namespace analysis;
namespace fs = std::filesystem;

const StepAnalysis* Session::steps() const {
    if (job->analyses.empty() || job->analyses.front().steps.detection.steps.empty()) return nullptr;
    return &job->analyses.front().steps;
}

std::string Session::title() const {
    if (files.empty()) return {};
    std::string t = fs::path(files.front()).filename().string();
    if (files.size() > 1) t += " +" + std::to_string(files.size() - 1);
    return t;
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

    // Reading and advice: 0..80%, as the job core reports it (from its reading threads).
    JobOptions options;
    options.builtinRules = rules::builtinRules;
    options.userRules = request.userRules;
    options.stepRange = request.stepRange;
    options.withHelperProcesses = request.withOtherProcesses;
    options.cancel = progress.cancel;
    options.progress = [&](const JobProgress& p) { report(progress, p.phase, 0.8 * p.fraction()); };
    report(progress, "Reading", 0);
    try {
        session->job = openJob(request.files, options);
    } catch (const JobCancelled&) {
        throw LoadCancelled();
    }
    session->inputs = request.files;
    for (const JobFile& f : session->job->ranks)
        session->files.push_back(f.path);
    for (const JobFile& f : session->job->helpers)
        session->otherFiles.push_back(f.path);

    // Labels and the timeline: 80..97%.
    report(progress, "Laying out the timeline", 0.8);
    const Job& job = *session->job;
    for (size_t i = 0; i < job.ranks.size(); ++i) {
        std::string label = fs::path(job.ranks[i].path).filename().string();
        if (job.ranks.size() > 1 && job.models[i].info.rank)
            label += " (rank " + std::to_string(*job.models[i].info.rank) + ")";
        session->labels.push_back(label);
    }
    for (const JobFile& helper : job.helpers)
        session->labels.push_back(helper.label());
    std::vector<TimelineInput> inputs;
    for (size_t i = 0; i < session->modelCount(); ++i)
        inputs.push_back(
            { &session->model(i), session->labels[i], i < job.analyses.size() ? &job.analyses[i].steps : nullptr });
    session->timeline = buildTimeline(inputs, progress.cancel);
    check(progress);

    report(progress, "Counting kernels", 0.97);
    std::vector<const TraceModel*> jobModels;
    for (const TraceModel& m : job.models)
        jobModels.push_back(&m);
    session->kernels = kernelRows(jobModels, &session->kernelTotalNs);
    session->loadSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    report(progress, "Done", 1.0);
    return session;
}

} // namespace tuneup::gui
