#include "trace_db.h"

#include "log.h"
#include "sqlite_fd_guard.h"
#include "trace_db_bind.h"
#include "trace_schema.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace tuneup::agent {

namespace {

// "database or disk is full" is SQLite's word for any short write: a full disk, or the per-file limit
// RLIMIT_FSIZE. Say which, so that nobody frees disk space when a limit was the cause.
std::string fullCause(const std::string& path) {
    const size_t slash = path.rfind('/');
    const std::string directory = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    struct statvfs disk { };
    if (statvfs(directory.c_str(), &disk) == 0) {
        const unsigned long long available = (unsigned long long)disk.f_bavail * disk.f_frsize;
        if (available < (1ull << 20))
            return " (" + std::string(strerror(ENOSPC)) + ": " + std::to_string(available) + " bytes free in "
                + directory + ")";
    }
    if (rlimit limit {}; getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        return " (the file size limit, RLIMIT_FSIZE = " + std::to_string((unsigned long long)limit.rlim_cur)
            + " bytes, was reached)";
    return "";
}

} // namespace

void TraceDb::initializeLibrary() {
    // Only the writer thread uses this private SQLite, so it needs no mutexes, and must have none:
    // a fork() while the writer holds one of SQLite's global mutexes (in sqlite3_initialize, in
    // malloc accounting) left the child's writer blocked on it forever.
    static bool initialized = false;
    if (initialized) return;
    initialized = true;
    sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
    sqlite3_initialize();
    installSqliteFdGuard();
}

std::unique_ptr<TraceDb> TraceDb::create(const std::string& path, std::string& error, bool* existed) {
    // Claim the name first: of two processes creating one file at once, one gets it and the other
    // learns it exists, instead of both writing a schema into it ("database is locked").
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (existed) *existed = fd < 0 && errno == EEXIST;
    if (fd < 0) {
        error = "cannot create " + path + ": " + strerror(errno);
        return nullptr;
    }
    ::close(fd);
    sqlite3* db = nullptr;
    int rc
        = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        error = "cannot create " + path + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return nullptr;
    }
    // Another process may glance at the new file (TraceDb::reopen, to see whose it is) while the
    // schema goes in: wait for it rather than fail.
    sqlite3_busy_timeout(db, 2000);
    std::unique_ptr<TraceDb> trace(new TraceDb(db, path));
    // WAL + synchronous=OFF: a killed process loses nothing committed (the OS keeps the pages);
    // only a machine crash could. Large pages and cache make bulk inserts cheap.
    const std::string setup = "PRAGMA page_size=65536; PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF;"
                              "PRAGMA cache_size=-8192; PRAGMA temp_store=MEMORY; PRAGMA wal_autocheckpoint=4096;"
                              "PRAGMA application_id="
        + std::to_string(schema::kApplicationId) + "; PRAGMA user_version=" + std::to_string(schema::kSchemaVersion)
        + ";";
    if (!trace->exec(setup.c_str()) || !trace->exec("BEGIN") || !trace->exec(std::string(schema::schemaSql()).c_str())
        || !trace->exec("COMMIT")) {
        trace->recordFailure(sqlite3_errcode(db));
        error = "cannot write the schema into " + path + ": " + trace->failure();
        // The name was claimed by us a moment ago: leave no half-made file (a full disk, say) behind.
        trace.reset();
        for (const char* suffix : { "", "-wal", "-shm" })
            unlink((path + suffix).c_str());
        return nullptr;
    }
    return trace;
}

std::unique_ptr<TraceDb> TraceDb::reopen(const std::string& path, std::string& error) {
    sqlite3* db = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        error = "cannot open " + path + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return nullptr;
    }
    // The file may be one another process is creating this very moment: wait for its schema
    // rather than fail, and say quietly (to the caller) when it is no finished tuneup trace.
    sqlite3_busy_timeout(db, 2000);
    std::unique_ptr<TraceDb> trace(new TraceDb(db, path));
    sqlite3_stmt* format = nullptr;
    const bool isTrace
        = sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'format'", -1, &format, nullptr) == SQLITE_OK
        && sqlite3_step(format) == SQLITE_ROW && sqlite3_column_text(format, 0)
        && reinterpret_cast<const char*>(sqlite3_column_text(format, 0)) == schema::kFormatName;
    sqlite3_finalize(format);
    if (!isTrace) {
        error = path + " is not a tuneup trace";
        return nullptr;
    }
    trace->exec("PRAGMA synchronous=OFF; PRAGMA cache_size=-16384;");
    // Go on numbering strings after the ones already written; reload them for interning.
    sqlite3_stmt* s = trace->prepare("SELECT id, value FROM strings");
    while (s && sqlite3_step(s) == SQLITE_ROW) {
        const int64_t id = sqlite3_column_int64(s, 0);
        trace->m_strings.emplace(reinterpret_cast<const char*>(sqlite3_column_text(s, 1)), id);
        trace->m_nextStringId = std::max(trace->m_nextStringId, id + 1);
    }
    sqlite3_finalize(s);
    return trace;
}

