#include "import/nsys_sqlite.h"

#include "import/import_error.h"
#include "import/nsys_capture.h"
#include "import/nsys_db.h"
#include "import/nsys_kinds.h"
#include "import/nsys_memory.h"
#include "model/trace_builder.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unordered_map>
#include <vector>

namespace tuneup::analysis {

namespace {

const std::string kKernels = "CUPTI_ACTIVITY_KIND_KERNEL";
const std::string kMemcpys = "CUPTI_ACTIVITY_KIND_MEMCPY";
const std::string kMemsets = "CUPTI_ACTIVITY_KIND_MEMSET";
const std::string kSyncs = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION";
const std::string kRuntime = "CUPTI_ACTIVITY_KIND_RUNTIME";
const std::string kDriver = "CUPTI_ACTIVITY_KIND_DRIVER"; // driver calls are in RUNTIME in the exports we know
const std::string kNvtx = "NVTX_EVENTS";
const std::string kCudaTables[] = { kKernels, kMemcpys, kMemsets, kSyncs, kRuntime, kDriver };

// Serialized GlobalId: (VM id << 48) | (pid << 24) | tid; a globalPid has tid 0.
int64_t pidOf(int64_t globalId) {
    return (globalId >> 24) & 0xFFFFFF;
}
int64_t tidOf(int64_t globalId) {
    return globalId & 0xFFFFFF;
}

// CUPTI marks "none" in 32-bit ids (stream, event) with 0xFFFFFFFF; the model with -1.
int64_t idOrNone(int64_t value) {
    return value < 0 || value >= 0xFFFFFFFFLL ? -1 : value;
}

// What a CUPTI synchronisation record was, from the ids it carries (-1 = none): a context sync has neither
// stream nor event, a stream sync only a stream, an event sync only an event, a stream wait both.
SyncType syncTypeOf(int64_t stream, int64_t event) {
    if (event < 0) return stream < 0 ? SyncType::ContextSynchronize : SyncType::StreamSynchronize;
    return stream < 0 ? SyncType::EventSynchronize : SyncType::StreamWaitEvent;
}

class NsysImport {
public:
    NsysImport(NsysDb& db, TraceBuilder& builder, const NsysImportOptions& options, uint64_t fileBytes)
        : m_db(db)
        , m_builder(builder)
        , m_options(options)
        , m_fileBytes(fileBytes)
        , m_kinds(NsysKinds::read(db)) {
        m_hasStrings
            = db.hasTable("StringIds") && db.hasColumn("StringIds", "id") && db.hasColumn("StringIds", "value");
    }

    void run() {
        m_cudaTraceSetting = readNsysMetadata(m_db, m_builder.info());
        const int64_t cudaRows = countRows();
        if (cudaRows == 0 && m_db.rowEstimate(kNvtx) == 0)
            throw ImportError(
                ImportError::Kind::NotATrace, m_db.path(), nsysNoActivityMessage(m_db, m_cudaTraceSetting));
        decideCorrelationKeys();

        m_builder.reserve({ size_t(m_db.rowEstimate(kKernels)), size_t(m_db.rowEstimate(kMemcpys)),
            size_t(m_db.rowEstimate(kMemsets)), size_t(m_db.rowEstimate(kSyncs)),
            size_t(m_db.rowEstimate(kRuntime) + m_db.rowEstimate(kDriver)), size_t(m_db.rowEstimate(kNvtx)) });
        readApiCalls(kRuntime, std::nullopt);
        readApiCalls(kDriver, ApiKind::Driver);
        readKernels();
        readMemcpys();
        readMemsets();
        readSyncs();
        m_rowsRead += uint64_t(readNsysMemoryUsage(m_db, m_kinds, m_builder));
        m_readTables.insert(kNsysMemoryUsageTable);
        readNvtx();
        readNsysDevices(m_db, m_gpuPids, m_builder);
        readNames();
        noteNsysTablesNotRead(m_db, m_readTables, m_builder.stats());
        if (m_withoutTimes)
            m_builder.stats().add("times.not_integers", StatSeverity::DataLoss, m_withoutTimes,
                "events whose start or end is NULL or not an integer (a damaged or altered export): left out");
        if (cudaRows == 0)
            m_builder.stats().notes.push_back("the Nsight Systems capture recorded no CUDA activity (no kernels, "
                                              "copies or CUDA API calls), only NVTX events");
        m_builder.stats().eventsRead = m_rowsRead;
        m_builder.stats().bytesRead = m_fileBytes;
    }

private:
    // ---- strings ------------------------------------------------------------------------------------

