#pragma once
// A read-only connection to an Nsight Systems SQLite export, for the nsys importer: which tables and
// columns the file has (exports of different nsys versions differ), and queries whose failures become
// ImportErrors naming the file, the table and what to do.

#include <algorithm>
#include <cstdint>
#include <set>
#include <sqlite3.h>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tuneup::analysis {

class NsysDb {
public:
    // Opens `path` read-only (never writes beside it: exports are often in read-only folders). Throws
    // ImportError when SQLite cannot open or parse it.
    explicit NsysDb(std::string path);
    ~NsysDb();
    NsysDb(const NsysDb&) = delete;
    NsysDb& operator=(const NsysDb&) = delete;

    const std::string& path() const { return m_path; }
    const std::set<std::string>& tables() const { return m_tables; }
    bool hasTable(std::string_view table) const { return m_tables.count(std::string(table)) > 0; }
    bool hasColumn(const std::string& table, const std::string& column);
    // t."column" when the table has it, else `fallback`, for SELECT lists over columns that come and go
    // between nsys versions (the table is aliased t in the query).
    std::string columnOr(const std::string& table, const std::string& column, std::string_view fallback = "NULL");
    // Rows in a table without scanning it: exports are append-only, so the largest rowid is the count
    // (0 for an empty or absent table; never more than the file could hold).
    int64_t rowEstimate(const std::string& table);

    // Runs `sql` and calls row(statement) per result row. `what` names the data read, for errors
    // ("reading CUPTI_ACTIVITY_KIND_KERNEL"). Throws ImportError (Corrupt) when SQLite fails.
    template <class Row> void query(const std::string& sql, std::string_view what, Row&& row) {
        sqlite3_stmt* s = prepare(sql, what);
        int rc;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW)
            row(s);
        finish(s, rc, what);
    }

private:
    sqlite3_stmt* prepare(const std::string& sql, std::string_view what);
    void finish(sqlite3_stmt* s, int rc, std::string_view what);
    [[noreturn]] void fail(int rc, std::string_view what);

    std::string m_path;
    sqlite3* m_db = nullptr;
    bool m_export = false; // its tables are an nsys export's: errors can say so
    uint64_t m_fileBytes = 0;
    std::set<std::string> m_tables; // plain tables only (listSqliteTables): a view could run any query
    std::unordered_map<std::string, std::set<std::string>> m_columns;
};

// Column readers. NULL reads as the fallback.
inline int64_t columnInt(sqlite3_stmt* s, int column, int64_t fallback = 0) {
    return sqlite3_column_type(s, column) == SQLITE_NULL ? fallback : sqlite3_column_int64(s, column);
}
inline std::string_view columnText(sqlite3_stmt* s, int column) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, column));
    return p ? std::string_view(p, size_t(sqlite3_column_bytes(s, column))) : std::string_view();
}
// A 64-bit value for the model's 32-bit fields (device, stream, grid, sizes), clamped.
inline int32_t toInt32(int64_t value) {
    return static_cast<int32_t>(std::clamp<int64_t>(value, INT32_MIN, INT32_MAX));
}

// "name" with inner quotes doubled: table and column names come from the file (a fuzzer's may be odd).
std::string quoteIdentifier(std::string_view name);

// True when `tables` are an Nsight Systems export's (StringIds, TARGET_INFO_*, CUPTI_ACTIVITY_KIND_*).
bool hasNsysTables(const std::set<std::string>& tables);
// True when the SQLite file at `path` has an Nsight Systems export's tables. Throws ImportError when
// SQLite cannot list its tables (damaged, cut short, not SQLite).
bool isNsysExport(const std::string& path);

} // namespace tuneup::analysis
