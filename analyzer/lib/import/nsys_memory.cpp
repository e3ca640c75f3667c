#include "import/nsys_memory.h"

#include <algorithm>
#include <string>
#include <unordered_map>

namespace tuneup::analysis {

namespace {

// ENUM_CUDA_DEV_MEM_EVENT_OPER by name when the export has it, else nsys's documented numbering
// (0 allocation, 1 deallocation): code -> whether it frees.
std::unordered_map<int64_t, bool> readOperations(NsysDb& db) {
    std::unordered_map<int64_t, bool> frees;
    const std::string table = "ENUM_CUDA_DEV_MEM_EVENT_OPER";
    if (db.hasTable(table) && db.hasColumn(table, "id") && db.hasColumn(table, "name"))
        db.query("SELECT t.id, t.name FROM " + table + " t", "reading " + table, [&](sqlite3_stmt* s) {
            const std::string_view name = columnText(s, 1);
            if (name.ends_with("DEALLOCATION"))
                frees[columnInt(s, 0)] = true;
            else if (name.ends_with("ALLOCATION"))
                frees[columnInt(s, 0)] = false;
        });
    if (frees.empty()) frees = { { 0, false }, { 1, true } };
    return frees;
}

// Host memory allocated through CUDA (pinned, pageable) is not the GPU's.
bool onHost(MemoryKind kind) {
    return kind == MemoryKind::Pinned || kind == MemoryKind::Pageable;
}

} // namespace

int64_t readNsysMemoryUsage(NsysDb& db, const NsysKinds& kinds, TraceBuilder& builder) {
    const std::string table = kNsysMemoryUsageTable;
    if (!db.hasTable(table) || db.rowEstimate(table) == 0) return 0;
    for (const char* needed : { "start", "bytes", "memoryOperationType" })
        if (!db.hasColumn(table, needed)) {
            builder.stats().add("nsys." + table + ".unreadable", StatSeverity::DataLoss, db.rowEstimate(table),
                "rows of " + table + " not read: the table has no " + needed + " column");
            return 0;
        }
    const std::unordered_map<int64_t, bool> frees = readOperations(db);
    std::string sql = "SELECT t.start, t.bytes, t.memoryOperationType";
    for (const char* c : { "deviceId", "memKind", "address" })
        sql += ", " + db.columnOr(table, c);
    int64_t rows = 0, unreadable = 0;
    db.query(sql + " FROM " + table + " t", "reading " + table, [&](sqlite3_stmt* s) {
        const auto operation = frees.find(columnInt(s, 2, -1));
        const MemoryKind kind
            = sqlite3_column_type(s, 4) == SQLITE_NULL ? MemoryKind::Unknown : kinds.memoryKind(columnInt(s, 4));
        const int64_t device = onHost(kind) ? kHostMemory : columnInt(s, 3, -1);
        if (sqlite3_column_type(s, 0) != SQLITE_INTEGER || sqlite3_column_type(s, 1) != SQLITE_INTEGER
            || operation == frees.end() || (!onHost(kind) && (device < 0 || device > INT32_MAX))) {
            ++unreadable;
            return;
        }
        MemoryEvent e;
        e.timeNs = columnInt(s, 0);
        const int64_t bytes = std::max<int64_t>(columnInt(s, 1), 0);
        e.deltaBytes = operation->second ? -bytes : bytes;
        e.deltaOf = MemoryTotal::Reserved;
        e.device = int32_t(device);
        e.address = uint64_t(columnInt(s, 5));
        builder.addMemoryEvent(e);
        ++rows;
    });
    builder.stats().add("nsys." + table, StatSeverity::Info, rows, "rows read from " + table);
    if (unreadable)
        builder.stats().add("nsys." + table + ".unreadable_rows", StatSeverity::DataLoss, unreadable,
            "rows of " + table
                + " whose time or size is not an integer, or whose operation or GPU is unknown: left out");
    return rows;
}

} // namespace tuneup::analysis