TraceDb::TraceDb(sqlite3* db, std::string path)
    : m_db(db)
    , m_path(std::move(path)) {
}

TraceDb::~TraceDb() {
    if (m_inTransaction) commit();
    finalizeStatements();
    // Leave the WAL in place only if closing fails; a clean close checkpoints it into the file.
    sqlite3_close(m_db);
}

void TraceDb::finalizeStatements() {
    for (sqlite3_stmt** s :
        { &m_insertString, &m_setMeta, &m_setStat, &m_addThread, &m_nameThread, &m_addProcess, &m_endProcess,
            &m_addDomain, &m_nameCategory, &m_addRange, &m_addMark, &m_addFlag, &m_addThreadState, &m_pythonCall,
            &m_pythonSample, &m_nativeSample, &m_kernel, &m_memcpy, &m_memset, &m_sync, &m_api, &m_device, &m_gemmCall,
            &m_convCall, &m_externalCorrelation, &m_memory, &m_allocatorReading, &m_allocatorPeak }) {
        sqlite3_finalize(*s);
        *s = nullptr;
    }
}

bool TraceDb::exec(const char* sql) {
    return m_db && sqlite3_exec(m_db, sql, nullptr, nullptr, nullptr) == SQLITE_OK;
}

sqlite3_stmt* TraceDb::prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (m_failed || !m_db) return nullptr; // nothing is written after a failure: say nothing more either
    if (sqlite3_prepare_v3(m_db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, nullptr) != SQLITE_OK)
        TUNEUP_LOG(Warn, "%s: cannot prepare statement: %s", m_path.c_str(), sqlite3_errmsg(m_db));
    return s;
}

bool TraceDb::step(sqlite3_stmt* s) {
    if (!s || m_failed) return false;
    const int rc = sqlite3_step(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
        recordFailure(rc);
        sqlite3_reset(s);
        return false;
    }
    sqlite3_reset(s);
    if (!m_dimensionsDirty && !isEventStatement(s)) m_dimensionsDirty = true;
    return true;
}

bool TraceDb::isEventStatement(sqlite3_stmt* s) const {
    for (sqlite3_stmt* event : { m_addRange, m_addMark, m_addFlag, m_addThreadState, m_pythonCall, m_pythonSample,
             m_nativeSample, m_kernel, m_memcpy, m_memset, m_sync, m_api, m_gemmCall, m_convCall, m_externalCorrelation,
             m_memory, m_allocatorReading, m_allocatorPeak })
        if (s == event) return true;
    return false;
}

void TraceDb::fail(const std::string& why) {
    recordFailure(SQLITE_IOERR);
    m_failure = why;
    m_failureErrno = 0;
}

void TraceDb::recordFailure(int rc) {
    if (m_failed) return;
    m_failed = true;
    m_failureErrno = m_db ? sqlite3_system_errno(m_db) : 0;
    const int code = m_db && sqlite3_errcode(m_db) != SQLITE_OK ? sqlite3_errcode(m_db) : rc;
    m_failure = m_db && sqlite3_errcode(m_db) != SQLITE_OK ? sqlite3_errmsg(m_db) : sqlite3_errstr(rc);
    // SQLite keeps no errno for a short write, and often loses it for a failed one: say which limit it was.
    const std::string limit = (code & 0xff) == SQLITE_FULL || (code & 0xff) == SQLITE_IOERR ? fullCause(m_path) : "";
    if (!limit.empty())
        m_failure += limit;
    else if (m_failureErrno != 0)
        m_failure += std::string(" (") + strerror(m_failureErrno) + ")";
    // Undo what the transaction wrote so far: the file stays as it was at the last commit. SQLite may
    // have rolled back already (a full disk), hence the check rather than a ROLLBACK that would fail.
    if (m_db && !sqlite3_get_autocommit(m_db)) exec("ROLLBACK");
    m_inTransaction = false;
    m_failedWithDimensions = m_dimensionsDirty;
    m_dimensionsDirty = false;
    m_gpuRecordsLost += m_gpuRecordsWritten - m_gpuRecordsCommitted;
    m_gpuRecordsWritten = m_gpuRecordsCommitted;
}

