#include "import/tuneup_file.h"

#include "import/sqlite_open.h"
#include "model/trace_model.h"
#include "saturating.h"
#include "trace_schema.h"
#include "utf8.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <set>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tuneup::analysis {

const std::vector<std::string> kEventTables = { "kernels", "memcpys", "memsets", "syncs", "api_calls", "nvtx_ranges",
    "nvtx_marks", "framework_flags", "gemm_calls", "conv_calls", "python_calls", "python_samples", "memory_events",
    "memory_peaks", "native_samples" };

namespace {

using Kind = TuneupFileError::Kind;

[[noreturn]] void fail(Kind kind, const std::string& path, const std::string& problem, const std::string& todo) {
    throw TuneupFileError(kind, path + ": " + problem + (todo.empty() ? "" : "; " + todo));
}

std::string absolutePath(const std::string& path) {
    std::error_code ec;
    std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    return ec ? path : absolute.lexically_normal().string();
}

std::optional<uint64_t> fileSize(const std::string& path) {
    struct stat st { };
    if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    return uint64_t(st.st_size);
}

// SQLite URIs need the path percent-encoded ('?', '#' and '%' are legal in file names).
// A guess at what a non-SQLite file is, to point the user the right way.
std::string guessFormat(const unsigned char* header, size_t n) {
    if (n >= 2 && header[0] == 0x1f && header[1] == 0x8b)
        return " (it is gzip-compressed: a PyTorch profiler trace .json.gz?)";
    size_t i = 0;
    while (i < n && isspace(header[i]))
        ++i;
    if (i < n && (header[i] == '{' || header[i] == '[')) return " (it looks like JSON: a PyTorch profiler trace?)";
    if (n >= 4 && !memcmp(header, "PK\x03\x04", 4)) return " (it is a zip archive)";
    return "";
}

bool isNsightExport(const std::set<std::string>& tables) {
    if (tables.count("StringIds") || tables.count("TARGET_INFO_SESSION_START_TIME")) return true;
    return std::any_of(
        tables.begin(), tables.end(), [](const std::string& t) { return t.starts_with("CUPTI_ACTIVITY_KIND_"); });
}

std::string listTables(const std::set<std::string>& tables) {
    constexpr size_t kShown = 8;
    std::string list;
    size_t shown = 0;
    for (const std::string& t : tables) {
        if (shown == kShown) {
            list += ", … " + std::to_string(tables.size() - kShown) + " more";
            break;
        }
        list += (shown++ ? ", " : "") + t;
    }
    return list;
}

// Turns an SQLite failure into the error a user can act on.
[[noreturn]] void failSqlite(int rc, sqlite3* db, const std::string& path, const std::string& doing) {
    const std::string message = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    if (const std::string limit = sqliteLimitProblem(db, rc); !limit.empty())
        fail(Kind::Corrupt, path, limit + " (" + message + " while " + doing + ")",
            "record again; tuneup reads only the tables `tuneup record` writes");
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
        fail(Kind::NotSqlite, path, "is not a readable SQLite file (" + message + " while " + doing + ")",
            "its header is damaged or it is another format; pass a .db file written by `tuneup record`");
    case SQLITE_CORRUPT:
        fail(Kind::Corrupt, path, "is damaged (" + message + " while " + doing + ")",
            "the recording was cut short by a crash or a full disk; record again, or salvage what is left with "
            "`sqlite3 "
                + path + " .recover | sqlite3 recovered.db`");
    default:
        fail(Kind::Unreadable, path, "cannot be read (" + message + " while " + doing + ")",
            "check that the file and its directory are readable and the disk is sound");
    }
}

