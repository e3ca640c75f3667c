#include "import/sqlite_open.h"

#include "units.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>

namespace tuneup::analysis {

namespace {

// The progress handler runs every kStepsPerCall steps of the virtual machine.
constexpr int kStepsPerCall = 10000;

struct Budget {
    int64_t calls = 0; // progress handler calls so far
    int64_t maxCalls = 0;
};

int countStep(void* data) {
    auto* budget = static_cast<Budget*>(data);
    return ++budget->calls > budget->maxCalls ? 1 : 0; // non-zero interrupts the statement
}

// tuneup_read_work(): "steps budget", to read a connection's budget back (tests, sqliteWork). The
// function also owns the budget: SQLite destroys it with the connection.
void readWork(sqlite3_context* context, int, sqlite3_value**) {
    const auto* budget = static_cast<const Budget*>(sqlite3_user_data(context));
    const std::string text
        = std::to_string(budget->calls * kStepsPerCall) + " " + std::to_string(budget->maxCalls * kStepsPerCall);
    sqlite3_result_text(context, text.c_str(), int(text.size()), SQLITE_TRANSIENT);
}

uint64_t sizeOf(const std::string& path) {
    struct stat st { };
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) ? uint64_t(st.st_size) : 0;
}

} // namespace

std::string sqliteReadUri(const std::string& path, bool immutable) {
    static const char* kHex = "0123456789ABCDEF";
    std::string absolute = path;
    std::error_code ec;
    if (auto p = std::filesystem::absolute(path, ec); !ec) absolute = p.lexically_normal().string();
    std::string uri = "file:";
    for (unsigned char c : absolute) {
        if (std::isalnum(c) || std::strchr("/-._~", c)) {
            uri += char(c);
        } else {
            uri += '%';
            uri += kHex[c >> 4];
            uri += kHex[c & 15];
        }
    }
    return uri + (immutable ? "?immutable=1" : "?mode=ro");
}

int openSqliteForReading(const std::string& path, bool immutable, sqlite3** db) {
    const int rc = sqlite3_open_v2(sqliteReadUri(path, immutable).c_str(), db,
        SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK || !*db) return rc;
    sqlite3_extended_result_codes(*db, 1);
    sqlite3_db_config(*db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(*db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_limit(*db, SQLITE_LIMIT_LENGTH, kMaxSqliteValueBytes);
    // Work in proportion to the file: saturating, a file of exabytes gets no less than one of gigabytes.
    const uint64_t bytes = std::min<uint64_t>(sizeOf(path) + sizeOf(path + "-wal"), uint64_t(1) << 40);
    auto* budget = new Budget;
    budget->maxCalls = (kSqliteBaseSteps + int64_t(bytes) * kSqliteStepsPerByte) / kStepsPerCall;
    const int created = sqlite3_create_function_v2(*db, "tuneup_read_work", 0, SQLITE_UTF8 | SQLITE_DIRECTONLY, budget,
        readWork, nullptr, nullptr, [](void* p) { delete static_cast<Budget*>(p); });
    if (created != SQLITE_OK) return created; // SQLite destroyed the budget already
    sqlite3_progress_handler(*db, kStepsPerCall, countStep, budget);
    sqlite3_exec(*db, "PRAGMA cell_size_check=ON", nullptr, nullptr, nullptr);
    return rc;
}

SqliteWork sqliteWork(sqlite3* db) {
    SqliteWork work;
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT tuneup_read_work()", -1, &s, nullptr) == SQLITE_OK
        && sqlite3_step(s) == SQLITE_ROW) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
        if (text) sscanf(text, "%" SCNd64 " %" SCNd64, &work.steps, &work.budget);
    }
    sqlite3_finalize(s);
    return work;
}

int listSqliteTables(sqlite3* db, SqliteTables& tables) {
    // PRAGMA table_list (SQLite 3.37) says what SQLite made of each schema entry; older libraries fall back
    // on sqlite_master, where a virtual table is one without a root page.
    static const char* kTableList
        = "SELECT t.name, t.type, CASE WHEN t.type = 'table' THEN (SELECT count(*) FROM pragma_table_xinfo(t.name) x "
          "WHERE x.hidden IN (2, 3)) ELSE 0 END FROM pragma_table_list t WHERE t.schema = 'main' AND t.name <> "
          "'sqlite_schema'";
    static const char* kMaster = "SELECT name, CASE WHEN type = 'table' AND rootpage = 0 THEN 'virtual' ELSE type END, "
                                 "0 FROM sqlite_master WHERE type IN ('table', 'view')";
    sqlite3_stmt* s = nullptr;
    int rc = sqlite3_prepare_v2(db, kTableList, -1, &s, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(s);
        s = nullptr;
        if ((rc = sqlite3_prepare_v2(db, kMaster, -1, &s, nullptr)) != SQLITE_OK) {
            sqlite3_finalize(s);
            return rc;
        }
    }
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        const auto* name = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
        const auto* type = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
        if (!name || !type) continue;
        const std::string kind = type;
        if (kind == "table" && sqlite3_column_int64(s, 2) == 0)
            tables.plain.insert(name);
        else if (kind == "table")
            tables.other[name] = "a table with generated columns";
        else if (kind == "view" || kind == "virtual")
            tables.other[name] = "a " + kind + (kind == "virtual" ? " table" : "");
        else
            tables.other[name] = "a " + kind + " table"; // shadow: the storage of a virtual table
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

std::string sqliteLimitProblem(sqlite3* db, int rc) {
    switch (rc & 0xff) {
    case SQLITE_INTERRUPT: {
        const SqliteWork work = sqliteWork(db);
        return "reading it took more than " + formatCount(work.budget)
            + " steps of SQLite's work, far more than any file of its size needs, and was stopped: the file "
              "defines a query that does not end (a recursive view?) or is damaged";
    }
    case SQLITE_TOOBIG:
        return "it holds a value larger than " + formatBytes(kMaxSqliteValueBytes)
            + ", which no tuneup recording or Nsight Systems export has: the file is damaged or was made to harm";
    case SQLITE_NOMEM:
        return "SQLite ran out of memory reading it";
    default:
        return "";
    }
}

} // namespace tuneup::analysis