bool TraceDb::stepGpuRecord(sqlite3_stmt* s) {
    if (step(s)) {
        ++m_gpuRecordsWritten;
        return true;
    }
    if (m_failed) ++m_gpuRecordsLost;
    return false;
}

void TraceDb::begin() {
    if (!m_inTransaction && !m_failed) {
        m_inTransaction = exec("BEGIN");
        if (!m_inTransaction) recordFailure(sqlite3_errcode(m_db));
    }
}

bool TraceDb::commit() {
    if (!m_inTransaction || m_failed) return !m_failed;
    if (!exec("COMMIT")) {
        recordFailure(sqlite3_errcode(m_db));
        return false;
    }
    m_inTransaction = false;
    m_dimensionsDirty = false;
    m_gpuRecordsCommitted = m_gpuRecordsWritten;
    return true;
}

bool TraceDb::reconnect() {
    finalizeStatements();
    // Closing checks each descriptor first (sqlite_fd_guard.h): numbers the program took over stay open.
    sqlite3_close(m_db);
    m_db = nullptr;
    m_inTransaction = m_dimensionsDirty = false;
    m_gpuRecordsLost += m_gpuRecordsWritten - m_gpuRecordsCommitted;
    m_gpuRecordsWritten = m_gpuRecordsCommitted;
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(m_path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
    m_db = db;
    m_failed = false;
    if (rc != SQLITE_OK) {
        recordFailure(rc);
        return false;
    }
    sqlite3_busy_timeout(m_db, 2000);
    exec("PRAGMA synchronous=OFF; PRAGMA cache_size=-8192;");
    return true;
}

std::vector<std::pair<std::string, int64_t>> TraceDb::statValues() {
    std::vector<std::pair<std::string, int64_t>> values;
    sqlite3_stmt* s = prepare("SELECT name, value FROM stats");
    while (s && sqlite3_step(s) == SQLITE_ROW)
        if (const unsigned char* name = sqlite3_column_text(s, 0))
            values.emplace_back(reinterpret_cast<const char*>(name), sqlite3_column_int64(s, 1));
    sqlite3_finalize(s);
    return values;
}

void TraceDb::removeMeta(std::string_view key) {
    sqlite3_stmt* s = prepare("DELETE FROM meta WHERE key = ?");
    if (!s) return;
    bindText(s, 1, key);
    step(s);
    sqlite3_finalize(s);
}

void TraceDb::clearEnd(int pid) {
    removeMeta("end_ns");
    sqlite3_stmt* s = prepare("UPDATE processes SET end_ns = NULL WHERE pid = ?");
    if (!s) return;
    sqlite3_bind_int(s, 1, pid);
    step(s);
    sqlite3_finalize(s);
}

int64_t TraceDb::intern(std::string_view text) {
    if (auto it = m_strings.find(text); it != m_strings.end()) return it->second;
    if (!m_insertString) m_insertString = prepare("INSERT INTO strings(id, value) VALUES (?, ?)");
    const int64_t id = m_nextStringId++;
    sqlite3_bind_int64(m_insertString, 1, id);
    bindText(m_insertString, 2, text);
    step(m_insertString);
    m_strings.emplace(std::string(text), id);
    return id;
}

void TraceDb::setMeta(std::string_view key, std::string_view value) {
    if (!m_setMeta) m_setMeta = prepare("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
    bindText(m_setMeta, 1, key);
    bindText(m_setMeta, 2, value);
    step(m_setMeta);
}

std::string TraceDb::metaValue(std::string_view key) {
    sqlite3_stmt* s = prepare("SELECT value FROM meta WHERE key = ?");
    std::string value;
    if (s) {
        bindText(s, 1, key);
        if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0))
            value = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    }
    sqlite3_finalize(s);
    return value;
}