    // SELECT expressions for a column that references StringIds (some exports hold the text itself):
    // its value and its text through a LEFT JOIN aliased `alias`.
    struct NameColumn {
        std::string id = "NULL", text = "NULL", join;
    };
    NameColumn nameColumn(const std::string& table, const std::string& column, const std::string& alias) {
        NameColumn n;
        if (!m_db.hasColumn(table, column)) return n;
        n.id = "t." + quoteIdentifier(column);
        if (m_hasStrings) {
            n.text = "CASE WHEN typeof(" + n.id + ") = 'text' THEN " + n.id + " ELSE " + alias + ".value END";
            n.join = " LEFT JOIN StringIds " + alias + " ON " + alias + ".id = " + n.id;
        } else
            n.text = "CASE WHEN typeof(" + n.id + ") = 'text' THEN " + n.id + " END";
        return n;
    }
    // The interned name of a row's string column; integer ids are interned once per cache (one per
    // transform: API names lose their version tag, kernel names are kept whole).
    using NameCache = std::unordered_map<int64_t, StringId>;
    template <class Transform>
    StringId name(sqlite3_stmt* s, int idColumn, int textColumn, NameCache& cache, Transform&& transform) {
        const bool byId = sqlite3_column_type(s, idColumn) == SQLITE_INTEGER;
        if (byId) {
            const auto it = cache.find(sqlite3_column_int64(s, idColumn));
            if (it != cache.end()) return it->second;
        }
        const StringId id = m_builder.intern(transform(columnText(s, textColumn)));
        if (byId) cache.emplace(sqlite3_column_int64(s, idColumn), id);
        return id;
    }
    StringId name(sqlite3_stmt* s, int idColumn, int textColumn) {
        return name(s, idColumn, textColumn, m_names, [](std::string_view v) { return v; });
    }

    // ---- progress and bookkeeping -------------------------------------------------------------------

    void rowRead() {
        ++m_rowsRead;
        if (m_options.progress && (m_rowsRead & 0xFFFF) == 0 && m_totalRows > 0)
            m_options.progress(
                uint64_t(double(m_fileBytes) * double(std::min(m_rowsRead, m_totalRows)) / double(m_totalRows)));
    }
    void tableRead(const std::string& table, int64_t rows) {
        m_builder.stats().add("nsys." + table, StatSeverity::Info, rows, "rows read from " + table);
        m_readTables.insert(table);
    }
    void seen(int64_t startNs, int64_t endNs) { m_lastNs = std::max({ m_lastNs, startNs, endNs }); }
    // A row's times, when both are integers; a NULL or text time is none (a damaged or altered export):
    // the row is left out and counted, never read as t = 0. An end before the start is TraceBuilder's to
    // clamp and count.
    bool times(sqlite3_stmt* s, int64_t& start, int64_t& end) {
        if (sqlite3_column_type(s, 0) != SQLITE_INTEGER || sqlite3_column_type(s, 1) != SQLITE_INTEGER) {
            ++m_withoutTimes;
            rowRead();
            return false;
        }
        start = columnInt(s, 0);
        end = columnInt(s, 1);
        return true;
    }
    // A table that lacks the columns every nsys version has is skipped, and the import says so.
    bool usable(const std::string& table) {
        if (!m_db.hasTable(table)) return false;
        if (m_db.hasColumn(table, "start") && m_db.hasColumn(table, "end")) return true;
        m_builder.stats().add("nsys." + table + ".unreadable", StatSeverity::DataLoss, m_db.rowEstimate(table),
            "rows of " + table + " not read: the table has no start/end columns");
        m_readTables.insert(table);
        return false;
    }
    // The model's correlation key: CUPTI correlation ids are unique within a process only, so a capture of
    // several processes keys them by (pid, id).
    uint64_t correlation(int64_t pid, int64_t id) const {
        if (id <= 0) return 0;
        return m_perProcessCorrelation ? (uint64_t(pid) << 32) | uint64_t(uint32_t(id)) : uint64_t(id);
    }

    // ---- tables -------------------------------------------------------------------------------------