/** A prepared statement that finalizes itself; step() throws TuneupFileError on failure. */
class Statement {
public:
    Statement(sqlite3* db, const std::string& path, const std::string& sql)
        : m_db(db)
        , m_path(path)
        , m_sql(sql) {
        const int rc = sqlite3_prepare_v2(db, sql.c_str(), int(sql.size()), &m_stmt, nullptr);
        if (rc != SQLITE_OK) failSqlite(rc, db, path, "preparing `" + sql + "`");
    }
    ~Statement() { sqlite3_finalize(m_stmt); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    bool step() {
        const int rc = sqlite3_step(m_stmt);
        if (rc == SQLITE_ROW) return true;
        if (rc == SQLITE_DONE) return false;
        failSqlite(rc, m_db, m_path, "running `" + m_sql + "`");
    }
    bool isNull(int column) const { return sqlite3_column_type(m_stmt, column) == SQLITE_NULL; }
    int64_t integer(int column) const { return sqlite3_column_int64(m_stmt, column); }
    double real(int column) const { return sqlite3_column_double(m_stmt, column); }
    std::string text(int column) const {
        const unsigned char* value = sqlite3_column_text(m_stmt, column);
        return value ? reinterpret_cast<const char*>(value) : "";
    }
    sqlite3_stmt* handle() const { return m_stmt; }

private:
    sqlite3* m_db;
    std::string m_path;
    std::string m_sql;
    sqlite3_stmt* m_stmt = nullptr;
};

// The tables a reader of tuneup files reads (schema 1 to 7).
const std::set<std::string> kReadTables = { "meta", "strings", "devices", "threads", "stats", "event_counts",
    "nvtx_domains", "thread_states", "external_correlations", "kernels", "memcpys", "memsets", "syncs", "api_calls",
    "nvtx_ranges", "nvtx_marks", "framework_flags", "gemm_calls", "conv_calls", "python_calls", "python_samples",
    "memory_events", "memory_peaks", "native_samples" };

SqliteTables tablesOf(sqlite3* db, const std::string& path) {
    SqliteTables tables;
    if (const int rc = listSqliteTables(db, tables); rc != SQLITE_OK) failSqlite(rc, db, path, "listing its tables");
    return tables;
}

// Every name in the file, tables or not: what a foreign file is made of.
std::set<std::string> allNames(const SqliteTables& tables) {
    std::set<std::string> names = tables.plain;
    for (const auto& [name, what] : tables.other)
        names.insert(name);
    return names;
}

// A table tuneup reads that is something else (a view, a virtual table) would run what the file defines
// on every read: a recursive view never ends. `tuneup record` writes plain tables only.
void requirePlainTables(const SqliteTables& tables, const std::string& path) {
    for (const auto& [name, what] : tables.other)
        if (kReadTables.count(name))
            fail(Kind::Corrupt, path,
                "its `" + name + "` is " + what
                    + ", not a table: tuneup reads only the tables `tuneup record` writes, never code a file defines",
                "the file was altered or not written by tuneup; record again");
}

// meta(key) when the file has a meta table of our shape; "" otherwise (a foreign meta table).
std::string metaValue(sqlite3* db, const std::string& key) {
    sqlite3_stmt* s = nullptr;
    std::string value;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &s, nullptr) == SQLITE_OK) {
        sqlite3_bind_text(s, 1, key.c_str(), -1, SQLITE_TRANSIENT);
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
            value = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    }
    sqlite3_finalize(s);
    return value;
}

// A value from the file for a message: control characters and invalid bytes as '?', at most 80 bytes.
std::string printable(const std::string& text) {
    std::string out = validUtf8(text.substr(0, 80));
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return text.size() > 80 ? out + "…" : out;
}

