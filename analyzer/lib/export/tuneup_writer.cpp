#include "export/tuneup_writer.h"

#include "trace_schema.h"
#include "utf8.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <sqlite3.h>
#include <stdexcept>
#include <sys/stat.h>

namespace tuneup::analysis {

namespace {

[[noreturn]] void fail(sqlite3* db, const std::string& doing) {
    throw std::runtime_error("writing the tuneup schema: " + std::string(sqlite3_errmsg(db)) + " while " + doing);
}

void exec(sqlite3* db, const std::string& sql) {
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK)
        fail(db, "running `" + sql.substr(0, 80) + "`");
}

/** An INSERT with positional parameters; a value per column in order, then insert(). */
class Insert {
public:
    Insert(sqlite3* db, const std::string& sql)
        : m_db(db)
        , m_sql(sql) {
        if (sqlite3_prepare_v3(db, sql.c_str(), int(sql.size()), SQLITE_PREPARE_PERSISTENT, &m_stmt, nullptr)
            != SQLITE_OK)
            fail(db, "preparing `" + sql + "`");
    }
    ~Insert() { sqlite3_finalize(m_stmt); }
    Insert(const Insert&) = delete;
    Insert& operator=(const Insert&) = delete;

    Insert& integer(int64_t v) {
        sqlite3_bind_int64(m_stmt, ++m_column, v);
        return *this;
    }
    Insert& real(double v) {
        sqlite3_bind_double(m_stmt, ++m_column, v);
        return *this;
    }
    Insert& null() {
        sqlite3_bind_null(m_stmt, ++m_column);
        return *this;
    }
    // NULL when the model's "unknown" value is given.
    Insert& integerOr(int64_t v, int64_t unknown) { return v == unknown ? null() : integer(v); }
    // SQLITE_STATIC: the text outlives insert() (string table arena or a caller's string). Text from a
    // trace that is not valid UTF-8 is stored with U+FFFD in its place: SQLite's TEXT is UTF-8 to readers.
    Insert& text(std::string_view v) {
        if (!isValidUtf8(v)) {
            const std::string valid = validUtf8(v);
            sqlite3_bind_text(m_stmt, ++m_column, valid.data(), int(valid.size()), SQLITE_TRANSIENT);
            return *this;
        }
        // An empty view may have no data pointer, which SQLite would bind as NULL.
        sqlite3_bind_text(m_stmt, ++m_column, v.empty() ? "" : v.data(), int(v.size()), SQLITE_STATIC);
        return *this;
    }
    void insert() {
        if (sqlite3_step(m_stmt) != SQLITE_DONE) fail(m_db, "running `" + m_sql + "`");
        sqlite3_reset(m_stmt);
        m_column = 0;
    }

private:
    sqlite3* m_db;
    std::string m_sql;
    sqlite3_stmt* m_stmt = nullptr;
    int m_column = 0;
};

std::string_view severityText(StatSeverity s) {
    switch (s) {
    case StatSeverity::Info:
        return "info";
    case StatSeverity::DataLoss:
        return "data_loss";
    case StatSeverity::Error:
        return "error";
    }
    return "info";
}

// The process the CPU threads belong to (most threads), 0 when there are none.
int64_t mainPid(const TraceModel& model) {
    std::map<int64_t, size_t> threadsPerPid;
    for (const ThreadInfo& t : model.threads)
        ++threadsPerPid[t.pid];
    int64_t pid = 0;
    size_t most = 0;
    for (const auto& [p, n] : threadsPerPid)
        if (n > most) pid = p, most = n;
    return pid;
}

void writeMeta(const TraceModel& model, sqlite3* db) {
    const TraceInfo& info = model.info;
    Insert meta(db, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
    auto set = [&](const std::string& key, const std::string& value) { meta.text(key).text(value).insert(); };
    // A tuneup file's own facts carry over as they are; another format's are kept apart under source.*.
    const bool fromTuneup = info.format == SourceFormat::TuneupDb;
    for (const auto& [key, value] : info.metadata)
        set(fromTuneup ? key : "source." + key, value);
    set("format", std::string(schema::kFormatName));
    set("schema_version", std::to_string(schema::kSchemaVersion));
    set("source.format", std::string(sourceFormatName(info.format)));
    if (!info.path.empty()) set("source.path", info.path);
    if (const int64_t pid = mainPid(model)) set("pid", std::to_string(pid));
    if (info.rank) set("rank", std::to_string(*info.rank));
    if (info.worldSize) set("world_size", std::to_string(*info.worldSize));
    if (!info.backend.empty()) set("backend", info.backend);
    if (!info.machine.empty()) set("machine", info.machine); // numbers thread_states' system calls
    if (const auto span = model.span()) {
        set("start_ns", std::to_string(span->startNs));
        set("end_ns", std::to_string(span->endNs));
    }
    if (!fromTuneup)
        set("capture.cuda",
            model.hasGpuActivity()
                ? "on (imported)"
                : "off: the " + std::string(sourceFormatName(info.format)) + " trace holds no GPU activity");
}

void writeStats(const TraceModel& model, sqlite3* db) {
    Insert stat(db, "INSERT OR REPLACE INTO stats (name, severity, value, description) VALUES (?, ?, ?, ?)");
    for (const ImportStat& s : model.stats.entries())
        stat.text(s.name).text(severityText(s.severity)).integer(s.value).text(s.description).insert();
    const std::pair<const char*, size_t> notWritten[] = { { "cpu_ops", model.cpuOps.size() },
        { "gpu_annotations", model.gpuAnnotations.size() }, { "collectives", model.collectives.size() },
        { "flows", model.flows.size() }, { "counter_ranges", model.counterRanges.size() },
        { "python_functions", model.pythonFunctions.size() }, { "python_samples", model.pythonSamples.size() } };
    for (const auto& [table, rows] : notWritten)
        if (rows > 0) {
            const std::string name = std::string("export.not_written.") + table;
            const std::string description = std::string(table) + " rows of the source trace: not written (schema v"
                + std::to_string(schema::kSchemaVersion) + " has no table for them, or export does not write them)";
            stat.text(name).text("info").integer(int64_t(rows)).text(description).insert();
        }
}

void writeRows(const TraceModel& model, sqlite3* db) {
    {
        Insert s(db, "INSERT INTO strings (id, value) VALUES (?, ?)");
        for (size_t i = 0; i < model.strings.size(); ++i)
            s.integer(int64_t(i)).text(model.strings.get(StringId(i))).insert();
    }
    {
        Insert d(db,
            "INSERT OR REPLACE INTO devices (id, name, compute_major, compute_minor, sm_count, global_memory_bytes) "
            "VALUES (?, ?, ?, ?, ?, ?)");
        for (const DeviceInfo& dev : model.devices) {
            d.integer(dev.id).text(dev.name);
            if (dev.computeMajor > 0) // 0 = unknown, for both parts
                d.integer(dev.computeMajor).integer(dev.computeMinor);
            else
                d.null().null();
            d.integerOr(dev.smCount, 0).integerOr(dev.globalMemoryBytes, 0).insert();
        }
    }
    const int64_t pid = mainPid(model);
    {
        Insert p(db, "INSERT OR IGNORE INTO processes (pid) VALUES (?)");
        Insert t(db, "INSERT OR IGNORE INTO threads (tid, pid, name_id) VALUES (?, ?, ?)");
        for (const ThreadInfo& thread : model.threads) {
            p.integer(thread.pid).insert();
            t.integer(thread.tid).integer(thread.pid).integerOr(int64_t(thread.name), kEmptyString).insert();
        }
        if (model.threads.empty() && pid) p.integer(pid).insert();
    }
    const auto tidOf = [&](ThreadIndex t) { return t < model.threads.size() ? model.threads[t].tid : 0; };

    const KernelTable& k = model.kernels;
    {
        // The model keeps static + dynamic shared memory as one figure: it goes to static_shared_bytes.
        Insert s(db,
            "INSERT INTO kernels (id, start_ns, end_ns, device_id, stream_id, correlation_id, name_id, grid_x, "
            "grid_y, grid_z, block_x, block_y, block_z, registers_per_thread, static_shared_bytes, "
            "dynamic_shared_bytes, graph_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)");
        for (size_t i = 0; i < k.size(); ++i)
            s.integer(int64_t(i) + 1)
                .integer(k.startNs[i])
                .integer(k.endNs[i])
                .integer(k.device[i])
                .integerOr(k.stream[i], -1)
                .integerOr(int64_t(k.correlation[i]), 0)
                .integer(k.name[i])
                .integer(k.gridX[i])
                .integer(k.gridY[i])
                .integer(k.gridZ[i])
                .integer(k.blockX[i])
                .integer(k.blockY[i])
                .integer(k.blockZ[i])
                .integer(k.registersPerThread[i])
                .integer(k.sharedMemoryBytes[i])
                .integer(k.graphId[i])
                .insert();
    }
    const MemcpyTable& c = model.memcpys;
    {
        Insert s(db,
            "INSERT INTO memcpys (id, start_ns, end_ns, device_id, stream_id, correlation_id, copy_kind, src_kind, "
            "dst_kind, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (size_t i = 0; i < c.size(); ++i)
            s.integer(int64_t(i) + 1)
                .integer(c.startNs[i])
                .integer(c.endNs[i])
                .integer(c.device[i])
                .integerOr(c.stream[i], -1)
                .integerOr(int64_t(c.correlation[i]), 0)
                .integer(int64_t(c.copyKind[i]))
                .integer(int64_t(c.srcKind[i]))
                .integer(int64_t(c.dstKind[i]))
                .integer(c.bytes[i])
                .insert();
    }
    const MemsetTable& m = model.memsets;
    {
        Insert s(db,
            "INSERT INTO memsets (id, start_ns, end_ns, device_id, stream_id, correlation_id, bytes, memory_kind) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        for (size_t i = 0; i < m.size(); ++i)
            s.integer(int64_t(i) + 1)
                .integer(m.startNs[i])
                .integer(m.endNs[i])
                .integer(m.device[i])
                .integerOr(m.stream[i], -1)
                .integerOr(int64_t(m.correlation[i]), 0)
                .integer(m.bytes[i])
                .integer(int64_t(m.memoryKind[i]))
                .insert();
    }
    const SyncTable& y = model.syncs;
    {
        Insert s(db,
            "INSERT INTO syncs (id, start_ns, end_ns, sync_type, stream_id, event_id, correlation_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)");
        for (size_t i = 0; i < y.size(); ++i)
            s.integer(int64_t(i) + 1)
                .integer(y.startNs[i])
                .integer(y.endNs[i])
                .integer(int64_t(y.type[i]))
                .integerOr(y.stream[i], -1)
                .integerOr(y.eventId[i], -1)
                .integerOr(int64_t(y.correlation[i]), 0)
                .insert();
    }
    const ApiCallTable& a = model.apiCalls;
    {
        Insert s(db,
            "INSERT INTO api_calls (id, start_ns, end_ns, tid, api, cbid, name_id, correlation_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)");
        for (size_t i = 0; i < a.size(); ++i)
            s.integer(int64_t(i) + 1)
                .integer(a.startNs[i])
                .integer(a.endNs[i])
                .integer(tidOf(a.thread[i]))
                .integer(int64_t(a.api[i]))
                .integer(a.cbid[i])
                .integer(a.name[i])
                .integerOr(int64_t(a.correlation[i]), 0)
                .insert();
    }
    // User ranges become push/pop NVTX ranges in the default domain, as the agent records them.
    exec(db, "INSERT INTO nvtx_domains (id, name_id) VALUES (0, NULL)");
    const AnnotationTable& n = model.annotations;
    {
        Insert s(db,
            "INSERT INTO nvtx_ranges (id, start_ns, end_ns, tid, domain_id, name_id, kind, depth, parent_id) "
            "VALUES (?, ?, ?, ?, 0, ?, ?, ?, ?)");
        for (size_t i = 0; i < n.size(); ++i)
            s.integer(int64_t(i) + 1)
                .integer(n.startNs[i])
                .integer(n.endNs[i])
                .integer(tidOf(n.thread[i]))
                .integer(n.name[i])
                .integer(schema::kRangePushPop)
                .integer(n.depth[i])
                .integerOr(n.parent[i] == kNoRow ? -1 : int64_t(n.parent[i]) + 1, -1)
                .insert();
    }
    // The program's facts as the agent records them (int64 payloads of marks in the NVTX domain "tuneup",
    // docs/agent.md), so that a copy of a recording keeps what the Python bootstrap saw.
    const ProgramFactTable& facts = model.programFacts;
    if (!facts.empty()) {
        constexpr int64_t kDomain = 1, kPayloadInt64 = 2;
        const std::optional<StringId> known = model.strings.find("tuneup");
        const int64_t domainName = known ? int64_t(*known) : int64_t(model.strings.size());
        if (!known)
            Insert(db, "INSERT INTO strings (id, value) VALUES (?, ?)").integer(domainName).text("tuneup").insert();
        Insert(db, "INSERT INTO nvtx_domains (id, name_id) VALUES (?, ?)")
            .integer(kDomain)
            .integer(domainName)
            .insert();
        Insert s(db,
            "INSERT INTO nvtx_marks (id, ts_ns, tid, domain_id, name_id, payload_type, payload) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)");
        for (size_t i = 0; i < facts.size(); ++i)
            s.integer(int64_t(i) + 1)
                .integer(facts.timeNs[i])
                .integer(mainPid(model))
                .integer(kDomain)
                .integer(facts.name[i])
                .integer(kPayloadInt64)
                .integer(facts.value[i])
                .insert();
    }
    // The interposers' calls (schema 3), column for column.
    const GemmCallTable& g = model.gemmCalls;
    {
        Insert s(db,
            "INSERT INTO gemm_calls (id, start_ns, end_ns, tid, api, name_id, transa, transb, m, n, k, batch, a_type, "
            "b_type, c_type, compute_type, lda, ldb, ldc, stride_a, stride_b, stride_c, epilogue, external_id, status) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (size_t i = 0; i < g.size(); ++i)
            s.integer(int64_t(i) + 1)
                .integer(g.startNs[i])
                .integer(g.endNs[i])
                .integer(tidOf(g.thread[i]))
                .integer(int64_t(g.api[i]))
                .integer(g.name[i])
                .integerOr(g.transa[i], -1)
                .integerOr(g.transb[i], -1)
                .integerOr(g.m[i], -1)
                .integerOr(g.n[i], -1)
                .integerOr(g.k[i], -1)
                .integer(g.batch[i])
                .integerOr(g.aType[i], -1)
                .integerOr(g.bType[i], -1)
                .integerOr(g.cType[i], -1)
                .integerOr(g.computeType[i], -1)
                .integerOr(g.lda[i], -1)
                .integerOr(g.ldb[i], -1)
                .integerOr(g.ldc[i], -1)
                .integerOr(g.strideA[i], -1)
                .integerOr(g.strideB[i], -1)
                .integerOr(g.strideC[i], -1)
                .integerOr(g.epilogue[i], -1)
                .integerOr(int64_t(g.externalId[i]), 0)
                .integer(g.status[i])
                .insert();
    }
    const ConvCallTable& v = model.convCalls;
    {
        Insert s(db,
            "INSERT INTO conv_calls (id, start_ns, end_ns, tid, api, name_id, call_kind, direction, n, c, d, h, w, k, "
            "filter_c, t, r, s, pad_d, pad_h, pad_w, stride_d, stride_h, stride_w, dilation_d, dilation_h, dilation_w, "
            "groups, data_type, compute_type, math_type, layout, algo, algo_source, plan_id, external_id, status) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
            "?, "
            "?, ?, ?, ?)");
        for (size_t i = 0; i < v.size(); ++i) {
            s.integer(int64_t(i) + 1)
                .integer(v.startNs[i])
                .integer(v.endNs[i])
                .integer(tidOf(v.thread[i]))
                .integer(int64_t(v.api[i]))
                .integer(v.name[i])
                .integer(int64_t(v.kind[i]))
                .integerOr(int64_t(v.direction[i]), 0);
            for (int32_t value : { v.n[i], v.c[i], v.d[i], v.h[i], v.w[i], v.k[i], v.filterC[i], v.t[i], v.r[i], v.s[i],
                     v.padD[i], v.padH[i], v.padW[i], v.strideD[i], v.strideH[i], v.strideW[i], v.dilationD[i],
                     v.dilationH[i], v.dilationW[i], v.groups[i], v.dataType[i], v.computeType[i], v.mathType[i] })
                s.integerOr(value, -1);
            s.integerOr(int64_t(v.layout[i]), -1)
                .integerOr(v.algo[i], -1)
                .integer(int64_t(v.algoSource[i]))
                .integerOr(int64_t(v.planId[i]), 0)
                .integerOr(int64_t(v.externalId[i]), 0)
                .integer(v.status[i])
                .insert();
        }
    }
    {
        Insert s(db, "INSERT INTO external_correlations (correlation_id, kind, external_id) VALUES (?, ?, ?)");
        const ExternalCorrelationTable& e = model.externalCorrelations;
        for (size_t i = 0; i < e.size(); ++i)
            s.integer(int64_t(e.correlation[i]))
                .integer(schema::kExternalKindTuneup)
                .integer(int64_t(e.externalId[i]))
                .insert();
    }
    const ThreadStateTable& states = model.threadStates;
    {
        Insert s(db, "INSERT INTO thread_states (id, ts_ns, tid, state, syscall) VALUES (?, ?, ?, ?, ?)");
        for (size_t i = 0; i < states.size(); ++i)
            s.integer(int64_t(i) + 1)
                .integer(states.timeNs[i])
                .integer(tidOf(states.thread[i]))
                .text(std::string_view(&states.state[i], 1))
                .integerOr(states.syscall[i], -2)
                .insert();
    }
    // Memory events from any format, as `imported` (source 3): the model keeps what they say, not who said it.
    const MemoryEventTable& e = model.memoryEvents;
    {
        Insert s(db,
            "INSERT INTO memory_events (id, ts_ns, device_id, source, delta_bytes, delta_of, allocated_bytes, "
            "reserved_bytes, address, tid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        for (size_t i = 0; i < e.size(); ++i)
            s.integer(int64_t(i) + 1)
                .integer(e.timeNs[i])
                .integer(e.device[i] == kHostMemory ? -1 : e.device[i])
                .integer(schema::kMemoryImported)
                .integer(e.deltaBytes[i])
                .integer(e.deltaOf[i] == MemoryTotal::Reserved ? schema::kTotalReserved : schema::kTotalAllocated)
                .integerOr(e.allocatedBytes[i], -1)
                .integerOr(e.reservedBytes[i], -1)
                .integerOr(int64_t(e.address[i]), 0)
                .integerOr(e.thread[i] == kNoThread ? -1 : tidOf(e.thread[i]), -1)
                .insert();
    }
    const MemoryPeakTable& peaks = model.memoryPeaks;
    {
        Insert s(db,
            "INSERT INTO memory_peaks (id, start_ns, end_ns, device_id, tid, allocated_bytes, reserved_bytes) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)");
        for (size_t i = 0; i < peaks.size(); ++i)
            s.integer(int64_t(i) + 1)
                .integer(peaks.startNs[i])
                .integer(peaks.endNs[i])
                .integer(peaks.device[i])
                .integerOr(peaks.thread[i] == kNoThread ? -1 : tidOf(peaks.thread[i]), -1)
                .integerOr(peaks.allocatedBytes[i], -1)
                .integerOr(peaks.reservedBytes[i], -1)
                .insert();
    }
    const FrameworkFlagTable& f = model.frameworkFlags;
    Insert flag(db, "INSERT INTO framework_flags (id, ts_ns, tid, name_id, value) VALUES (?, ?, ?, ?, ?)");
    for (size_t i = 0; i < f.size(); ++i)
        flag.integer(int64_t(i) + 1)
            .integer(f.timeNs[i])
            .integer(mainPid(model))
            .integer(f.name[i])
            .integerOr(f.value[i], -1)
            .insert();
}

} // namespace

void writeTuneupSchema(const TraceModel& model, sqlite3* db) {
    exec(db,
        "PRAGMA application_id=" + std::to_string(schema::kApplicationId)
            + "; PRAGMA user_version=" + std::to_string(schema::kSchemaVersion));
    exec(db, "BEGIN");
    try {
        exec(db, std::string(schema::schemaSql()));
        writeMeta(model, db);
        writeStats(model, db);
        writeRows(model, db);
        exec(db, "COMMIT");
    } catch (...) {
        sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
    }
}

void writeTuneupFile(const TraceModel& model, const std::string& path) {
    struct stat st { };
    if (stat(path.c_str(), &st) == 0)
        throw std::runtime_error(path + ": already exists; remove it or choose another name");
    const std::string partial = path + ".partial";
    std::error_code ec;
    std::filesystem::remove(partial, ec); // left by an earlier failed write
    sqlite3* db = nullptr;
    if (sqlite3_open_v2(partial.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
        const std::string message = db ? sqlite3_errmsg(db) : "out of memory";
        sqlite3_close(db);
        throw std::runtime_error(
            path + ": cannot be created (" + message + "); check that its directory exists and is writable");
    }
    try {
        // The .partial file is private until renamed: no journal needed, one big page size as the agent uses.
        exec(db, "PRAGMA page_size=65536; PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF");
        writeTuneupSchema(model, db);
    } catch (const std::exception& e) {
        sqlite3_close(db);
        std::filesystem::remove(partial, ec);
        throw std::runtime_error(path + ": " + e.what());
    }
    if (sqlite3_close(db) != SQLITE_OK) {
        std::filesystem::remove(partial, ec);
        throw std::runtime_error(path + ": cannot be written (SQLite could not close " + partial + ")");
    }
    if (rename(partial.c_str(), path.c_str()) != 0) {
        const std::string why = strerror(errno);
        std::filesystem::remove(partial, ec);
        throw std::runtime_error(path + ": cannot be written (renaming " + partial + ": " + why + ")");
    }
}

} // namespace tuneup::analysis
