#pragma once
// Opens a tuneup trace (the agent's SQLite file) read-only, checks that it is one this build can read,
// and summarises what it holds. The file is never modified: no checkpoint, no recovery, no schema change.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

struct sqlite3;

namespace tuneup::analysis {

/** Why a file could not be read. The message names the file, the problem and what to do. */
class TuneupFileError : public std::runtime_error {
public:
    enum class Kind { NotFound, NotAFile, Unreadable, Empty, NotSqlite, Foreign, NewerSchema, Corrupt };
    TuneupFileError(Kind kind, const std::string& message)
        : std::runtime_error(message)
        , m_kind(kind) { }
    Kind kind() const { return m_kind; }

private:
    Kind m_kind;
};

struct StatRow {
    std::string name;
    std::string severity; // info, data_loss or error
    int64_t value = 0;
    std::string description;
};

struct TableCount {
    std::string table;
    int64_t rows = 0;
    // With the event span (TuneupFile::summary): rows whose times the import drops (NULL, not integers,
    // beyond kMaxTimeNs) and rows that end before they start (read as instantaneous).
    int64_t badTimes = 0, endsBeforeStart = 0;
};

struct DeviceRow {
    int id = 0;
    std::string name;
    int computeMajor = 0, computeMinor = 0, smCount = 0;
    int64_t globalMemoryBytes = 0;
    double memoryBandwidthGBs = 0;
};

// One (source, thread) of event_counts (schema 4): what a source of events wrote and dropped.
struct SourceCountRow {
    std::string source; // nvtx, python, torch, gemm, conv, cupti, host_sampler
    std::optional<int64_t> tid; // none: not tied to one thread
    int64_t written = 0, dropped = 0;
};

struct TuneupFileSummary {
    std::string path; // absolute
    uint64_t fileBytes = 0; // the database file itself
    uint64_t walBytes = 0; // its -wal beside it (not yet merged in)
    int schemaVersion = 0;
    std::map<std::string, std::string> meta;
    std::vector<StatRow> stats;
    std::vector<TableCount> eventCounts; // kEventTables, in that order
    int64_t threadSamples = 0; // thread_states rows: samples of the main thread, not events
    std::vector<DeviceRow> devices;
    std::vector<SourceCountRow> sourceCounts; // by source, then thread (NULL first); empty before schema 4
    std::optional<int64_t> firstNs, lastNs; // over the event tables, else meta start_ns/end_ns
    bool complete = false; // meta end_ns present: the process exited cleanly
    std::vector<std::string> warnings; // facts about reading, e.g. a WAL that could not be read

    int64_t eventCount() const;
    int64_t droppedCount() const; // sum of the data_loss stats
    std::optional<int64_t> durationNs() const; // meta start_ns..end_ns, else the event span
    std::string metaValue(const std::string& key) const; // "" when absent
    // A meta value as a whole decimal number; nullopt when absent, or not one that fits 64 bits ("abc",
    // "99999999999999999999", "1e3"): metaProblem(key, "a process id") then says so for the user.
    std::optional<int64_t> metaInteger(const std::string& key) const;
    std::string metaProblem(const std::string& key, const std::string& expected) const;
};

// The tables counted as events, in the order reports list them.
extern const std::vector<std::string> kEventTables;

class TuneupFile {
public:
    // Throws TuneupFileError when the file is missing, not a trace, newer than this build or damaged.
    static std::unique_ptr<TuneupFile> open(const std::string& path);
    ~TuneupFile();
    TuneupFile(const TuneupFile&) = delete;
    TuneupFile& operator=(const TuneupFile&) = delete;

    const std::string& path() const { return m_path; }
    sqlite3* db() const { return m_db; }
    int schemaVersion() const { return m_schemaVersion; }
    // True when no -wal was beside the file (it is read without locks), or when the directory was
    // read-only and a copy failed, so its -wal was left unread (the summary's warnings say so).
    bool immutable() const { return m_immutable; }
    // True when the directory was read-only and the file had a -wal: a private copy was read.
    bool readFromCopy() const { return !m_copyDir.empty(); }

    // Reads the metadata, stats, row counts and (unless !eventSpan, which saves a scan of every table)
    // the events' time span. Throws TuneupFileError(Corrupt) on damaged pages.
    TuneupFileSummary summary(bool eventSpan = true) const;
    // Another read-only connection to what this one reads (for a second reading thread); the caller
    // closes it with sqlite3_close. nullptr when SQLite cannot open it.
    sqlite3* openAnotherReader() const;
    // Runs PRAGMA quick_check (reads every page: seconds per GB). Returns the problems, empty when sound.
    std::vector<std::string> quickCheck(int maxProblems = 10) const;

private:
    TuneupFile(sqlite3* db, std::string path, bool immutable);
    sqlite3* m_db;
    std::string m_path;
    bool m_immutable;
    int m_schemaVersion = 0;
    std::set<std::string> m_tables; // its plain tables (never views: see sqlite_open.h)
    std::string m_copyDir; // removed with the object
    std::string m_readPath; // what SQLite reads: the file, or its copy in m_copyDir
};

} // namespace tuneup::analysis