// A whole decimal number that fits int64, nothing else (no sign '+', spaces, fraction or exponent).
std::optional<int64_t> parseInteger(std::string_view text) {
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// The count, earliest and latest valid time, rows with times the import drops (NULL, text, beyond
// kMaxTimeNs) and rows that end before they start (clamped), of an event table.
std::string spanQuery(const std::string& table, bool instant) {
    const std::string limit = std::to_string(kMaxTimeNs - 1);
    const auto valid = [&](const std::string& column) {
        return "(typeof(" + column + ") = 'integer' AND " + column + " BETWEEN -" + limit + " AND " + limit + ")";
    };
    if (instant)
        return "SELECT count(*), min(CASE WHEN " + valid("ts_ns") + " THEN ts_ns END), max(CASE WHEN " + valid("ts_ns")
            + " THEN ts_ns END), total(NOT " + valid("ts_ns") + "), 0 FROM " + table;
    // nvtx_ranges.end_ns is NULL for a range never closed; other tables always have an end.
    const std::string ok = "(" + valid("start_ns") + " AND (" + (table == "nvtx_ranges" ? "end_ns IS NULL OR " : "")
        + valid("end_ns") + "))";
    return "SELECT count(*), min(CASE WHEN " + ok + " THEN start_ns END), max(CASE WHEN " + ok
        + " THEN max(start_ns, coalesce(end_ns, start_ns)) END), total(NOT " + ok + "), total(" + ok
        + " AND end_ns < start_ns) FROM " + table;
}

int64_t clampedCount(double value) {
    return value >= 9.2e18 ? INT64_MAX : value <= 0 ? 0 : int64_t(value);
}

sqlite3* openSqlite(const std::string& path, bool immutable, int& rc) {
    sqlite3* db = nullptr;
    rc = openSqliteForReading(path, immutable, &db);
    return db;
}

// The first read: it is where SQLite parses the header and attaches the WAL.
int probe(sqlite3* db) {
    return sqlite3_exec(db, "PRAGMA application_id", nullptr, nullptr, nullptr);
}

void removeCopy(const std::string& directory) {
    if (directory.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(directory, ec);
}

// Copies the file and its -wal into a new private directory, where SQLite may create the -shm it needs.
// Returns the directory ("" and `error` on failure).
std::string copyWithWal(const std::string& path, std::string& error) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const char* tmp = getenv("TMPDIR");
    std::string pattern = (fs::path(tmp && *tmp ? tmp : "/tmp") / "tuneup-read.XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
        error = pattern + ": " + strerror(errno);
        return "";
    }
    fs::copy_file(path, pattern + "/trace.db", ec);
    if (!ec) fs::copy_file(path + "-wal", pattern + "/trace.db-wal", ec);
    if (ec) {
        error = "copying into " + pattern + ": " + ec.message();
        removeCopy(pattern);
        return "";
    }
    return pattern;
}

} // namespace

int64_t TuneupFileSummary::eventCount() const {
    int64_t total = 0;
    for (const TableCount& count : eventCounts)
        total = saturatingAdd(total, count.rows);
    return total;
}

int64_t TuneupFileSummary::droppedCount() const {
    int64_t total = 0;
    for (const StatRow& stat : stats)
        if (stat.severity == "data_loss" && stat.value > 0) total = saturatingAdd(total, stat.value);
    return total;
}

std::string TuneupFileSummary::metaValue(const std::string& key) const {
    auto it = meta.find(key);
    return it == meta.end() ? std::string() : it->second;
}

std::optional<int64_t> TuneupFileSummary::metaInteger(const std::string& key) const {
    return parseInteger(metaValue(key));
}

std::string TuneupFileSummary::metaProblem(const std::string& key, const std::string& expected) const {
    return "its meta `" + key + "` is '" + printable(metaValue(key)) + "', not " + expected + ": ignored";
}

std::optional<int64_t> TuneupFileSummary::durationNs() const {
    const std::optional<int64_t> metaStart = metaInteger("start_ns");
    const std::optional<int64_t> metaEnd = metaInteger("end_ns");
    const std::optional<int64_t> start = metaStart ? metaStart : firstNs;
    const std::optional<int64_t> end = metaEnd ? metaEnd : lastNs;
    int64_t duration = 0;
    if (!start || !end || *end < *start || __builtin_sub_overflow(*end, *start, &duration)) return std::nullopt;
    return duration;
}