    int64_t countRows() {
        int64_t cuda = 0;
        for (const std::string& t : kCudaTables)
            cuda += m_db.rowEstimate(t);
        m_totalRows = cuda + m_db.rowEstimate(kNvtx);
        return cuda;
    }

    void decideCorrelationKeys() {
        std::set<int64_t> pids;
        for (const std::string& table : { kRuntime, kDriver })
            if (m_db.hasTable(table) && m_db.hasColumn(table, "globalTid"))
                m_db.query("SELECT DISTINCT (globalTid >> 24) & 16777215 FROM " + quoteIdentifier(table),
                    "reading the processes of " + table, [&](sqlite3_stmt* s) { pids.insert(columnInt(s, 0)); });
        m_perProcessCorrelation = pids.size() > 1;
        if (m_perProcessCorrelation)
            m_builder.stats().add("nsys.processes_with_cuda_calls", StatSeverity::Info, int64_t(pids.size()),
                "processes that made CUDA calls: correlation ids are keyed by process ((pid << 32) | id)");
    }

    void readApiCalls(const std::string& table, std::optional<ApiKind> kind) {
        if (!usable(table)) return;
        const NameColumn n = nameColumn(table, "nameId", "s");
        const std::string sql = "SELECT t.start, t.end, " + m_db.columnOr(table, "eventClass") + ", "
            + m_db.columnOr(table, "globalTid") + ", " + m_db.columnOr(table, "correlationId") + ", " + n.id + ", "
            + n.text + " FROM " + quoteIdentifier(table) + " t" + n.join;
        int64_t rows = 0;
        m_db.query(sql, "reading " + table, [&](sqlite3_stmt* s) {
            ApiCall a;
            if (!times(s, a.startNs, a.endNs)) return;
            a.api = kind ? *kind : m_kinds.apiKind(columnInt(s, 2, 0));
            const int64_t global = columnInt(s, 3);
            a.thread = thread(pidOf(global), tidOf(global));
            a.correlation = correlation(pidOf(global), columnInt(s, 4));
            a.name = name(s, 5, 6, m_apiNames, nsysApiName);
            m_builder.addApiCall(a);
            seen(a.startNs, a.endNs);
            ++rows;
            rowRead();
        });
        tableRead(table, rows);
    }

    void readKernels() {
        if (!usable(kKernels)) return;
        // The demangled name, as Kineto and the tuneup agent record it; older columns as a fallback.
        std::string nameColumnName = "demangledName";
        for (const char* c : { "demangledName", "name", "shortName", "mangledName" })
            if (m_db.hasColumn(kKernels, c)) {
                nameColumnName = c;
                break;
            }
        const NameColumn n = nameColumn(kKernels, nameColumnName, "s");
        std::string sql = "SELECT t.start, t.end";
        for (const char* c : { "deviceId", "streamId", "correlationId", "globalPid", "gridX", "gridY", "gridZ",
                 "blockX", "blockY", "blockZ", "registersPerThread", "staticSharedMemory", "dynamicSharedMemory" })
            sql += ", " + m_db.columnOr(kKernels, c);
        sql += ", " + n.id + ", " + n.text + " FROM " + kKernels + " t" + n.join;
        int64_t rows = 0;
        m_db.query(sql, "reading " + kKernels, [&](sqlite3_stmt* s) {
            Kernel k;
            if (!times(s, k.startNs, k.endNs)) return;
            k.device = toInt32(columnInt(s, 2, -1));
            k.stream = toInt32(idOrNone(columnInt(s, 3, -1)));
            const int64_t pid = pidOf(columnInt(s, 5));
            k.correlation = correlation(pid, columnInt(s, 4));
            k.gridX = toInt32(columnInt(s, 6)), k.gridY = toInt32(columnInt(s, 7)), k.gridZ = toInt32(columnInt(s, 8));
            k.blockX = toInt32(columnInt(s, 9)), k.blockY = toInt32(columnInt(s, 10)),
            k.blockZ = toInt32(columnInt(s, 11));
            k.registersPerThread = toInt32(columnInt(s, 12));
            k.sharedMemoryBytes = toInt32(int64_t(toInt32(columnInt(s, 13))) + toInt32(columnInt(s, 14)));
            k.name = name(s, 15, 16);
            m_builder.addKernel(k);
            m_gpuPids.insert(pid);
            seen(k.startNs, k.endNs);
            ++rows;
            rowRead();
        });
        tableRead(kKernels, rows);
    }

