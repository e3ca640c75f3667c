// `tuneup info`: what trace files hold.

#include "import/tuneup_file.h"
#include "job/job_files.h"
#include "subcommand.h"
#include "units.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <unistd.h>

namespace tuneup::cli {

using analysis::TuneupFile;
using analysis::TuneupFileError;
using analysis::TuneupFileSummary;

namespace {

struct InfoOptions {
    std::vector<std::string> files;
    bool check = false; // PRAGMA quick_check on every file, whatever its size
};

// Local wall-clock time of an epoch time in nanoseconds: "2024-05-01 12:03:04 CEST".
std::string localTime(int64_t epochNs) {
    const time_t seconds = time_t(epochNs / 1000000000);
    struct tm local { };
    if (!localtime_r(&seconds, &local)) return "?";
    char text[64];
    strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S %Z", &local);
    return text;
}

// quick_check reads every page; below this size it costs well under a second, so it runs by default.
constexpr uint64_t kAutoCheckBytes = 256ull << 20;

struct Style {
    bool color = false;
    std::string alert(const std::string& text) const { return color ? "\033[1;31m" + text + "\033[0m" : text; }
};

std::optional<int64_t> metaInteger(const TuneupFileSummary& summary, const std::string& key) {
    const std::string text = summary.metaValue(key);
    if (text.empty()) return std::nullopt;
    char* end = nullptr;
    const long long value = strtoll(text.c_str(), &end, 10);
    return *end == '\0' ? std::optional<int64_t>(value) : std::nullopt;
}

void row(const char* label, const std::string& value) {
    printf("  %-12s %s\n", label, value.c_str());
}

// event_counts: per source, what was written and dropped, and the threads that dropped most.
void printSourceCounts(const TuneupFileSummary& s, const Style& style) {
    std::map<std::string, std::vector<const analysis::SourceCountRow*>> bySource;
    for (const analysis::SourceCountRow& row : s.sourceCounts)
        bySource[row.source].push_back(&row);
    if (bySource.empty()) return;
    printf("  by source (event_counts)\n");
    for (auto& [source, rows] : bySource) {
        int64_t written = 0, dropped = 0;
        for (const auto* row : rows) {
            written += row->written;
            dropped += row->dropped;
        }
        std::string where;
        std::stable_sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->dropped > b->dropped; });
        constexpr size_t kThreadsShown = 4;
        size_t dropping = 0;
        for (const auto* row : rows) {
            if (row->dropped == 0) continue;
            if (dropping++ < kThreadsShown)
                where += std::string(where.empty() ? " (" : ", ")
                    + (row->tid ? "thread " + std::to_string(*row->tid) : std::string("no thread")) + ": "
                    + groupedInteger(row->dropped);
        }
        if (dropping > kThreadsShown) where += " and " + std::to_string(dropping - kThreadsShown) + " more threads";
        if (!where.empty()) where += ")";
        char text[256];
        snprintf(text, sizeof text, "  %s %-14s %14s written %12s dropped", dropped > 0 ? "!" : " ", source.c_str(),
            groupedInteger(written).c_str(), groupedInteger(dropped).c_str());
        const std::string line = text + where;
        printf("  %s\n", dropped > 0 ? style.alert(line).c_str() : line.c_str());
    }
}

