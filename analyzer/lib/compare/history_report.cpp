// `tuneup history show`: the trend of each environment's runs, oldest first.

#include "compare/compare_report.h"
#include "compare/history.h"
#include "stats/descriptive.h"
#include "units.h"
#include "utf8.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/prettywriter.h>

namespace tuneup::analysis {

namespace {

// Entries grouped by environment, in the order each environment first appears.
std::vector<std::pair<std::string, std::vector<const HistoryEntry*>>> byEnvironment(
    const std::vector<HistoryEntry>& history) {
    std::vector<std::pair<std::string, std::vector<const HistoryEntry*>>> groups;
    std::map<std::string, size_t> index;
    for (const HistoryEntry& e : history) {
        auto [it, fresh] = index.try_emplace(e.fingerprint, groups.size());
        if (fresh) groups.push_back({ e.fingerprint, {} });
        groups[it->second].second.push_back(&e);
    }
    return groups;
}

std::string ms(double v) {
    return formatDuration(int64_t(std::llround(v * 1e6)));
}

} // namespace

void writeHistoryText(std::ostream& out, const std::vector<HistoryEntry>& history) {
    if (history.empty()) {
        out << "tuneup history: no runs yet\n";
        return;
    }
    for (const auto& [fingerprint, entries] : byEnvironment(history)) {
        out << "environment: " << (fingerprint.empty() ? "(not recorded)" : fingerprint) << "\n";
        // A bar per run, its length the median step against the environment's slowest.
        double slowest = 0;
        for (const HistoryEntry* e : entries)
            slowest = std::max(slowest, stats::median(e->profile.stepMs));
        double previous = 0;
        for (const HistoryEntry* e : entries) {
            const double median = stats::median(e->profile.stepMs);
            char line[160];
            snprintf(line, sizeof line, "  %4lld  %s  %-20.20s %5zu steps  median %-9s", static_cast<long long>(e->id),
                e->addedAt.c_str(), e->label.c_str(), e->profile.stepMs.size(), ms(median).c_str());
            out << line;
            out << (previous > 0 ? "  " + ratioText(median / previous) + " of the run before" : std::string(24, ' '));
            out << "  " << std::string(size_t(std::lround(20 * median / slowest)), '#') << "\n";
            previous = median;
        }
    }
}

void writeHistoryJson(std::ostream& os, const std::vector<HistoryEntry>& history) {
    rapidjson::OStreamWrapper stream(os);
    rapidjson::PrettyWriter<rapidjson::OStreamWrapper> w(stream);
    w.SetIndent(' ', 2);
    const auto str = [&w](const std::string& s) {
        const std::string clean = validUtf8(s);
        w.String(clean.c_str(), rapidjson::SizeType(clean.size()));
    };
    w.StartObject();
    w.Key("schema_version");
    w.Int(kCompareSchemaVersion);
    w.Key("environments");
    w.StartArray();
    for (const auto& [fingerprint, entries] : byEnvironment(history)) {
        w.StartObject();
        w.Key("fingerprint");
        str(fingerprint);
        w.Key("runs");
        w.StartArray();
        for (const HistoryEntry* e : entries) {
            const stats::Distribution d = stats::describe(e->profile.stepMs);
            w.StartObject();
            w.Key("id");
            w.Int64(e->id);
            w.Key("added_at");
            str(e->addedAt);
            w.Key("label");
            str(e->label);
            w.Key("steps");
            w.Uint64(d.n);
            w.Key("median_ms");
            w.Double(d.median);
            w.Key("p10_ms");
            w.Double(d.p10);
            w.Key("p90_ms");
            w.Double(d.p90);
            w.Key("findings");
            w.StartArray();
            for (const FindingRef& f : e->profile.findings)
                str(f.ruleId);
            w.EndArray();
            w.EndObject();
        }
        w.EndArray();
        w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    os << "\n";
}

} // namespace tuneup::analysis
