#include "advise/rank_summary.h"

#include "advise/rule_context.h"
#include "saturating.h"

#include <algorithm>
#include <unordered_map>

namespace tuneup::analysis {

RankAnalysis analyzeRank(const TraceModel& model, int defaultRank, std::string_view stepRange) {
    RankAnalysis rank;
    rank.model = &model;
    rank.kernelClasses = classifyKernels(model);
    rank.steps = analyzeSteps(model, stepRange, &rank.kernelClasses);
    rank.rank = model.info.rank.value_or(defaultRank);
    return rank;
}

RankSummary summarizeRank(const RankAnalysis& rank, size_t jobRanks) {
    const TraceModel& m = *rank.model;
    RankSummary s;
    s.path = m.info.path;
    s.format = m.info.format;
    s.rank = rank.rank;
    s.eventCount = m.eventCount();
    s.span = m.span();
    if (const DeviceInfo* device = m.device(rank.steps.device)) s.deviceName = device->name;
    // Everything but the idle gaps and the host states, which grow with the trace.
    s.steps.detection = rank.steps.detection;
    s.steps.device = rank.steps.device;
    s.steps.perStep = rank.steps.perStep;
    s.steps.median = rank.steps.median;
    s.communication = communicationProfile(m, rank.steps, rank.kernelClasses);
    s.collectiveCount = m.collectives.size();
    for (unsigned i = 0; i <= unsigned(kLastInput); ++i)
        if (hasInput(rank, jobRanks, Input(i))) s.inputs |= 1u << i;
    s.settings = recordedSettings(m);
    s.topKernels = topKernels(m, kTopKernels, &s.kernelCount, &s.kernelNs);
    for (const ImportStat& stat : m.stats.entries())
        if (stat.severity != StatSeverity::Info && stat.value != 0) s.losses.push_back(stat);
    return s;
}

std::vector<std::pair<std::string, std::string>> recordedSettings(const TraceModel& model) {
    std::vector<std::pair<std::string, std::string>> settings;
    auto set = [&settings](std::string name, std::string value) {
        for (auto& [n, v] : settings)
            if (n == name) {
                v = std::move(value);
                return;
            }
        settings.emplace_back(std::move(name), std::move(value));
    };
    const auto& flags = model.frameworkFlags;
    for (size_t i = 0; i < flags.size(); ++i)
        set(std::string(model.str(flags.name[i])), flags.value[i] < 0 ? "unknown" : flags.value[i] ? "on" : "off");
    const auto& facts = model.programFacts;
    for (size_t i = 0; i < facts.size(); ++i) {
        std::string_view name = model.str(facts.name[i]);
        if (name.starts_with("tuneup.")) name.remove_prefix(7);
        set(std::string(name), std::to_string(facts.value[i]));
    }
    return settings;
}

std::vector<KernelTotal> topKernels(const TraceModel& model, size_t n, int64_t* count, int64_t* totalNs) {
    struct ById {
        StringId name;
        int64_t count = 0, totalNs = 0;
    };
    std::unordered_map<StringId, ById> byName;
    int64_t all = 0;
    const KernelTable& k = model.kernels;
    for (size_t i = 0; i < k.size(); ++i) {
        ById& s = byName[k.name[i]];
        s.name = k.name[i];
        ++s.count;
        // Saturating: a damaged trace's kernels can sum past int64.
        s.totalNs = saturatingAdd(s.totalNs, k.endNs[i] - k.startNs[i]);
        all = saturatingAdd(all, k.endNs[i] - k.startNs[i]);
    }
    std::vector<ById> stats;
    stats.reserve(byName.size());
    for (const auto& [name, s] : byName)
        stats.push_back(s);
    const size_t shown = std::min(n, stats.size());
    // Ties broken by name, so the order does not depend on the hash map.
    std::partial_sort(stats.begin(), stats.begin() + long(shown), stats.end(), [&](const ById& a, const ById& b) {
        return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : model.str(a.name) < model.str(b.name);
    });
    std::vector<KernelTotal> top;
    for (size_t i = 0; i < shown; ++i)
        top.push_back({ std::string(model.str(stats[i].name)), stats[i].count, stats[i].totalNs });
    if (count) *count = int64_t(k.size());
    if (totalNs) *totalNs = all;
    return top;
}

} // namespace tuneup::analysis