// Returns false when quick_check found damage.
bool printSummary(const TuneupFile& file, const TuneupFileSummary& s, bool check, const Style& style) {
    std::set<std::string> shown = { "format", "schema_version", "tuneup_version", "command_line", "pid", "parent_pid",
        "role", "host", "rank", "local_rank", "world_size", "local_world_size", "start_ns", "end_ns", "clock",
        "clock.realtime_ns", "clock.monotonic_ns" };

    printf("%s\n", s.path.c_str());
    std::string format = s.metaValue("format") + ", schema " + std::to_string(s.schemaVersion);
    if (!s.metaValue("tuneup_version").empty()) format += ", written by tuneup " + s.metaValue("tuneup_version");
    row("format", format);
    std::string size = formatBytes(int64_t(s.fileBytes));
    if (s.walBytes > 0) size += " + " + formatBytes(int64_t(s.walBytes)) + " in its -wal (not yet merged)";
    row("size", size);
    row("command", s.metaValue("command_line").empty() ? "?" : s.metaValue("command_line"));

    std::string process = "pid " + (s.metaValue("pid").empty() ? "?" : s.metaValue("pid"));
    if (!s.metaValue("parent_pid").empty()) process += ", parent " + s.metaValue("parent_pid");
    if (const std::string role = s.metaValue("role"); !role.empty()) {
        const auto known = parseProcessRole(role);
        process += ", role " + (known ? std::string(processRoleLabel(*known)) : role);
    }
    if (!s.metaValue("host").empty()) process += ", host " + s.metaValue("host");
    row("process", process);
    if (!s.metaValue("rank").empty() || !s.metaValue("world_size").empty()) {
        std::string rank = s.metaValue("rank").empty() ? "?" : s.metaValue("rank");
        std::string detail;
        if (!s.metaValue("local_rank").empty()) detail += "local rank " + s.metaValue("local_rank");
        if (!s.metaValue("world_size").empty())
            detail += (detail.empty() ? "" : ", ") + std::string("world size ") + s.metaValue("world_size");
        row("rank", detail.empty() ? rank : rank + " (" + detail + ")");
    }

    // Wall time from the one realtime/monotonic pair the agent read together.
    const auto start = metaInteger(s, "start_ns");
    const auto realtime = metaInteger(s, "clock.realtime_ns");
    const auto monotonic = metaInteger(s, "clock.monotonic_ns");
    if (start && realtime && monotonic) row("started", localTime(*realtime + (*start - *monotonic)));
    const std::optional<int64_t> duration = s.durationNs();
    std::string durationText = duration ? formatElapsed(*duration) : "unknown";
    if (s.complete)
        row("duration", durationText);
    else
        row("duration",
            durationText + (duration ? " until the last event" : "") + "; "
                + style.alert("incomplete: the process did not exit cleanly") + " (killed, or still running)");

    bool firstCapture = true;
    for (const auto& [key, value] : s.meta) {
        if (!key.starts_with("capture.") && !key.starts_with("cupti.") && !key.starts_with("cuda.")) continue;
        shown.insert(key);
        printf("  %-12s %s: %s\n", firstCapture ? "capture" : "", key.c_str(), value.c_str());
        firstCapture = false;
    }

    row("events", groupedInteger(s.eventCount()));
    for (const analysis::TableCount& count : s.eventCounts)
        printf("    %-14s %12s\n", count.table.c_str(), groupedInteger(count.rows).c_str());
    if (s.threadSamples > 0)
        row("main thread", groupedInteger(s.threadSamples) + " state changes sampled (thread_states)");

    if (!s.stats.empty()) {
        printf("  stats\n");
        for (const analysis::StatRow& stat : s.stats) {
            const bool loss = stat.value > 0 && (stat.severity == "data_loss" || stat.severity == "error");
            std::string line = (loss ? "! " : "  ") + stat.name;
            char text[512];
            snprintf(text, sizeof text, "  %-28s %14s  %-9s  %s", line.c_str(), groupedInteger(stat.value).c_str(),
                stat.severity.c_str(), stat.description.c_str());
            printf("%s\n", loss ? style.alert(text).c_str() : text);
        }
        if (s.droppedCount() > 0)
            printf(
                "  %s\n", style.alert(groupedInteger(s.droppedCount()) + " events were lost (lines with !)").c_str());
    }
    printSourceCounts(s, style);

    if (s.devices.empty()) row("GPUs", "none recorded");
    for (size_t i = 0; i < s.devices.size(); ++i) {
        const analysis::DeviceRow& d = s.devices[i];
        char text[256];
        snprintf(text, sizeof text, "%d: %s (sm_%d%d, %d SMs, %s, %.0f GB/s)", d.id, d.name.c_str(), d.computeMajor,
            d.computeMinor, d.smCount, formatBytes(d.globalMemoryBytes).c_str(), d.memoryBandwidthGBs);
        row(i == 0 ? "GPUs" : "", text);
    }

    bool firstOther = true;
    for (const auto& [key, value] : s.meta) {
        if (shown.count(key)) continue;
        printf("  %-12s %s: %s\n", firstOther ? "other" : "", key.c_str(), value.c_str());
        firstOther = false;
    }
    for (const std::string& warning : s.warnings)
        row("note", warning);

    if (check || s.fileBytes + s.walBytes <= kAutoCheckBytes) {
        const std::vector<std::string> problems = file.quickCheck();
        if (problems.empty()) row("integrity", "ok (PRAGMA quick_check)");
        for (size_t i = 0; i < problems.size(); ++i)
            row(i == 0 ? "integrity" : "", style.alert(problems[i]));
        if (!problems.empty()) {
            fflush(stdout);
            fprintf(stderr,
                "tuneup: %s: is damaged (PRAGMA quick_check found problems); record again, or salvage "
                "what is left with `sqlite3 %s .recover | sqlite3 recovered.db`\n",
                file.path().c_str(), file.path().c_str());
            return false;
        }
    } else {
        row("integrity", "not checked (a large file; --check runs PRAGMA quick_check)");
    }
    return true;
}

int runInfo(const InfoOptions& options) {
    Style style;
    style.color = isatty(STDOUT_FILENO) && !getenv("NO_COLOR");
    int status = 0;
    bool first = true;
    std::vector<std::string> files;
    try {
        files = analysis::expandJobPaths(options.files);
    } catch (const std::exception& e) {
        fprintf(stderr, "tuneup info: %s\n", e.what());
        return kBadInput;
    }
    for (const std::string& path : files) {
        try {
            const auto file = TuneupFile::open(path);
            const TuneupFileSummary summary = file->summary();
            if (!first) printf("\n");
            first = false;
            if (!printSummary(*file, summary, options.check, style)) status = 1;
        } catch (const TuneupFileError& e) {
            fflush(stdout);
            fprintf(stderr, "tuneup: %s\n", e.what());
            status = 1;
        }
    }
    return status;
}

} // namespace

std::function<int()> addInfoCommand(CLI::App& app, const std::vector<std::string>&) {
    auto options = std::make_shared<InfoOptions>();
    CLI::App* command = app.add_subcommand("info",
        "Say what trace files hold: command, process, rank, host, when and how long, what was captured and why "
        "not, row counts per table, drops, GPUs");
    command->add_option("files", options->files, "tuneup trace files (.db), folders of them or globs")->required();
    command->add_flag("--check", options->check,
        "Check every page of the file (PRAGMA quick_check) even when it is large; small files are always checked");
    command->footer("Examples:\n"
                    "  tuneup info run.db\n"
                    "  tuneup info run.rank*.db\n\n"
        + std::string(kExitCodes));
    return [options] { return runInfo(*options); };
}

} // namespace tuneup::cli