std::unique_ptr<TuneupFile> TuneupFile::open(const std::string& givenPath) {
    if (givenPath == "-")
        fail(Kind::NotAFile, "-", "standard input cannot hold a tuneup recording: SQLite reads only files",
            "pass the .db file itself");
    const std::string path = absolutePath(givenPath);
    struct stat st { };
    if (stat(path.c_str(), &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            fail(Kind::NotFound, givenPath, "no such file",
                "check the path (`tuneup record -o run.db` writes run.db, and run.rank<N>.db for ranks)");
        fail(Kind::Unreadable, givenPath, std::string("cannot be read: ") + strerror(errno),
            "check the permissions of the file and its directories");
    }
    if (S_ISDIR(st.st_mode))
        fail(Kind::NotAFile, givenPath, "is a directory, not a trace file", "pass one of the .db files inside it");
    if (!S_ISREG(st.st_mode))
        fail(Kind::NotAFile, givenPath, "is not a regular file (a pipe or a device?), and SQLite reads only files",
            "pass a .db file written by `tuneup record`, or save what the pipe gives to a file first");

    unsigned char header[100] = {};
    ssize_t headerBytes = 0;
    {
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            fail(Kind::Unreadable, givenPath, std::string("cannot be read: ") + strerror(errno),
                "check its permissions (ls -l)");
        headerBytes = pread(fd, header, sizeof header, 0);
        const int readErrno = errno;
        ::close(fd);
        if (headerBytes < 0)
            fail(Kind::Unreadable, givenPath, std::string("cannot be read: ") + strerror(readErrno), "check the disk");
    }
    const std::optional<uint64_t> wal = fileSize(path + "-wal");
    const uint64_t walBytes = wal.value_or(0);
    if (st.st_size == 0 && walBytes == 0)
        fail(Kind::Empty, givenPath, "is empty (0 bytes)",
            "the recording wrote nothing, it was probably stopped as it started; record again");
    if (st.st_size > 0 && (headerBytes < 16 || memcmp(header, "SQLite format 3", 16) != 0))
        fail(Kind::NotSqlite, givenPath,
            "is not a tuneup trace: it is not an SQLite file" + guessFormat(header, size_t(headerBytes)),
            "pass a .db file written by `tuneup record`");

    // No -wal beside it: the writer closed it cleanly (or never wrote one), so it cannot change under us
    // and is read as immutable: no locks, no -shm created next to it. With a -wal (a live or killed
    // recording) SQLite must read the WAL, which needs a -shm beside it; in a read-only directory we read
    // a private copy instead, and failing that, the main file alone (immutable) and say what is not read.
    bool immutable = !wal;
    std::string copyDir;
    int rc = SQLITE_OK;
    sqlite3* db = openSqlite(path, immutable, rc);
    if (rc == SQLITE_OK) rc = probe(db);
    std::string copyError;
    if (rc != SQLITE_OK && !immutable && ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY)) {
        sqlite3_close(db);
        db = nullptr;
        copyDir = copyWithWal(path, copyError);
        if (!copyDir.empty()) {
            db = openSqlite(copyDir + "/trace.db", false, rc);
            if (rc == SQLITE_OK) rc = probe(db);
            if (rc != SQLITE_OK) {
                copyError = std::string("SQLite cannot read the copy: ") + sqlite3_errstr(rc);
                sqlite3_close(db);
                db = nullptr;
                removeCopy(copyDir);
                copyDir.clear();
            }
        }
        if (copyDir.empty()) {
            immutable = true;
            db = openSqlite(path, immutable, rc);
            if (rc == SQLITE_OK) rc = probe(db);
        }
    }
    if (rc != SQLITE_OK) {
        try {
            failSqlite(rc, db, givenPath, "opening it");
        } catch (...) {
            sqlite3_close(db);
            removeCopy(copyDir);
            throw;
        }
    }
    std::unique_ptr<TuneupFile> file(new TuneupFile(db, givenPath, immutable));
    file->m_copyDir = copyDir;
    file->m_readPath = copyDir.empty() ? path : copyDir + "/trace.db";
    const bool walUnread = immutable && walBytes > 0;

    // Ours when either mark is there: application_id is set first, meta rows come with the first commit.
    int applicationId = 0;
    int userVersion = 0;
    {
        Statement s(db, givenPath, "PRAGMA application_id");
        if (s.step()) applicationId = int(s.integer(0));
    }
    {
        Statement s(db, givenPath, "PRAGMA user_version");
        if (s.step()) userVersion = int(s.integer(0));
    }
    const SqliteTables tables = tablesOf(db, givenPath);
    const bool hasMeta = tables.plain.count("meta") > 0; // a `meta` view is never run
    const std::string format = hasMeta ? metaValue(db, "format") : "";
    if (walUnread && (tables.plain.empty() || !hasMeta))
        fail(Kind::Unreadable, givenPath,
            "its events are in " + path
                + "-wal, which SQLite can only read beside a -shm file it creates, and "
                  "the directory is read-only (a copy in the temporary directory failed too: "
                + copyError + ")",
            "copy " + path + " and " + path + "-wal to a writable directory and read the copy");
    if (applicationId != schema::kApplicationId && format != schema::kFormatName) {
        const std::set<std::string> names = allNames(tables);
        if (names.empty())
            fail(Kind::Foreign, givenPath, "is an empty SQLite database (no tables), not a tuneup trace",
                "pass a .db file written by `tuneup record`");
        std::string todo = "pass a .db file written by `tuneup record`";
        if (isNsightExport(names))
            todo = "it looks like an Nsight Systems SQLite export: `tuneup advise` reads it, and `tuneup import "
                + givenPath + " -o run.db` writes it as a tuneup trace";
        fail(Kind::Foreign, givenPath, "is an SQLite file but not a tuneup trace (tables: " + listTables(names) + ")",
            todo);
    }
    requirePlainTables(tables, givenPath);

    // The version decides how every table is read: a value that is not one is damage, never rounded.
    const std::string versionText = hasMeta ? metaValue(db, "schema_version") : "";
    const std::optional<int64_t> metaVersion = parseInteger(versionText);
    if (!versionText.empty() && (!metaVersion || *metaVersion < 1 || *metaVersion > INT32_MAX))
        fail(Kind::Corrupt, givenPath,
            "its meta `schema_version` is '" + printable(versionText) + "', not a schema version (1, 2, 3, ...)",
            "the file was altered or damaged; record again");
    const int version = metaVersion ? int(*metaVersion) : userVersion;
    if (version > schema::kSchemaVersion) {
        const std::string writer = hasMeta ? metaValue(db, "tuneup_version") : "";
        fail(Kind::NewerSchema, givenPath,
            "written by a newer tuneup (schema " + std::to_string(version)
                + (writer.empty() ? "" : ", tuneup " + printable(writer)) + "); this build reads up to schema "
                + std::to_string(schema::kSchemaVersion),
            "upgrade tuneup");
    }
    if (!hasMeta || version <= 0)
        fail(Kind::Empty, givenPath, "is a tuneup trace that holds no recording yet",
            "the process was stopped while it created the file; record again");
    file->m_tables = tables.plain;
    file->m_schemaVersion = version;
    return file;
}

