// `tuneup info`: what trace files hold.

#include "import/tuneup_file.h"
#include "job/job_files.h"
#include "output_file.h"
#include "saturating.h"
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

// printf into the command's output (writeOutput checks that it arrives).
template <class... Args> void print(std::ostream& out, const char* format, Args... args) {
    char text[1024];
    const int n = snprintf(text, sizeof text, format, args...);
    if (n < 0) return;
    if (size_t(n) < sizeof text) {
        out.write(text, n);
        return;
    }
    std::string longer(size_t(n) + 1, '\0');
    snprintf(longer.data(), longer.size(), format, args...);
    out.write(longer.data(), n);
}

void row(std::ostream& out, const char* label, const std::string& value) {
    print(out, "  %-12s %s\n", label, value.c_str());
}

// The meta keys that hold numbers, and what each should be: a value that is not one is said, not used.
constexpr std::pair<const char*, const char*> kNumericMeta[]
    = { { "pid", "a process id" }, { "parent_pid", "a process id" }, { "rank", "a rank" }, { "local_rank", "a rank" },
          { "world_size", "a number of ranks" }, { "local_world_size", "a number of ranks" },
          { "start_ns", "a time in nanoseconds" }, { "end_ns", "a time in nanoseconds" },
          { "clock.realtime_ns", "a time in nanoseconds" }, { "clock.monotonic_ns", "a time in nanoseconds" } };

// "  (2 with unreadable times, left out by advise; 1 ends before it starts)" for a table's row count.
std::string timeProblems(const analysis::TableCount& count) {
    std::string text;
    if (count.badTimes > 0) text += groupedInteger(count.badTimes) + " with times that are not times, left out";
    if (count.endsBeforeStart > 0)
        text += (text.empty() ? "" : "; ") + groupedInteger(count.endsBeforeStart)
            + " ending before they start, read as instantaneous";
    return text.empty() ? text : "  (" + text + ")";
}