    void readMemcpys() {
        if (!usable(kMemcpys)) return;
        std::string sql = "SELECT t.start, t.end";
        for (const char* c :
            { "deviceId", "streamId", "correlationId", "globalPid", "bytes", "copyKind", "srcKind", "dstKind" })
            sql += ", " + m_db.columnOr(kMemcpys, c);
        sql += " FROM " + kMemcpys + " t";
        int64_t rows = 0;
        m_db.query(sql, "reading " + kMemcpys, [&](sqlite3_stmt* s) {
            Memcpy m;
            if (!times(s, m.startNs, m.endNs)) return;
            m.device = toInt32(columnInt(s, 2, -1));
            m.stream = toInt32(idOrNone(columnInt(s, 3, -1)));
            const int64_t pid = pidOf(columnInt(s, 5));
            m.correlation = correlation(pid, columnInt(s, 4));
            m.bytes = columnInt(s, 6, -1);
            m.copyKind = m_kinds.copyKind(columnInt(s, 7, -1));
            m.srcKind
                = sqlite3_column_type(s, 8) == SQLITE_NULL ? MemoryKind::Unknown : m_kinds.memoryKind(columnInt(s, 8));
            m.dstKind
                = sqlite3_column_type(s, 9) == SQLITE_NULL ? MemoryKind::Unknown : m_kinds.memoryKind(columnInt(s, 9));
            m_builder.addMemcpy(m);
            m_gpuPids.insert(pid);
            seen(m.startNs, m.endNs);
            ++rows;
            rowRead();
        });
        tableRead(kMemcpys, rows);
    }

    void readMemsets() {
        if (!usable(kMemsets)) return;
        std::string sql = "SELECT t.start, t.end";
        for (const char* c : { "deviceId", "streamId", "correlationId", "globalPid", "bytes", "memKind" })
            sql += ", " + m_db.columnOr(kMemsets, c);
        sql += " FROM " + kMemsets + " t";
        int64_t rows = 0;
        m_db.query(sql, "reading " + kMemsets, [&](sqlite3_stmt* s) {
            Memset m;
            if (!times(s, m.startNs, m.endNs)) return;
            m.device = toInt32(columnInt(s, 2, -1));
            m.stream = toInt32(idOrNone(columnInt(s, 3, -1)));
            const int64_t pid = pidOf(columnInt(s, 5));
            m.correlation = correlation(pid, columnInt(s, 4));
            m.bytes = columnInt(s, 6, -1);
            m.memoryKind
                = sqlite3_column_type(s, 7) == SQLITE_NULL ? MemoryKind::Unknown : m_kinds.memoryKind(columnInt(s, 7));
            m_builder.addMemset(m);
            m_gpuPids.insert(pid);
            seen(m.startNs, m.endNs);
            ++rows;
            rowRead();
        });
        tableRead(kMemsets, rows);
    }

    void readSyncs() {
        if (!usable(kSyncs)) return;
        std::string sql = "SELECT t.start, t.end";
        for (const char* c : { "deviceId", "streamId", "correlationId", "globalPid", "syncType", "eventId" })
            sql += ", " + m_db.columnOr(kSyncs, c);
        sql += " FROM " + kSyncs + " t";
        // nsys versions disagree on the syncType codes (2024.5 writes 1 for cudaDeviceSynchronize, 2025.1
        // writes 4; both write 2 for cudaStreamSynchronize), but CUPTI defines which ids each type has.
        const bool byFields = m_db.hasColumn(kSyncs, "streamId") && m_db.hasColumn(kSyncs, "eventId");
        int64_t rows = 0;
        m_db.query(sql, "reading " + kSyncs, [&](sqlite3_stmt* s) {
            Sync y;
            if (!times(s, y.startNs, y.endNs)) return;
            y.device = toInt32(columnInt(s, 2, -1));
            y.stream = toInt32(idOrNone(columnInt(s, 3, -1)));
            const int64_t pid = pidOf(columnInt(s, 5));
            y.correlation = correlation(pid, columnInt(s, 4));
            y.eventId = idOrNone(columnInt(s, 7, -1));
            y.type = byFields ? syncTypeOf(y.stream, y.eventId) : m_kinds.syncType(columnInt(s, 6, 0));
            m_builder.addSync(y);
            seen(y.startNs, y.endNs);
            ++rows;
            rowRead();
        });
        tableRead(kSyncs, rows);
    }