void TraceDb::setStat(std::string_view name, std::string_view severity, int64_t value, std::string_view description) {
    if (!m_setStat)
        m_setStat = prepare("INSERT OR REPLACE INTO stats(name, severity, value, description) VALUES (?, ?, ?, ?)");
    bindText(m_setStat, 1, name);
    bindText(m_setStat, 2, severity);
    sqlite3_bind_int64(m_setStat, 3, value);
    bindText(m_setStat, 4, description);
    step(m_setStat);
}

void TraceDb::addThread(int tid, int pid) {
    if (!m_addThread) m_addThread = prepare("INSERT OR IGNORE INTO threads(tid, pid) VALUES (?, ?)");
    sqlite3_bind_int(m_addThread, 1, tid);
    sqlite3_bind_int(m_addThread, 2, pid);
    step(m_addThread);
}

void TraceDb::nameThread(int tid, int pid, int64_t nameId) {
    if (!m_nameThread)
        m_nameThread = prepare("INSERT INTO threads(tid, pid, name_id) VALUES (?1, ?2, ?3) "
                               "ON CONFLICT(tid) DO UPDATE SET name_id = ?3");
    sqlite3_bind_int(m_nameThread, 1, tid);
    sqlite3_bind_int(m_nameThread, 2, pid);
    sqlite3_bind_int64(m_nameThread, 3, nameId);
    step(m_nameThread);
}

void TraceDb::addProcess(
    int pid, int parentPid, std::string_view role, std::string_view commandLine, uint64_t startNs) {
    if (!m_addProcess)
        m_addProcess = prepare("INSERT OR REPLACE INTO processes(pid, parent_pid, role, command_line, start_ns) "
                               "VALUES (?, ?, ?, ?, ?)");
    sqlite3_bind_int(m_addProcess, 1, pid);
    sqlite3_bind_int(m_addProcess, 2, parentPid);
    bindText(m_addProcess, 3, role);
    bindText(m_addProcess, 4, commandLine);
    sqlite3_bind_int64(m_addProcess, 5, int64_t(startNs));
    step(m_addProcess);
}

void TraceDb::setProcessRole(int pid, std::string_view role) {
    // Rare (once per process at most): no statement kept.
    sqlite3_stmt* s = prepare("UPDATE processes SET role = ? WHERE pid = ?");
    if (s) {
        bindText(s, 1, role);
        sqlite3_bind_int(s, 2, pid);
        step(s);
        sqlite3_finalize(s);
    }
    setMeta("role", role);
}

void TraceDb::endProcess(int pid, uint64_t endNs) {
    if (!m_endProcess) m_endProcess = prepare("UPDATE processes SET end_ns = ? WHERE pid = ?");
    sqlite3_bind_int64(m_endProcess, 1, int64_t(endNs));
    sqlite3_bind_int(m_endProcess, 2, pid);
    step(m_endProcess);
}

void TraceDb::addDomain(int64_t id, std::optional<int64_t> nameId) {
    if (!m_addDomain) m_addDomain = prepare("INSERT OR IGNORE INTO nvtx_domains(id, name_id) VALUES (?, ?)");
    sqlite3_bind_int64(m_addDomain, 1, id);
    bindOptional(m_addDomain, 2, nameId);
    step(m_addDomain);
}

void TraceDb::nameCategory(int64_t domainId, uint32_t category, int64_t nameId) {
    if (!m_nameCategory)
        m_nameCategory
            = prepare("INSERT OR REPLACE INTO nvtx_categories(domain_id, category, name_id) VALUES (?, ?, ?)");
    sqlite3_bind_int64(m_nameCategory, 1, domainId);
    sqlite3_bind_int64(m_nameCategory, 2, category);
    sqlite3_bind_int64(m_nameCategory, 3, nameId);
    step(m_nameCategory);
}

