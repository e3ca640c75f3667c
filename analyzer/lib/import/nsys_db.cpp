#include "import/nsys_db.h"

#include "import/import_error.h"
#include "import/sqlite_open.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>

namespace tuneup::analysis {

namespace {

bool fileExists(const std::string& path) {
    struct stat st { };
    return stat(path.c_str(), &st) == 0;
}

constexpr const char* kExportAgain = "export it again with `nsys export --type sqlite REPORT.nsys-rep`";

} // namespace

NsysDb::NsysDb(std::string path)
    : m_path(std::move(path)) {
    struct stat st { };
    if (stat(m_path.c_str(), &st) != 0)
        throw ImportError(errno == ENOENT ? ImportError::Kind::NotFound : ImportError::Kind::Unreadable, m_path,
            std::string("cannot be read: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode)) throw ImportError(ImportError::Kind::Unreadable, m_path, "is not a regular file");
    m_fileBytes = uint64_t(st.st_size);
    try {
        // An export is written once and closed: immutable reads take no locks and create no -shm beside
        // it. Only a database with a -wal beside it (not an nsys export, but SQLite would need it) is read
        // normally.
        const int rc = openSqliteForReading(m_path, !fileExists(m_path + "-wal"), &m_db);
        if (rc != SQLITE_OK) fail(rc, "opening it");
        // Tables only: a view, a virtual table or generated columns would run what the file defines.
        SqliteTables tables;
        if (const int listed = listSqliteTables(m_db, tables); listed != SQLITE_OK) fail(listed, "listing its tables");
        m_tables = std::move(tables.plain);
        m_export = hasNsysTables(m_tables);
    } catch (...) {
        sqlite3_close(m_db); // the destructor does not run for a constructor that throws
        throw;
    }
}

NsysDb::~NsysDb() {
    sqlite3_close(m_db);
}

bool NsysDb::hasColumn(const std::string& table, const std::string& column) {
    auto it = m_columns.find(table);
    if (it == m_columns.end()) {
        std::set<std::string> columns;
        if (hasTable(table)) {
            query("PRAGMA table_info(" + quoteIdentifier(table) + ")", "reading the columns of " + table,
                [&](sqlite3_stmt* s) { columns.emplace(columnText(s, 1)); });
        }
        it = m_columns.emplace(table, std::move(columns)).first;
    }
    return it->second.count(column) > 0;
}

std::string NsysDb::columnOr(const std::string& table, const std::string& column, std::string_view fallback) {
    return hasColumn(table, column) ? "t." + quoteIdentifier(column) : std::string(fallback);
}

int64_t NsysDb::rowEstimate(const std::string& table) {
    if (!hasTable(table)) return 0;
    int64_t rows = 0;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(
            m_db, ("SELECT coalesce(max(rowid), 0) FROM " + quoteIdentifier(table)).c_str(), -1, &s, nullptr)
        == SQLITE_OK) {
        int rc;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW)
            rows = columnInt(s, 0);
        finish(s, rc, "counting the rows of " + table);
    } else {
        // A table without rowids (not nsys's) is counted the slow way.
        sqlite3_finalize(s);
        query("SELECT count(*) FROM " + quoteIdentifier(table), "counting the rows of " + table,
            [&](sqlite3_stmt* c) { rows = columnInt(c, 0); });
    }
    // A damaged file's rowids can be anything; a row takes at least 4 bytes of the file.
    return std::clamp<int64_t>(rows, 0, int64_t(m_fileBytes / 4));
}

sqlite3_stmt* NsysDb::prepare(const std::string& sql, std::string_view what) {
    sqlite3_stmt* s = nullptr;
    const int rc = sqlite3_prepare_v2(m_db, sql.c_str(), int(sql.size()), &s, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(s);
        fail(rc, what);
    }
    return s;
}

void NsysDb::finish(sqlite3_stmt* s, int rc, std::string_view what) {
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE) fail(rc, what);
}

void NsysDb::fail(int rc, std::string_view what) {
    std::string message = m_db ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
    for (char& c : message) // SQLite quotes damaged schema text, which may be any bytes
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    const std::string context = " (" + message + " while " + std::string(what) + ")";
    if (const std::string limit = sqliteLimitProblem(m_db, rc); !limit.empty())
        throw ImportError(ImportError::Kind::Corrupt, m_path, limit + context);
    // Until its tables are listed, the file is only known not to be a tuneup recording.
    const std::string subject = m_export ? "the Nsight Systems export" : "the SQLite file";
    const std::string hint = m_export ? std::string("; ") + kExportAgain
                                      : std::string("; if it is an Nsight Systems export, ") + kExportAgain;
    switch (rc & 0xff) {
    case SQLITE_NOTADB:
        throw ImportError(ImportError::Kind::Corrupt, m_path,
            "is not a readable SQLite database" + context + "; its header is damaged, or it is another format");
    case SQLITE_CORRUPT:
        throw ImportError(ImportError::Kind::Corrupt, m_path, subject + " is damaged or cut short" + context + hint);
    case SQLITE_IOERR:
        if (rc == SQLITE_IOERR_SHORT_READ)
            throw ImportError(ImportError::Kind::Truncated, m_path, subject + " ends early" + context + hint);
        throw ImportError(ImportError::Kind::Unreadable, m_path, "cannot be read" + context);
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_AUTH:
        throw ImportError(ImportError::Kind::Unreadable, m_path, "cannot be opened" + context);
    case SQLITE_ERROR:
        // A query on a table whose columns are not those of any nsys version: not an export we know.
        throw ImportError(
            ImportError::Kind::Malformed, m_path, "is not shaped like an Nsight Systems export" + context);
    default:
        throw ImportError(ImportError::Kind::Unreadable, m_path, "cannot be read" + context);
    }
}

std::string quoteIdentifier(std::string_view name) {
    std::string quoted = "\"";
    for (char c : name)
        quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
    return quoted + "\"";
}

bool hasNsysTables(const std::set<std::string>& tables) {
    if (tables.count("StringIds") || tables.count("TARGET_INFO_SESSION_START_TIME")) return true;
    return std::any_of(
        tables.begin(), tables.end(), [](const std::string& t) { return t.starts_with("CUPTI_ACTIVITY_KIND_"); });
}

bool isNsysExport(const std::string& path) {
    return hasNsysTables(NsysDb(path).tables());
}

} // namespace tuneup::analysis
