#pragma once
// The one way tuneup opens a SQLite file it reads (a recording, an Nsight Systems export): read-only,
// without locks when nothing else may write it, and defensively, since the file is untrusted input:
// functions and views defined by its schema never run on our behalf, damaged pages are reported as
// such instead of being read as data, and the work SQLite may do for it is bounded (a recursive view
// or a huge computed value ends with an error instead of a hang or an exhausted memory).

#include <cstdint>
#include <map>
#include <set>
#include <sqlite3.h>
#include <string>

namespace tuneup::analysis {

// No value read from a file may be larger (SQLITE_LIMIT_LENGTH): a kernel name or a command line is a
// few kB; a computed blob of gigabytes is an attack.
inline constexpr int kMaxSqliteValueBytes = 64 << 20;

// The steps of SQLite's virtual machine one connection may run. Reading every column of every row of a
// file once takes under one step per byte (0.2 for the Nsight Systems exports of ../shared/traces), so
// kSqliteStepsPerByte leaves room for reading it many times over; kSqliteBaseSteps (about a second)
// is for small files. A query that does not end stops there.
inline constexpr int64_t kSqliteBaseSteps = int64_t(1) << 25;
inline constexpr int64_t kSqliteStepsPerByte = 64;

// A SQLite URI for `path` (percent-encoded: '?', '#' and '%' are legal in file names), read-only;
// `immutable`: the file cannot change while it is read (no -wal beside it), so no locks and no -shm.
std::string sqliteReadUri(const std::string& path, bool immutable);

// Opens `path` as sqliteReadUri says, one connection per thread (no mutex), extended result codes on,
// with the bounds above (the step budget from the size of `path` and its -wal). Returns SQLite's
// result code; `*db` is set even on failure (sqlite3_close it).
int openSqliteForReading(const std::string& path, bool immutable, sqlite3** db);

// The steps a connection opened by openSqliteForReading has run so far, and may run in all.
struct SqliteWork {
    int64_t steps = 0, budget = 0;
};
SqliteWork sqliteWork(sqlite3* db);

// The file's tables as SQLite parsed its schema. Only `plain` ones hold their rows in the file; reading
// any other runs what the file defines (a view's query, a virtual table's module, a generated column's
// expression), so readers use `plain` and say what the others are.
struct SqliteTables {
    std::set<std::string> plain;
    std::map<std::string, std::string> other; // name -> "a view", "a virtual table", ...
};
// Fills `tables`; returns SQLite's result code.
int listSqliteTables(sqlite3* db, SqliteTables& tables);

// What to tell the user when a query on a connection opened here failed with `rc` because of the bounds
// above; "" for any other failure.
std::string sqliteLimitProblem(sqlite3* db, int rc);

} // namespace tuneup::analysis