sqlite3* TuneupFile::openAnotherReader() const {
    int rc = SQLITE_OK;
    sqlite3* db = openSqlite(m_readPath, m_immutable, rc);
    if (rc != SQLITE_OK) {
        sqlite3_close(db);
        return nullptr;
    }
    return db;
}

TuneupFile::TuneupFile(sqlite3* db, std::string path, bool immutable)
    : m_db(db)
    , m_path(std::move(path))
    , m_immutable(immutable) {
}

TuneupFile::~TuneupFile() {
    // A read that stopped on a damaged page may leave a statement SQLite still counts as open; then
    // sqlite3_close fails (SQLITE_BUSY) and the connection would leak (found by fuzz_tuneup_file).
    while (sqlite3_stmt* open = sqlite3_next_stmt(m_db, nullptr))
        sqlite3_finalize(open);
    sqlite3_close(m_db);
    removeCopy(m_copyDir);
}

TuneupFileSummary TuneupFile::summary(bool eventSpan) const {
    TuneupFileSummary summary;
    summary.path = absolutePath(m_path);
    summary.fileBytes = fileSize(summary.path).value_or(0);
    summary.walBytes = fileSize(summary.path + "-wal").value_or(0);
    summary.schemaVersion = m_schemaVersion;
    const std::set<std::string>& tables = m_tables;

    {
        Statement s(m_db, m_path, "SELECT key, value FROM meta");
        while (s.step())
            summary.meta[s.text(0)] = s.text(1);
    }
    if (tables.count("stats")) {
        Statement s(m_db, m_path, "SELECT name, severity, value, description FROM stats ORDER BY name");
        while (s.step())
            summary.stats.push_back({ s.text(0), s.text(1), s.integer(2), s.text(3) });
    }
    // One scan per table gives the count, the span and the rows whose times the import drops or clamps
    // together (TraceBuilder's rule: times within kMaxTimeNs); a count alone needs no scan.
    for (const std::string& table : kEventTables) {
        if (!tables.count(table)) continue;
        const bool instant = table == "nvtx_marks" || table == "framework_flags" || table == "python_samples"
            || table == "memory_events" || table == "native_samples";
        Statement s(
            m_db, m_path, !eventSpan ? "SELECT count(*), NULL, NULL, 0, 0 FROM " + table : spanQuery(table, instant));
        if (!s.step()) continue;
        summary.eventCounts.push_back({ table, s.integer(0), s.integer(3), s.integer(4) });
        if (!s.isNull(1)) summary.firstNs = std::min(summary.firstNs.value_or(s.integer(1)), s.integer(1));
        if (!s.isNull(2)) summary.lastNs = std::max(summary.lastNs.value_or(s.integer(2)), s.integer(2));
    }
    if (tables.count("thread_states")) {
        Statement s(m_db, m_path, "SELECT count(*) FROM thread_states");
        if (s.step()) summary.threadSamples = s.integer(0);
    }
    if (tables.count("devices")) {
        Statement s(m_db, m_path,
            "SELECT id, name, compute_major, compute_minor, sm_count, global_memory_bytes, memory_bandwidth_gbs "
            "FROM devices ORDER BY id");
        while (s.step())
            summary.devices.push_back({ int(s.integer(0)), s.text(1), int(s.integer(2)), int(s.integer(3)),
                int(s.integer(4)), s.integer(5), s.real(6) });
    }
    if (tables.count("event_counts")) {
        // total(), not sum(): SQLite's sum() fails on an overflow, which a damaged file can hold.
        Statement s(m_db, m_path,
            "SELECT source, tid, total(written), total(dropped) FROM event_counts GROUP BY source, tid "
            "ORDER BY source, tid");
        while (s.step())
            summary.sourceCounts.push_back(
                { s.text(0), s.isNull(1) ? std::nullopt : std::optional<int64_t>(s.integer(1)), clampedCount(s.real(2)),
                    clampedCount(s.real(3)) });
    }
    if (!summary.firstNs) {
        summary.firstNs = summary.metaInteger("start_ns");
        summary.lastNs = summary.metaInteger("end_ns");
    }
    summary.complete = summary.meta.count("end_ns") > 0;
    if (!m_copyDir.empty())
        summary.warnings.push_back(
            "its directory is read-only, so it was read from a copy (with its -wal) in " + m_copyDir);
    if (m_immutable && summary.walBytes > 0)
        summary.warnings.push_back("its directory is read-only, so the last " + std::to_string(summary.walBytes)
            + " bytes of events (in " + summary.path
            + "-wal) were not read; copy the file and its -wal to a "
              "writable directory to read them");
    return summary;
}

std::vector<std::string> TuneupFile::quickCheck(int maxProblems) const {
    std::vector<std::string> problems;
    Statement s(m_db, m_path, "PRAGMA quick_check(" + std::to_string(std::max(1, maxProblems)) + ")");
    while (s.step()) {
        const std::string line = s.text(0);
        if (line != "ok") problems.push_back(line);
    }
    return problems;
}

} // namespace tuneup::analysis