    // NVTX ranges become user annotations (the tuneup importer does the same with its nvtx_ranges), so
    // ProfilerStep#N, step and --step-range ranges are found as steps. Marks with an integer payload in
    // the "tuneup" domain are the Python bootstrap's facts, as in a tuneup file.
    void readNvtx() {
        if (!usable(kNvtx)) return;
        // Ranges still open when the capture stopped end with it.
        int64_t captureEnd = m_lastNs;
        m_db.query("SELECT max(CASE WHEN typeof(t.start) = 'integer' THEN t.start END), max(CASE WHEN typeof(t.end) = "
                   "'integer' THEN t.end END) FROM "
                + kNvtx + " t",
            "reading " + kNvtx, [&](sqlite3_stmt* s) {
                captureEnd = std::max({ captureEnd, columnInt(s, 0), columnInt(s, 1) });
            });

        const NameColumn n = nameColumn(kNvtx, "textId", "s");
        std::string sql = "SELECT t.start, t.end, " + m_db.columnOr(kNvtx, "eventType") + ", "
            + m_db.columnOr(kNvtx, "text") + ", " + n.id + ", " + n.text + ", " + m_db.columnOr(kNvtx, "globalTid")
            + ", " + m_db.columnOr(kNvtx, "domainId");
        for (const char* c : { "int64Value", "uint64Value", "int32Value", "uint32Value" })
            sql += ", " + m_db.columnOr(kNvtx, c);
        sql += " FROM " + kNvtx + " t" + n.join;

        struct Mark {
            int64_t timeNs, domain, value;
            StringId name;
        };
        std::vector<Mark> marks;
        std::map<int64_t, std::string> domains;
        int64_t ranges = 0, unclosed = 0, markCount = 0, rows = 0;
        m_db.query(sql, "reading " + kNvtx, [&](sqlite3_stmt* s) {
            ++rows;
            rowRead();
            const NvtxEventKind kind = m_kinds.nvtxEvent(columnInt(s, 2, -1));
            const bool timed = sqlite3_column_type(s, 0) == SQLITE_INTEGER;
            const bool open = sqlite3_column_type(s, 1) == SQLITE_NULL;
            if ((kind == NvtxEventKind::Mark || kind == NvtxEventKind::PushPopRange
                    || kind == NvtxEventKind::StartEndRange)
                && (!timed || (!open && sqlite3_column_type(s, 1) != SQLITE_INTEGER))) {
                ++m_withoutTimes;
                return;
            }
            const std::string_view text
                = sqlite3_column_type(s, 3) != SQLITE_NULL ? columnText(s, 3) : columnText(s, 5);
            const int64_t global = columnInt(s, 6);
            switch (kind) {
            case NvtxEventKind::PushPopRange:
            case NvtxEventKind::StartEndRange: {
                Annotation a;
                a.startNs = columnInt(s, 0);
                if (open) {
                    a.endNs = std::max(captureEnd, a.startNs);
                    ++unclosed;
                } else
                    a.endNs = columnInt(s, 1);
                // A start/end range may end on another thread: it is shown on the thread that started it.
                a.thread = thread(pidOf(global), tidOf(global));
                a.name = m_builder.intern(text);
                m_builder.addAnnotation(a);
                seen(a.startNs, a.endNs);
                ++ranges;
                break;
            }
            case NvtxEventKind::Mark:
                ++markCount;
                for (int c = 8; c < 12; ++c)
                    if (sqlite3_column_type(s, c) == SQLITE_INTEGER) {
                        marks.push_back({ columnInt(s, 0), columnInt(s, 7), columnInt(s, c), m_builder.intern(text) });
                        break;
                    }
                break;
            case NvtxEventKind::DomainCreate:
                domains[columnInt(s, 7)] = std::string(text);
                break;
            case NvtxEventKind::ThreadName:
                m_nvtxThreadNames[{ pidOf(global), tidOf(global) }] = std::string(text);
                break;
            case NvtxEventKind::Other:
                break;
            }
        });
        tableRead(kNvtx, rows);
        int64_t facts = 0;
        for (const Mark& mark : marks) {
            const auto domain = domains.find(mark.domain);
            if (domain == domains.end() || domain->second != "tuneup") continue;
            m_builder.addProgramFact({ mark.timeNs, mark.name, mark.value });
            ++facts;
        }
        auto& stats = m_builder.stats();
        stats.add("nsys.nvtx.ranges", StatSeverity::Info, ranges,
            "NVTX push/pop and start/end ranges, read as user annotations");
        if (unclosed)
            stats.add("nsys.nvtx.unclosed_ranges", StatSeverity::Info, unclosed,
                "NVTX ranges still open when the capture stopped: they end with the capture");
        if (markCount)
            stats.add("nsys.nvtx.marks", StatSeverity::Info, markCount,
                "NVTX marks: only the tuneup domain's (" + std::to_string(facts) + ") are modelled, as program facts");
        if (!domains.empty()) {
            std::string names;
            for (const auto& [id, domain] : domains)
                names += (names.empty() ? "" : ", ") + domain;
            stats.add("nsys.nvtx.domains", StatSeverity::Info, int64_t(domains.size()),
                "NVTX domains (their ranges are annotations like the default domain's): " + names);
        }
    }