// event_counts: per source, what was written and dropped, and the threads that dropped most.
void printSourceCounts(std::ostream& out, const TuneupFileSummary& s, const Style& style) {
    std::map<std::string, std::vector<const analysis::SourceCountRow*>> bySource;
    for (const analysis::SourceCountRow& row : s.sourceCounts)
        bySource[row.source].push_back(&row);
    if (bySource.empty()) return;
    print(out, "  by source (event_counts)\n");
    for (auto& [source, rows] : bySource) {
        int64_t written = 0, dropped = 0;
        for (const auto* row : rows) {
            written = saturatingAdd(written, row->written);
            dropped = saturatingAdd(dropped, row->dropped);
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
        print(out, "  %s\n", dropped > 0 ? style.alert(line).c_str() : line.c_str());
    }
}

// Returns false when quick_check found damage.
bool printSummary(
    std::ostream& out, const TuneupFile& file, const TuneupFileSummary& s, bool check, const Style& style) {
    std::set<std::string> shown = { "format", "schema_version", "tuneup_version", "command_line", "pid", "parent_pid",
        "role", "host", "rank", "local_rank", "world_size", "local_world_size", "start_ns", "end_ns", "clock",
        "clock.realtime_ns", "clock.monotonic_ns" };

    print(out, "%s\n", s.path.c_str());
    std::string format = s.metaValue("format") + ", schema " + std::to_string(s.schemaVersion);
    if (!s.metaValue("tuneup_version").empty()) format += ", written by tuneup " + s.metaValue("tuneup_version");
    row(out, "format", format);
    std::string size = formatBytes(int64_t(s.fileBytes));
    if (s.walBytes > 0) size += " + " + formatBytes(int64_t(s.walBytes)) + " in its -wal (not yet merged)";
    row(out, "size", size);
    row(out, "command", s.metaValue("command_line").empty() ? "?" : s.metaValue("command_line"));

    std::string process = "pid " + (s.metaValue("pid").empty() ? "?" : s.metaValue("pid"));
    if (!s.metaValue("parent_pid").empty()) process += ", parent " + s.metaValue("parent_pid");
    if (const std::string role = s.metaValue("role"); !role.empty()) {
        const auto known = parseProcessRole(role);
        process += ", role " + (known ? std::string(processRoleLabel(*known)) : role);
    }
    if (!s.metaValue("host").empty()) process += ", host " + s.metaValue("host");
    row(out, "process", process);
    if (!s.metaValue("rank").empty() || !s.metaValue("world_size").empty()) {
        std::string rank = s.metaValue("rank").empty() ? "?" : s.metaValue("rank");
        std::string detail;
        if (!s.metaValue("local_rank").empty()) detail += "local rank " + s.metaValue("local_rank");
        if (!s.metaValue("world_size").empty())
            detail += (detail.empty() ? "" : ", ") + std::string("world size ") + s.metaValue("world_size");
        row(out, "rank", detail.empty() ? rank : rank + " (" + detail + ")");
    }

    // Wall time from the one realtime/monotonic pair the agent read together.
    const auto start = s.metaInteger("start_ns");
    const auto realtime = s.metaInteger("clock.realtime_ns");
    const auto monotonic = s.metaInteger("clock.monotonic_ns");
    if (start && realtime && monotonic)
        row(out, "started", localTime(saturatingAdd(*realtime, saturatingSub(*start, *monotonic))));
    const std::optional<int64_t> duration = s.durationNs();
    std::string durationText = duration ? formatElapsed(*duration) : "unknown";
    if (s.complete)
        row(out, "duration", durationText);
    else
        row(out, "duration",
            durationText + (duration ? " until the last event" : "") + "; "
                + style.alert("incomplete: the process did not exit cleanly") + " (killed, or still running)");

    bool firstCapture = true;
    for (const auto& [key, value] : s.meta) {
        if (!key.starts_with("capture.") && !key.starts_with("cupti.") && !key.starts_with("cuda.")) continue;
        shown.insert(key);
        print(out, "  %-12s %s: %s\n", firstCapture ? "capture" : "", key.c_str(), value.c_str());
        firstCapture = false;
    }

    row(out, "events", groupedInteger(s.eventCount()));
    for (const analysis::TableCount& count : s.eventCounts) {
        const std::string problems = timeProblems(count);
        print(out, "    %-14s %12s%s\n", count.table.c_str(), groupedInteger(count.rows).c_str(),
            problems.empty() ? "" : style.alert(problems).c_str());
    }
    if (s.threadSamples > 0)
        row(out, "main thread", groupedInteger(s.threadSamples) + " state changes sampled (thread_states)");

    if (!s.stats.empty()) {
        print(out, "  stats\n");
        for (const analysis::StatRow& stat : s.stats) {
            const bool loss = stat.value > 0 && (stat.severity == "data_loss" || stat.severity == "error");
            std::string line = (loss ? "! " : "  ") + stat.name;
            char text[512];
            snprintf(text, sizeof text, "  %-28s %14s  %-9s  %s", line.c_str(), groupedInteger(stat.value).c_str(),
                stat.severity.c_str(), stat.description.c_str());
            print(out, "%s\n", loss ? style.alert(text).c_str() : text);
        }
        if (s.droppedCount() > 0)
            print(out, "  %s\n",
                style.alert(groupedInteger(s.droppedCount()) + " events were lost (lines with !)").c_str());
    }
    printSourceCounts(out, s, style);

    if (s.devices.empty()) row(out, "GPUs", "none recorded");
    for (size_t i = 0; i < s.devices.size(); ++i) {
        const analysis::DeviceRow& d = s.devices[i];
        char text[256];
        snprintf(text, sizeof text, "%d: %s (sm_%d%d, %d SMs, %s, %.0f GB/s)", d.id, d.name.c_str(), d.computeMajor,
            d.computeMinor, d.smCount, formatBytes(d.globalMemoryBytes).c_str(), d.memoryBandwidthGBs);
        row(out, i == 0 ? "GPUs" : "", text);
    }

    bool firstOther = true;
    for (const auto& [key, value] : s.meta) {
        if (shown.count(key)) continue;
        print(out, "  %-12s %s: %s\n", firstOther ? "other" : "", key.c_str(), value.c_str());
        firstOther = false;
    }
    for (const std::string& warning : s.warnings)
        row(out, "note", warning);
    for (const auto& [key, expected] : kNumericMeta)
        if (!s.metaValue(key).empty() && !s.metaInteger(key)) row(out, "note", s.metaProblem(key, expected));

    if (check || s.fileBytes + s.walBytes <= kAutoCheckBytes) {
        const std::vector<std::string> problems = file.quickCheck();
        if (problems.empty()) row(out, "integrity", "ok (PRAGMA quick_check)");
        for (size_t i = 0; i < problems.size(); ++i)
            row(out, i == 0 ? "integrity" : "", style.alert(problems[i]));
        if (!problems.empty()) return false;
    } else {
        row(out, "integrity", "not checked (a large file; --check runs PRAGMA quick_check)");
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
            bool sound = true;
            const std::string error = writeOutput("", [&](std::ostream& out) {
                if (!first) out << "\n";
                sound = printSummary(out, *file, summary, options.check, style);
            });
            first = false;
            if (!error.empty()) {
                fprintf(stderr, "tuneup info: %s\n", error.c_str());
                return kUsageError; // nothing more can be said where it would not arrive
            }
            if (!sound) {
                fprintf(stderr,
                    "tuneup: %s: is damaged (PRAGMA quick_check found problems); record again, or salvage "
                    "what is left with `sqlite3 %s .recover | sqlite3 recovered.db`\n",
                    file->path().c_str(), file->path().c_str());
                status = 1;
            }
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
