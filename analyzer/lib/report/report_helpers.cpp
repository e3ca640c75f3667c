#include "report/report_helpers.h"

#include "saturating.h"
#include "utf8.h"

#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>
#include <map>
#include <memory>
#include <set>

namespace tuneup::analysis {

// Tableau 10: distinct in colour and in lightness, readable for most colour-blind readers.
const std::vector<BreakdownPart> kBreakdownParts = {
    { "compute", "GPU compute", "#4e79a7", &StepBreakdown::computeNs },
    { "communication", "Communication", "#b07aa1", &StepBreakdown::communicationNs },
    { "memcpy", "Copies", "#f28e2b", &StepBreakdown::memcpyNs },
    { "memset", "Memset", "#edc948", &StepBreakdown::memsetNs },
    { "idle-data", "Idle: waiting for data", "#e15759", &StepBreakdown::idleDataNs },
    { "idle-sync", "Idle: after synchronisation", "#ff9da7", &StepBreakdown::idleSyncNs },
    { "idle-host", "Idle: launch/Python overhead", "#bab0ac", &StepBreakdown::idleHostNs },
    // Tableau 20's light teal: a colour no other part or timeline box has.
    { "idle-graph", "Idle: inside CUDA graph replays", "#86bcb6", &StepBreakdown::idleGraphNs },
};

// Without GPU work analyzeSteps leaves idleSyncNs at 0: the step is data waits and the rest.
const std::vector<BreakdownPart> kHostBreakdownParts = {
    { "host-data", "CPU: waiting for data", "#e15759", &StepBreakdown::idleDataNs },
    { "host-other", "CPU: other work", "#76b7b2", &StepBreakdown::idleHostNs },
};

const std::vector<BreakdownPart>& breakdownParts(const StepAnalysis& steps) {
    return steps.gpuActivity() ? kBreakdownParts : kHostBreakdownParts;
}

namespace {

std::string demangle(std::string_view name) {
    if (!name.starts_with("_Z")) return std::string(name);
    int status = 0;
    const std::string mangled(name);
    std::unique_ptr<char, void (*)(void*)> out(
        abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
    return status == 0 && out ? std::string(out.get()) : mangled;
}

// Replaces the contents of <...> nested deeper than `keepDepth` with "…".
std::string foldTemplates(std::string_view s, int keepDepth) {
    std::string out;
    int depth = 0;
    for (char c : s) {
        if (c == '<') {
            if (depth++ == keepDepth)
                out += "<…";
            else if (depth <= keepDepth)
                out += c;
            continue;
        }
        if (c == '>' && depth > 0) {
            if (--depth == keepDepth)
                out += '>';
            else if (depth < keepDepth)
                out += c;
            continue;
        }
        if (depth <= keepDepth) out += c;
    }
    return out;
}

size_t utf8Length(std::string_view s) {
    return size_t(
        std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

} // namespace

std::string shortKernelName(std::string_view raw, size_t maxChars) {
    std::string name = demangle(raw);
    if (name.starts_with("void ")) name.erase(0, 5);
    // The parameter list: the last balanced (...) at the end.
    if (!name.empty() && name.back() == ')') {
        int depth = 0;
        for (size_t i = name.size(); i-- > 0;) {
            if (name[i] == ')')
                ++depth;
            else if (name[i] == '(' && --depth == 0) {
                if (i > 0) name.erase(i);
                break;
            }
        }
    }
    for (int keep = 2; keep >= 0 && utf8Length(name) > maxChars; --keep)
        name = foldTemplates(name, keep);
    if (utf8Length(name) > maxChars) {
        // The end names the kernel; the front is namespaces.
        size_t cut = name.size() - (maxChars - 1);
        while (cut < name.size() && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80)
            ++cut;
        name = "…" + name.substr(cut);
    }
    return name;
}

std::string docLink(const Finding& finding) {
    if (!finding.docPath.empty()) return finding.docPath;
    return "rules/" + finding.ruleId + ".md";
}

std::string inputLabel(const AdviceReport& report, const ReportContext& context, size_t rank) {
    if (rank < context.inputs.size()) return context.inputs[rank];
    return rank < report.ranks.size() ? report.ranks[rank].path : std::string();
}

const RankSummary* rankOf(const AdviceReport& report, const Finding& finding) {
    for (const RankSummary& r : report.ranks)
        if (finding.rank >= 0 && r.rank == finding.rank) return &r;
    return report.ranks.empty() ? nullptr : &report.ranks.front();
}

int64_t traceStartNs(const AdviceReport& report, const Finding& finding) {
    const RankSummary* rank = rankOf(report, finding);
    const auto span = rank ? rank->span : std::nullopt;
    return span ? span->startNs : 0;
}

std::string relativeSpan(const TimeSpan& span, int64_t originNs) {
    return "+" + formatDuration(span.startNs - originNs) + " – +" + formatDuration(span.endNs - originNs) + " ("
        + formatDuration(span.durationNs()) + ")";
}

std::vector<FindingGroup> groupedFindings(const AdviceReport& report) {
    std::vector<FindingGroup> groups;
    // (rule, place in a per-rank rule's outcome, or kJobWide) -> group. A job-wide rule that reports on
    // several ranks (communication-bound) raises one finding per rank: those group together too.
    constexpr size_t kJobWide = SIZE_MAX;
    std::map<std::pair<std::string, size_t>, size_t> byKey;
    for (size_t o = 0; o < report.outcomes.size(); ++o) {
        const RuleOutcome& outcome = report.outcomes[o];
        const bool perRank = o < report.outcomeRank.size() && report.outcomeRank[o] >= 0;
        for (size_t k = 0; k < outcome.findings.size(); ++k) {
            const Finding& f = outcome.findings[k];
            if (f.rank < 0) {
                groups.push_back({ &f, {} });
                continue;
            }
            const auto [it, added] = byKey.try_emplace({ outcome.ruleId, perRank ? k : kJobWide }, groups.size());
            if (added) groups.push_back({ &f, {} });
            FindingGroup& g = groups[it->second];
            g.ranks.push_back(f.rank);
            const int64_t gain = f.gain ? f.gain->perStepNs : 0,
                          best = g.finding->gain ? g.finding->gain->perStepNs : 0;
            if (gain > best) g.finding = &f;
        }
    }
    for (FindingGroup& g : groups)
        std::sort(g.ranks.begin(), g.ranks.end());
    std::stable_sort(groups.begin(), groups.end(), [](const FindingGroup& a, const FindingGroup& b) {
        const int64_t ga = a.finding->gain ? a.finding->gain->perStepNs : 0;
        const int64_t gb = b.finding->gain ? b.finding->gain->perStepNs : 0;
        if (ga != gb) return ga > gb;
        return a.finding->severity > b.finding->severity;
    });
    return groups;
}

std::string rankList(const std::vector<int>& ranks, size_t jobRanks) {
    if (ranks.size() == 1) return "rank " + std::to_string(ranks.front());
    std::string text;
    size_t shownRuns = 0;
    for (size_t i = 0; i < ranks.size();) {
        size_t j = i;
        while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1)
            ++j;
        if (++shownRuns > 6) {
            text += ", …";
            break;
        }
        text += (text.empty() ? "" : ", ") + std::to_string(ranks[i]);
        if (j > i) text += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
        i = j + 1;
    }
    return "ranks " + text + " (" + std::to_string(ranks.size()) + " of " + std::to_string(jobRanks) + ")";
}

std::vector<size_t> ranksDescribed(const AdviceReport& report) {
    std::vector<size_t> all(report.ranks.size());
    for (size_t i = 0; i < all.size(); ++i)
        all[i] = i;
    if (all.size() <= kRanksDescribed) return all;
    std::vector<size_t> bySpeed = all;
    std::stable_sort(bySpeed.begin(), bySpeed.end(), [&](size_t a, size_t b) {
        return report.ranks[a].steps.medianStepNs() < report.ranks[b].steps.medianStepNs();
    });
    std::vector<size_t> shown = { bySpeed.front(), bySpeed[bySpeed.size() / 2], bySpeed.back() };
    std::sort(shown.begin(), shown.end());
    shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
    return shown;
}

std::vector<DataLoss> dataLoss(const AdviceReport& report) {
    std::vector<DataLoss> out;
    for (const RankSummary& rank : report.ranks)
        for (const ImportStat& stat : rank.losses) {
            auto it = std::find_if(out.begin(), out.end(), [&](const DataLoss& d) { return d.name == stat.name; });
            if (it == out.end())
                it = out.insert(out.end(), DataLoss { stat.name, stat.severity, 0, stat.description, {} });
            it->count = saturatingAdd(it->count, stat.value);
            if (std::find(it->ranks.begin(), it->ranks.end(), rank.rank) == it->ranks.end())
                it->ranks.push_back(rank.rank);
        }
    for (DataLoss& d : out)
        std::sort(d.ranks.begin(), d.ranks.end());
    return out;
}

std::string stepShareText(const Finding& f) {
    if (!f.gain || f.gain->perStepNs <= 0)
        return f.kind == FindingKind::Performance
            ? "no time estimate"
            : "a " + std::string(findingKindName(f.kind)) + " finding: no time estimate";
    if (f.gain->stepShare <= 0) return "share of the step unknown (no steps found)";
    if (f.gain->stepShare < 0.001) return "under 0.1% of the step";
    return formatPercent(f.gain->stepShare) + " of the step";
}

std::string sourceSiteText(const SourceSite& site) {
    const std::string where = site.file + ":" + std::to_string(site.line) + " in " + site.function;
    if (site.sampled)
        return where + " (sampled: " + formatPercent(site.share) + " of the main thread's time, "
            + std::to_string(site.events) + (site.events == 1 ? " sample)" : " samples)");
    if (!site.call.empty())
        return where + " (" + site.call + ", " + std::to_string(site.events)
            + (site.events == 1 ? " call)" : " calls)");
    return where + " (" + std::to_string(site.events) + (site.events == 1 ? " event, " : " events, ")
        + formatPercent(site.share) + ")";
}

std::string floorNote(const AdviceReport& report) {
    if (!report.floor || report.findingsBelowFloor == 0) return "";
    const size_t n = report.findingsBelowFloor;
    return std::to_string(n) + (n == 1 ? " finding" : " findings") + " under the materiality floor ("
        + floorText(*report.floor) + ") " + (n == 1 ? "is" : "are") + " not shown; --all shows them";
}

std::vector<const RuleOutcome*> rulesWithout(const AdviceReport& report, RuleStatus status) {
    std::vector<const RuleOutcome*> out;
    std::set<std::string> listed;
    for (const RuleOutcome& o : report.outcomes)
        if (o.status == status && listed.insert(o.ruleId).second) out.push_back(&o);
    return out;
}

// Inline text: Markdown punctuation escaped, HTML-significant characters as entities (GitHub
// renders raw HTML in Markdown, so a kernel name's "<float>" would vanish), one line.
std::string markdownText(std::string_view raw) {
    const std::string s = validUtf8(raw); // text from traces may hold invalid UTF-8
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '<':
            out += "&lt;";
            break;
        case '>':
            out += "&gt;";
            break;
        case '&':
            out += "&amp;";
            break;
        case '\n':
            out += ' ';
            break;
        case '\r':
            break;
        case '\\':
        case '`':
        case '*':
        case '_':
        case '[':
        case ']':
        case '|':
        case '~':
        case '$':
            out += '\\';
            out += c;
            break;
        default:
            out += c;
        }
    }
    return out;
}

} // namespace tuneup::analysis