void TraceDb::addRange(const RangeRow& r) {
    if (!m_addRange)
        m_addRange
            = prepare("INSERT INTO nvtx_ranges(id, start_ns, end_ns, tid, end_tid, domain_id, name_id, kind, depth, "
                      "parent_id, category, color, payload_type, payload) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_addRange;
    sqlite3_bind_int64(s, 1, r.id);
    sqlite3_bind_int64(s, 2, int64_t(r.startNs));
    bindOptional(s, 3, r.endNs ? std::optional<int64_t>(int64_t(*r.endNs)) : std::nullopt);
    sqlite3_bind_int(s, 4, r.tid);
    bindOptional(s, 5, r.endTid ? std::optional<int64_t>(*r.endTid) : std::nullopt);
    sqlite3_bind_int64(s, 6, r.domainId);
    bindOptional(s, 7, r.nameId);
    sqlite3_bind_int(s, 8, r.kind);
    bindOptional(s, 9, r.depth ? std::optional<int64_t>(*r.depth) : std::nullopt);
    bindOptional(s, 10, r.parentId);
    sqlite3_bind_int64(s, 11, r.category);
    bindOptional(s, 12, r.color ? std::optional<int64_t>(*r.color) : std::nullopt);
    bindPayload(s, 13, 14, r.payloadType, r.payloadBits);
    if (step(s)) ++m_eventsWritten;
}

int64_t TraceDb::maxRangeId() {
    sqlite3_stmt* s = prepare("SELECT coalesce(max(id), 0) FROM nvtx_ranges");
    int64_t id = s && sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : 0;
    sqlite3_finalize(s);
    return id;
}

void TraceDb::addMark(const MarkRow& m) {
    if (!m_addMark)
        m_addMark = prepare("INSERT INTO nvtx_marks(ts_ns, tid, domain_id, name_id, category, color, payload_type, "
                            "payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_addMark;
    sqlite3_bind_int64(s, 1, int64_t(m.tsNs));
    sqlite3_bind_int(s, 2, m.tid);
    sqlite3_bind_int64(s, 3, m.domainId);
    bindOptional(s, 4, m.nameId);
    sqlite3_bind_int64(s, 5, m.category);
    bindOptional(s, 6, m.color ? std::optional<int64_t>(*m.color) : std::nullopt);
    bindPayload(s, 7, 8, m.payloadType, m.payloadBits);
    if (step(s)) ++m_eventsWritten;
}

void TraceDb::addFrameworkFlag(uint64_t tsNs, int tid, int64_t nameId, int64_t value) {
    if (!m_addFlag) m_addFlag = prepare("INSERT INTO framework_flags(ts_ns, tid, name_id, value) VALUES (?, ?, ?, ?)");
    sqlite3_stmt* s = m_addFlag;
    sqlite3_bind_int64(s, 1, int64_t(tsNs));
    sqlite3_bind_int(s, 2, tid);
    sqlite3_bind_int64(s, 3, nameId);
    if (value < 0)
        sqlite3_bind_null(s, 4);
    else
        sqlite3_bind_int64(s, 4, value);
    if (step(s)) ++m_eventsWritten;
}

void TraceDb::addThreadState(uint64_t tsNs, int tid, char state, int64_t syscall) {
    if (!m_addThreadState)
        m_addThreadState = prepare("INSERT INTO thread_states(ts_ns, tid, state, syscall) VALUES (?, ?, ?, ?)");
    sqlite3_stmt* s = m_addThreadState;
    sqlite3_bind_int64(s, 1, int64_t(tsNs));
    sqlite3_bind_int(s, 2, tid);
    sqlite3_bind_text(s, 3, &state, 1, SQLITE_TRANSIENT);
    if (syscall < -1)
        sqlite3_bind_null(s, 4);
    else
        sqlite3_bind_int64(s, 4, syscall);
    step(s);
}

namespace {
// Binds a Python frame from column `first` on: file, line, function.
void bindPythonFrame(sqlite3_stmt* s, int first, const TraceDb::PythonFrameRow& frame) {
    bindOptional(s, first, frame.fileId ? std::optional(frame.fileId) : std::nullopt);
    bindOptional(s, first + 1, frame.line > 0 ? std::optional(frame.line) : std::nullopt);
    bindOptional(s, first + 2, frame.functionId ? std::optional(frame.functionId) : std::nullopt);
}
} // namespace

void TraceDb::addPythonCall(uint64_t startNs, uint64_t endNs, int64_t callId, const PythonFrameRow& frame) {
    if (!m_pythonCall)
        m_pythonCall = prepare("INSERT INTO python_calls(start_ns, end_ns, tid, call_id, file_id, line, function_id) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_pythonCall;
    sqlite3_bind_int64(s, 1, int64_t(startNs));
    sqlite3_bind_int64(s, 2, int64_t(std::max(endNs, startNs)));
    sqlite3_bind_int(s, 3, frame.tid);
    bindOptional(s, 4, callId ? std::optional(callId) : std::nullopt);
    bindPythonFrame(s, 5, frame);
    if (step(s)) ++m_eventsWritten;
}

void TraceDb::addPythonSample(uint64_t tsNs, const PythonFrameRow& frame) {
    if (!m_pythonSample)
        m_pythonSample
            = prepare("INSERT INTO python_samples(ts_ns, tid, file_id, line, function_id) VALUES (?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_pythonSample;
    sqlite3_bind_int64(s, 1, int64_t(tsNs));
    sqlite3_bind_int(s, 2, frame.tid);
    bindPythonFrame(s, 3, frame);
    if (step(s)) ++m_eventsWritten;
}

void TraceDb::addNativeSample(
    uint64_t tsNs, int tid, int64_t moduleId, uint64_t address, int64_t functionId, const std::string& callers) {
    if (!m_nativeSample)
        m_nativeSample = prepare("INSERT INTO native_samples(ts_ns, tid, module_id, address, function_id, callers) "
                                 "VALUES (?, ?, ?, ?, ?, ?)");
    sqlite3_stmt* s = m_nativeSample;
    sqlite3_bind_int64(s, 1, int64_t(tsNs));
    sqlite3_bind_int(s, 2, tid);
    sqlite3_bind_int64(s, 3, moduleId);
    sqlite3_bind_int64(s, 4, int64_t(address));
    if (functionId)
        sqlite3_bind_int64(s, 5, functionId);
    else
        sqlite3_bind_null(s, 5);
    if (callers.empty())
        sqlite3_bind_null(s, 6);
    else
        sqlite3_bind_text(s, 6, callers.data(), int(callers.size()), SQLITE_TRANSIENT);
    if (step(s)) ++m_eventsWritten;
}

void TraceDb::addAllocatorReading(uint64_t tsNs, const AllocatorReading& r) {
    if (!m_allocatorReading)
        m_allocatorReading
            = prepare("INSERT INTO memory_events(ts_ns, device_id, source, delta_bytes, delta_of, allocated_bytes, "
                      "reserved_bytes, memory_kind, tid) VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?)");
    if (!m_allocatorPeak)
        m_allocatorPeak = prepare("INSERT INTO memory_peaks(start_ns, end_ns, device_id, tid, allocated_bytes, "
                                  "reserved_bytes) VALUES (?, ?, ?, ?, ?, ?)");
    const auto known = [](int64_t bytes) { return bytes >= 0 ? std::optional<int64_t>(bytes) : std::nullopt; };
    if (r.allocatedBytes >= 0 || r.reservedBytes >= 0) {
        sqlite3_stmt* s = m_allocatorReading;
        sqlite3_bind_int64(s, 1, int64_t(tsNs));
        sqlite3_bind_int64(s, 2, r.device);
        sqlite3_bind_int(s, 3, schema::kMemoryFromAllocator);
        sqlite3_bind_int(s, 4, schema::kTotalAllocated); // a reading changes nothing (delta 0)
        bindOptional(s, 5, known(r.allocatedBytes));
        bindOptional(s, 6, known(r.reservedBytes));
        sqlite3_bind_int(s, 7, schema::kMemoryDevice);
        sqlite3_bind_int(s, 8, r.tid);
        if (step(s)) ++m_eventsWritten;
    }
    if (r.peakAllocatedBytes >= 0 || r.peakReservedBytes >= 0) {
        sqlite3_stmt* s = m_allocatorPeak;
        sqlite3_bind_int64(s, 1, std::min(r.sinceNs, int64_t(tsNs)));
        sqlite3_bind_int64(s, 2, int64_t(tsNs));
        sqlite3_bind_int64(s, 3, r.device);
        sqlite3_bind_int(s, 4, r.tid);
        bindOptional(s, 5, known(r.peakAllocatedBytes));
        bindOptional(s, 6, known(r.peakReservedBytes));
        if (step(s)) ++m_eventsWritten;
    }
}

} // namespace tuneup::agent