    // Thread and process names, for the threads and processes that have events.
    void readNames() {
        const std::string threads = "ThreadNames";
        if (m_db.hasTable(threads) && m_db.hasColumn(threads, "globalTid")) {
            const NameColumn n = nameColumn(threads, "nameId", "s");
            m_db.query("SELECT t.globalTid, " + n.id + ", " + n.text + " FROM " + threads + " t" + n.join,
                "reading " + threads, [&](sqlite3_stmt* s) {
                    const int64_t global = columnInt(s, 0);
                    if (m_threads.count({ pidOf(global), tidOf(global) }) && !columnText(s, 2).empty())
                        m_builder.setThreadName(pidOf(global), tidOf(global), columnText(s, 2));
                });
        }
        // A name the program gave its thread through NVTX wins over the OS's.
        for (const auto& [key, name] : m_nvtxThreadNames)
            if (m_threads.count(key)) m_builder.setThreadName(key.first, key.second, name);

        std::set<int64_t> pids = m_gpuPids;
        for (const auto& [pid, tid] : m_threads)
            pids.insert(pid);
        const std::string processes = "PROCESSES";
        if (m_db.hasTable(processes) && m_db.hasColumn(processes, "pid") && m_db.hasColumn(processes, "name"))
            m_db.query("SELECT t.pid, t.name FROM " + processes + " t", "reading " + processes, [&](sqlite3_stmt* s) {
                if (pids.count(columnInt(s, 0)) && !columnText(s, 1).empty())
                    m_builder.setProcessName(columnInt(s, 0), columnText(s, 1));
            });
    }

    ThreadIndex thread(int64_t pid, int64_t tid) {
        m_threads.insert({ pid, tid });
        return m_builder.thread(pid, tid);
    }

    NsysDb& m_db;
    TraceBuilder& m_builder;
    const NsysImportOptions& m_options;
    uint64_t m_fileBytes;
    NsysKinds m_kinds;
    bool m_hasStrings = false;
    bool m_perProcessCorrelation = false;
    NameCache m_names, m_apiNames; // StringIds id -> interned, as is / as an API name
    std::set<std::pair<int64_t, int64_t>> m_threads;
    std::map<std::pair<int64_t, int64_t>, std::string> m_nvtxThreadNames;
    std::set<int64_t> m_gpuPids;
    std::set<std::string> m_readTables;
    std::string m_cudaTraceSetting;
    int64_t m_lastNs = 0;
    uint64_t m_rowsRead = 0, m_totalRows = 0;
    int64_t m_withoutTimes = 0;
};

} // namespace

TraceModel importNsysSqlite(const std::string& path, const NsysImportOptions& options) {
    const auto started = std::chrono::steady_clock::now();
    NsysDb db(path);
    if (!hasNsysTables(db.tables()))
        throw ImportError(ImportError::Kind::NotATrace, path,
            "an SQLite database but not an Nsight Systems export (no StringIds, TARGET_INFO_* or CUPTI_ACTIVITY_KIND_* "
            "tables)");
    struct stat st { };
    const uint64_t fileBytes = stat(path.c_str(), &st) == 0 ? uint64_t(st.st_size) : 0;

    TraceBuilder builder(SourceFormat::NsysSqlite, path);
    NsysImport(db, builder, options, fileBytes).run();
    if (options.progress) options.progress(fileBytes);
    TraceModel model = builder.finish();
    model.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return model;
}

} // namespace tuneup::analysis
