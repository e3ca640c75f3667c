#pragma once
// Reads a trace file back in tests: one open connection, queries that return a scalar, a text or
// rows of nullable texts. Header-only: the agent's unit tests link the agent's static SQLite, the
// integration tests the system one.

#include <cstdint>
#include <gtest/gtest.h>
#include <optional>
#include <sqlite3.h>
#include <string>
#include <vector>

namespace tuneup::test {

using Row = std::vector<std::optional<std::string>>;

class SqliteQuery {
public:
    explicit SqliteQuery(const std::string& path) {
        // Read-write so a WAL left by a killed process is recovered; the tests never write.
        if (sqlite3_open_v2(path.c_str(), &m_db, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
            m_error = m_db ? sqlite3_errmsg(m_db) : "out of memory";
            sqlite3_close(m_db);
            m_db = nullptr;
        }
        if (m_db) sqlite3_busy_timeout(m_db, 5000);
    }
    ~SqliteQuery() { sqlite3_close(m_db); }
    SqliteQuery(const SqliteQuery&) = delete;
    SqliteQuery& operator=(const SqliteQuery&) = delete;

    bool ok() const { return m_db != nullptr; }
    const std::string& error() const { return m_error; }

    // All rows, each column as text (NULL as nullopt). A failed query is a test failure.
    std::vector<Row> rows(const std::string& sql) {
        std::vector<Row> result;
        if (!m_db) {
            ADD_FAILURE() << "no database: " << m_error;
            return result;
        }
        sqlite3_stmt* s = nullptr;
        if (sqlite3_prepare_v2(m_db, sql.c_str(), -1, &s, nullptr) != SQLITE_OK) {
            ADD_FAILURE() << sql << ": " << sqlite3_errmsg(m_db);
            return result;
        }
        int rc;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            Row row;
            for (int i = 0; i < sqlite3_column_count(s); ++i) {
                const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
                row.push_back(text ? std::optional<std::string>(text) : std::nullopt);
            }
            result.push_back(std::move(row));
        }
        if (rc != SQLITE_DONE) ADD_FAILURE() << sql << ": " << sqlite3_errmsg(m_db);
        sqlite3_finalize(s);
        return result;
    }

    // The first column of the first row, as text; nullopt for no row or NULL.
    std::optional<std::string> text(const std::string& sql) {
        auto result = rows(sql);
        return result.empty() || result[0].empty() ? std::nullopt : result[0][0];
    }

    // The first column of the first row as an integer; -1 (and a failure) when missing.
    int64_t scalar(const std::string& sql) {
        auto value = text(sql);
        if (!value) {
            ADD_FAILURE() << "no value for: " << sql;
            return -1;
        }
        return std::stoll(*value);
    }

    std::optional<std::string> meta(const std::string& key) {
        return text("SELECT value FROM meta WHERE key = '" + key + "'");
    }

    // A stats row's value; -1 (and a failure) when absent.
    int64_t stat(const std::string& name) { return scalar("SELECT value FROM stats WHERE name = '" + name + "'"); }

    bool hasStat(const std::string& name) {
        return text("SELECT count(*) FROM stats WHERE name = '" + name + "'").value_or("0") != "0";
    }

private:
    sqlite3* m_db = nullptr;
    std::string m_error;
};

} // namespace tuneup::test
