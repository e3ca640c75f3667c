// TraceDb's event_counts rows (event_counts.h), apart from the per-event inserts in trace_db.cpp.

#include "trace_db.h"

#include <sqlite3.h>

namespace tuneup::agent {

void TraceDb::addEventCount(std::string_view source, int tid, uint64_t written, uint64_t dropped) {
    // A few rows at the end of the recording: no statement kept.
    sqlite3_stmt* s = prepare("INSERT INTO event_counts(source, tid, written, dropped) VALUES (?, ?, ?, ?)");
    if (!s) return;
    sqlite3_bind_text(s, 1, source.data(), int(source.size()), SQLITE_STATIC);
    if (tid > 0)
        sqlite3_bind_int(s, 2, tid);
    else
        sqlite3_bind_null(s, 2);
    sqlite3_bind_int64(s, 3, int64_t(written));
    sqlite3_bind_int64(s, 4, int64_t(dropped));
    step(s);
    sqlite3_finalize(s);
}

} // namespace tuneup::agent
