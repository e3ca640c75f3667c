#pragma once
// The one way tuneup opens a SQLite file it reads (a recording, an Nsight Systems export): read-only,
// without locks when nothing else may write it, and defensively, since the file is untrusted input:
// functions and views defined by its schema never run on our behalf, damaged pages are reported as
// such instead of being read as data.

#include <sqlite3.h>
#include <string>

namespace tuneup::analysis {

// A SQLite URI for `path` (percent-encoded: '?', '#' and '%' are legal in file names), read-only;
// `immutable`: the file cannot change while it is read (no -wal beside it), so no locks and no -shm.
std::string sqliteReadUri(const std::string& path, bool immutable);

// Opens `path` as sqliteReadUri says, one connection per thread (no mutex), extended result codes on.
// Returns SQLite's result code; `*db` is set even on failure (sqlite3_close it).
int openSqliteForReading(const std::string& path, bool immutable, sqlite3** db);

} // namespace tuneup::analysis
