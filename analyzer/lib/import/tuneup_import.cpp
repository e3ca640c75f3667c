#include "import/tuneup_import.h"

#include "import/sqlite_open.h"
#include "import/tuneup_file.h"
#include "model/trace_builder.h"
#include "trace_schema.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <sqlite3.h>
#include <thread>
#include <unordered_map>

namespace tuneup::analysis {

namespace {

// Runs a query on `db` (a connection to `path`) and calls `row(statement)` for each result row.
template <class Row> void query(sqlite3* db, const std::string& path, const char* sql, Row&& row) {
    sqlite3_stmt* s = nullptr;
    if (const int rc = sqlite3_prepare_v2(db, sql, -1, &s, nullptr); rc != SQLITE_OK) {
        const std::string message = sqlite3_errmsg(db);
        sqlite3_finalize(s);
        if (const std::string limit = sqliteLimitProblem(db, rc); !limit.empty())
            throw TuneupFileError(TuneupFileError::Kind::Corrupt, path + ": " + limit);
        throw TuneupFileError(TuneupFileError::Kind::Corrupt,
            path + ": cannot read the trace (" + message + "); the file may be damaged: check it with `sqlite3 " + path
                + " 'PRAGMA integrity_check'`");
    }
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW)
        row(s);
    sqlite3_finalize(s);
    if (const std::string limit = sqliteLimitProblem(db, rc); !limit.empty())
        throw TuneupFileError(TuneupFileError::Kind::Corrupt, path + ": " + limit);
    if (rc != SQLITE_DONE)
        throw TuneupFileError(TuneupFileError::Kind::Corrupt,
            path + ": the trace is damaged (" + std::string(sqlite3_errstr(rc)) + ") while reading");
}
template <class Row> void query(const TuneupFile& file, const char* sql, Row&& row) {
    query(file.db(), file.path(), sql, std::forward<Row>(row));
}

int64_t i64(sqlite3_stmt* s, int column) {
    return sqlite3_column_int64(s, column);
}
int32_t i32(sqlite3_stmt* s, int column) {
    return static_cast<int32_t>(sqlite3_column_int64(s, column));
}
// A row's times, when they are integers: NULL or text in a time column (a damaged or altered file) is
// no time at all, and the row is left out (counted by the caller) rather than read as 0.
bool isTime(sqlite3_stmt* s, int column) {
    return sqlite3_column_type(s, column) == SQLITE_INTEGER;
}
bool times(sqlite3_stmt* s, int64_t& start, int64_t& end) {
    if (!isTime(s, 0) || !isTime(s, 1)) return false;
    start = sqlite3_column_int64(s, 0);
    end = sqlite3_column_int64(s, 1);
    return true;
}

std::string_view text(sqlite3_stmt* s, int column) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, column));
    return p ? std::string_view(p, size_t(sqlite3_column_bytes(s, column))) : std::string_view();
}

// The kernel table (the largest) as read by a second thread: rows with their strings' ids in the file.
struct KernelRows {
    std::vector<Kernel> rows;
    std::vector<int64_t> nameIds; // -1 when NULL
    int64_t withoutTimes = 0;
    std::exception_ptr error;
};

void readKernels(sqlite3* db, const std::string& path, size_t expected, KernelRows& out) {
    try {
        out.rows.reserve(expected);
        out.nameIds.reserve(expected);
        query(db, path,
            "SELECT start_ns, end_ns, device_id, stream_id, correlation_id, name_id, grid_x, grid_y, grid_z, block_x, "
            "block_y, block_z, registers_per_thread, static_shared_bytes + dynamic_shared_bytes, coalesce(graph_id, 0) "
            "FROM kernels",
            [&](sqlite3_stmt* s) {
                Kernel k;
                if (!times(s, k.startNs, k.endNs)) {
                    ++out.withoutTimes;
                    return;
                }
                k.device = i32(s, 2);
                k.stream = i32(s, 3);
                k.correlation = uint64_t(i64(s, 4));
                k.gridX = i32(s, 6), k.gridY = i32(s, 7), k.gridZ = i32(s, 8);
                k.blockX = i32(s, 9), k.blockY = i32(s, 10), k.blockZ = i32(s, 11);
                k.registersPerThread = i32(s, 12);
                k.sharedMemoryBytes = i32(s, 13);
                k.graphId = uint32_t(i64(s, 14)); // CUPTI's graphId is 32 bits
                out.rows.push_back(k);
                out.nameIds.push_back(sqlite3_column_type(s, 5) == SQLITE_NULL ? -1 : i64(s, 5));
            });
    } catch (...) {
        out.error = std::current_exception();
    }
}

size_t rowsIn(const TuneupFileSummary& summary, const std::string& table) {
    for (const TableCount& count : summary.eventCounts)
        if (count.table == table) return size_t(std::max<int64_t>(0, count.rows));
    return 0;
}

// The Python bootstrap's watched calls and main-thread samples (schema 5), their frames named as Kineto names
// python_function events ("file(line): function"). Rows without a whole frame are left out.
template <class Name>
void readPythonSites(const TuneupFile& file, TraceBuilder& builder, int64_t pid, Name&& name, int64_t& withoutTimes) {
    constexpr const char* kFrame = "f.value || '(' || p.line || '): ' || g.value";
    constexpr const char* kFrameJoins
        = " JOIN strings f ON f.id = p.file_id JOIN strings g ON g.id = p.function_id WHERE p.line IS NOT NULL";
    const std::string calls = std::string("SELECT p.start_ns, p.end_ns, p.tid, p.call_id, ") + kFrame
        + " FROM python_calls p" + kFrameJoins + " ORDER BY p.id";
    query(file, calls.c_str(), [&](sqlite3_stmt* s) {
        PythonFunction f;
        if (!times(s, f.startNs, f.endNs)) {
            ++withoutTimes;
            return;
        }
        f.thread = builder.thread(pid, i64(s, 2));
        f.call = name(s, 3);
        f.name = builder.intern(text(s, 4));
        builder.addPythonFunction(f);
    });
    const std::string samples
        = std::string("SELECT p.ts_ns, p.tid, ") + kFrame + " FROM python_samples p" + kFrameJoins + " ORDER BY p.id";
    query(file, samples.c_str(), [&](sqlite3_stmt* s) {
        if (!isTime(s, 0)) {
            ++withoutTimes;
            return;
        }
        builder.addPythonSample({ i64(s, 0), builder.thread(pid, i64(s, 1)), builder.intern(text(s, 2)) });
    });
}

// A native program's sampled frames of the user's code (schema 7), named as Python's are: "file(line): function"
// where `tuneup record` found them in the binary's debug information, else "module(0): function" (or the address).
void readNativeSamples(const TuneupFile& file, TraceBuilder& builder, int64_t pid, int64_t& withoutTimes) {
    query(file,
        "SELECT p.ts_ns, p.tid, coalesce(f.value || '(' || p.line || '): ', m.value || '(0): ') "
        "|| coalesce(g.value, printf('0x%x', p.address)) FROM native_samples p JOIN strings m ON m.id = p.module_id "
        "LEFT JOIN strings f ON f.id = p.file_id AND p.line IS NOT NULL LEFT JOIN strings g ON g.id = p.function_id "
        "ORDER BY p.id",
        [&](sqlite3_stmt* s) {
            if (!isTime(s, 0)) {
                ++withoutTimes;
                return;
            }
            builder.addPythonSample({ i64(s, 0), builder.thread(pid, i64(s, 1)), builder.intern(text(s, 2)) });
        });
}

// The interposers' rows (schema 3). NULL columns read as -1 (unknown).
template <class Name>
void readLibraryCalls(const TuneupFile& file, TraceBuilder& builder, int64_t pid, Name&& name, int64_t& withoutTimes) {
    query(file,
        "SELECT start_ns, end_ns, tid, api, name_id, coalesce(transa, -1), coalesce(transb, -1), coalesce(m, -1), "
        "coalesce(n, -1), coalesce(k, -1), batch, coalesce(a_type, -1), coalesce(b_type, -1), coalesce(c_type, -1), "
        "coalesce(compute_type, -1), coalesce(lda, -1), coalesce(ldb, -1), coalesce(ldc, -1), coalesce(stride_a, -1), "
        "coalesce(stride_b, -1), coalesce(stride_c, -1), coalesce(epilogue, -1), coalesce(external_id, 0), status "
        "FROM gemm_calls ORDER BY id",
        [&](sqlite3_stmt* s) {
            GemmCall g;
            if (!times(s, g.startNs, g.endNs)) {
                ++withoutTimes;
                return;
            }
            g.thread = builder.thread(pid, i64(s, 2));
            g.api = GemmApi(i32(s, 3));
            g.name = name(s, 4);
            g.transa = int8_t(i32(s, 5));
            g.transb = int8_t(i32(s, 6));
            g.m = i64(s, 7);
            g.n = i64(s, 8);
            g.k = i64(s, 9);
            g.batch = i64(s, 10);
            g.aType = i32(s, 11);
            g.bType = i32(s, 12);
            g.cType = i32(s, 13);
            g.computeType = i32(s, 14);
            g.lda = i64(s, 15);
            g.ldb = i64(s, 16);
            g.ldc = i64(s, 17);
            g.strideA = i64(s, 18);
            g.strideB = i64(s, 19);
            g.strideC = i64(s, 20);
            g.epilogue = i32(s, 21);
            g.externalId = uint64_t(i64(s, 22));
            g.status = i32(s, 23);
            builder.addGemmCall(g);
        });
    query(file,
        "SELECT start_ns, end_ns, tid, api, name_id, call_kind, coalesce(direction, 0), coalesce(n, -1), "
        "coalesce(c, -1), coalesce(d, -1), coalesce(h, -1), coalesce(w, -1), coalesce(k, -1), coalesce(filter_c, -1), "
        "coalesce(t, -1), coalesce(r, -1), coalesce(s, -1), coalesce(pad_d, -1), coalesce(pad_h, -1), "
        "coalesce(pad_w, -1), coalesce(stride_d, -1), coalesce(stride_h, -1), coalesce(stride_w, -1), "
        "coalesce(dilation_d, -1), coalesce(dilation_h, -1), coalesce(dilation_w, -1), coalesce(groups, -1), "
        "coalesce(data_type, -1), coalesce(compute_type, -1), coalesce(math_type, -1), coalesce(layout, -1), "
        "coalesce(algo, -1), algo_source, coalesce(plan_id, 0), coalesce(external_id, 0), status "
        "FROM conv_calls ORDER BY id",
        [&](sqlite3_stmt* s) {
            ConvCall c;
            if (!times(s, c.startNs, c.endNs)) {
                ++withoutTimes;
                return;
            }
            c.thread = builder.thread(pid, i64(s, 2));
            c.api = ConvApi(i32(s, 3));
            c.name = name(s, 4);
            c.kind = ConvCallKind(i32(s, 5));
            c.direction = ConvDirection(i32(s, 6));
            int32_t* dims[] = { &c.n, &c.c, &c.d, &c.h, &c.w, &c.k, &c.filterC, &c.t, &c.r, &c.s, &c.padD, &c.padH,
                &c.padW, &c.strideD, &c.strideH, &c.strideW, &c.dilationD, &c.dilationH, &c.dilationW, &c.groups,
                &c.dataType, &c.computeType, &c.mathType };
            for (int i = 0; i < int(sizeof dims / sizeof dims[0]); ++i)
                *dims[i] = i32(s, 7 + i);
            c.layout = TensorLayout(int8_t(i32(s, 30)));
            c.algo = i64(s, 31);
            c.algoSource = AlgoSource(i32(s, 32));
            c.planId = uint64_t(i64(s, 33));
            c.externalId = uint64_t(i64(s, 34));
            c.status = i32(s, 35);
            builder.addConvCall(c);
        });
}

// GPU memory (schema 6): CUPTI's allocations and releases (memory taken from the driver: the reserved total, or
// for stream-ordered ones, cudaMallocAsync from a pool, memory allocated), the caching allocator's readings
// (totals) and its peaks over windows. A release CUPTI gives without its size takes the size its address was
// allocated with.
void readMemory(const TuneupFile& file, TraceBuilder& builder, int64_t pid, int64_t& withoutTimes) {
    std::unordered_map<uint64_t, int64_t> liveBytes; // CUPTI allocations by address
    query(file,
        "SELECT ts_ns, device_id, source, delta_bytes, delta_of, coalesce(allocated_bytes, -1), "
        "coalesce(reserved_bytes, -1), coalesce(memory_kind, 0), coalesce(address, 0), tid, stream_id "
        "FROM memory_events ORDER BY id",
        [&](sqlite3_stmt* s) {
            if (!isTime(s, 0)) {
                ++withoutTimes;
                return;
            }
            MemoryEvent e;
            e.timeNs = i64(s, 0);
            const int32_t kind = i32(s, 7);
            const bool host = i64(s, 1) < 0 || kind == schema::kMemoryPageable || kind == schema::kMemoryPinned;
            e.device = host ? kHostMemory : i32(s, 1);
            e.deltaBytes = i64(s, 3);
            e.deltaOf = i32(s, 4) == schema::kTotalReserved ? MemoryTotal::Reserved : MemoryTotal::Allocated;
            e.allocatedBytes = std::max<int64_t>(i64(s, 5), -1);
            e.reservedBytes = std::max<int64_t>(i64(s, 6), -1);
            e.address = uint64_t(i64(s, 8));
            if (sqlite3_column_type(s, 9) != SQLITE_NULL) e.thread = builder.thread(pid, i64(s, 9));
            if (i32(s, 2) == schema::kMemoryFromCupti && e.address) {
                if (e.deltaBytes > 0)
                    liveBytes[e.address] = e.deltaBytes;
                else if (auto it = liveBytes.find(e.address); it != liveBytes.end()) {
                    if (e.deltaBytes == 0) e.deltaBytes = -it->second;
                    liveBytes.erase(it);
                }
            }
            builder.addMemoryEvent(e);
        });
    query(file,
        "SELECT start_ns, end_ns, device_id, tid, coalesce(allocated_bytes, -1), coalesce(reserved_bytes, -1) "
        "FROM memory_peaks ORDER BY id",
        [&](sqlite3_stmt* s) {
            MemoryPeak p;
            if (!times(s, p.startNs, p.endNs)) {
                ++withoutTimes;
                return;
            }
            p.device = i32(s, 2);
            if (sqlite3_column_type(s, 3) != SQLITE_NULL) p.thread = builder.thread(pid, i64(s, 3));
            p.allocatedBytes = std::max<int64_t>(i64(s, 4), -1);
            p.reservedBytes = std::max<int64_t>(i64(s, 5), -1);
            builder.addMemoryPeak(p);
        });
}

} // namespace

TraceModel importTuneupFile(const std::string& path) {
    const auto started = std::chrono::steady_clock::now();
    const auto file = TuneupFile::open(path);
    const TuneupFileSummary summary = file->summary(/*eventSpan=*/false);
    TraceBuilder builder(SourceFormat::TuneupDb, file->path());
    TraceInfo& info = builder.info();
    info.schemaVersion = summary.schemaVersion;
    info.vendor = GpuVendor::Nvidia;
    // What the agent wrote from the environment (RANK=abc) or a damaged file may not be a number: such a
    // value is left out and said so, never a reason not to read the events.
    const auto number = [&](const std::string& key, const std::string& expected, int64_t low,
                            int64_t high) -> std::optional<int64_t> {
        if (summary.metaValue(key).empty()) return std::nullopt;
        const std::optional<int64_t> value = summary.metaInteger(key);
        if (value && *value >= low && *value <= high) return value;
        builder.stats().add("meta." + key + ".unreadable", StatSeverity::Error, 1, summary.metaProblem(key, expected));
        return std::nullopt;
    };
    if (const auto rank = number("rank", "a rank (0 or more)", 0, INT32_MAX)) info.rank = int(*rank);
    if (const auto world = number("world_size", "a number of ranks (1 or more)", 1, INT32_MAX))
        info.worldSize = int(*world);
    for (const auto& [key, value] : summary.meta)
        info.metadata.emplace_back(key, value);
    // Older files do not say: their numbers are read as x86-64's, as docs/schema.md then said they were.
    info.machine = summary.metaValue("machine").empty() ? "x86_64" : summary.metaValue("machine");
    const int64_t pid = number("pid", "a process id", INT64_MIN, INT64_MAX).value_or(0);
    for (const StatRow& stat : summary.stats)
        builder.stats().add("recording." + stat.name,
            stat.severity == "data_loss"   ? StatSeverity::DataLoss
                : stat.severity == "error" ? StatSeverity::Error
                                           : StatSeverity::Info,
            stat.value, stat.description);
    // What the recording lost as a whole rather than event by event: every report says it beside the drops.
    if (const std::string lost = summary.metaValue("capture.cuda.lost"); !lost.empty())
        builder.stats().add(
            "recording.capture.cuda.lost", StatSeverity::DataLoss, 1, "GPU capture lost part of its records: " + lost);
    if (const std::string stopped = summary.metaValue("capture.stopped"); !stopped.empty())
        builder.stats().add("recording.capture.stopped", StatSeverity::DataLoss, 1,
            "the recording stopped early (" + stopped + "); what came after is counted as dropped");

    // The kernels on a second connection and thread while this one reads the other tables.
    KernelRows kernels;
    std::thread kernelReader;
    sqlite3* kernelDb = rowsIn(summary, "kernels") > 0 ? file->openAnotherReader() : nullptr;
    if (kernelDb)
        kernelReader = std::thread(readKernels, kernelDb, file->path(), rowsIn(summary, "kernels"), std::ref(kernels));
    struct JoinAndClose {
        std::thread& thread;
        sqlite3* db;
        ~JoinAndClose() {
            if (thread.joinable()) thread.join();
            sqlite3_close(db);
        }
    } joinKernelReader { kernelReader, kernelDb };

    int64_t withoutTimes = 0; // rows whose times are NULL or text
    builder.reserve({ rowsIn(summary, "kernels"), rowsIn(summary, "memcpys"), rowsIn(summary, "memsets"),
        rowsIn(summary, "syncs"), rowsIn(summary, "api_calls"), rowsIn(summary, "nvtx_ranges") });

    // Strings once, by id.
    std::unordered_map<int64_t, StringId> strings;
    query(*file, "SELECT id, value FROM strings",
        [&](sqlite3_stmt* s) { strings[i64(s, 0)] = builder.intern(text(s, 1)); });
    auto name = [&](sqlite3_stmt* s, int column) -> StringId {
        if (sqlite3_column_type(s, column) == SQLITE_NULL) return kEmptyString;
        auto it = strings.find(i64(s, column));
        return it == strings.end() ? kEmptyString : it->second;
    };

    for (const DeviceRow& d : summary.devices) {
        DeviceInfo device;
        device.id = d.id;
        device.name = d.name;
        device.computeMajor = d.computeMajor;
        device.computeMinor = d.computeMinor;
        device.smCount = d.smCount;
        device.globalMemoryBytes = d.globalMemoryBytes;
        device.vendor = GpuVendor::Nvidia;
        builder.addDevice(device);
    }
    query(*file, "SELECT t.tid, t.pid, s.value FROM threads t LEFT JOIN strings s ON s.id = t.name_id",
        [&](sqlite3_stmt* s) {
            builder.thread(i64(s, 1), i64(s, 0));
            if (!text(s, 2).empty()) builder.setThreadName(i64(s, 1), i64(s, 0), text(s, 2));
        });
    query(*file,
        "SELECT start_ns, end_ns, device_id, stream_id, correlation_id, bytes, copy_kind, src_kind, dst_kind "
        "FROM memcpys",
        [&](sqlite3_stmt* s) {
            Memcpy m;
            if (!times(s, m.startNs, m.endNs)) {
                ++withoutTimes;
                return;
            }
            m.device = i32(s, 2);
            m.stream = i32(s, 3);
            m.correlation = uint64_t(i64(s, 4));
            m.bytes = i64(s, 5);
            m.copyKind = CopyKind(i32(s, 6));
            m.srcKind = MemoryKind(i32(s, 7));
            m.dstKind = MemoryKind(i32(s, 8));
            builder.addMemcpy(m);
        });
    query(*file, "SELECT start_ns, end_ns, device_id, stream_id, correlation_id, bytes, memory_kind FROM memsets",
        [&](sqlite3_stmt* s) {
            Memset m;
            if (!times(s, m.startNs, m.endNs)) {
                ++withoutTimes;
                return;
            }
            m.device = i32(s, 2);
            m.stream = i32(s, 3);
            m.correlation = uint64_t(i64(s, 4));
            m.bytes = i64(s, 5);
            m.memoryKind = MemoryKind(i32(s, 6));
            builder.addMemset(m);
        });
    query(*file,
        "SELECT start_ns, end_ns, sync_type, coalesce(stream_id, -1), coalesce(event_id, -1), correlation_id FROM "
        "syncs",
        [&](sqlite3_stmt* s) {
            Sync y;
            if (!times(s, y.startNs, y.endNs)) {
                ++withoutTimes;
                return;
            }
            y.type = SyncType(i32(s, 2));
            y.stream = i32(s, 3);
            y.eventId = i64(s, 4);
            y.correlation = uint64_t(i64(s, 5));
            builder.addSync(y);
        });
    query(
        *file, "SELECT start_ns, end_ns, tid, api, cbid, name_id, correlation_id FROM api_calls", [&](sqlite3_stmt* s) {
            ApiCall a;
            if (!times(s, a.startNs, a.endNs)) {
                ++withoutTimes;
                return;
            }
            a.thread = builder.thread(pid, i64(s, 2));
            a.api = ApiKind(i32(s, 3));
            a.cbid = i32(s, 4);
            a.name = name(s, 5);
            a.correlation = uint64_t(i64(s, 6));
            builder.addApiCall(a);
        });
    // Schema 2 added the torch probes' readings; NULL is "could not read" (-1 in the model).
    if (summary.schemaVersion >= 2)
        query(*file, "SELECT ts_ns, coalesce(value, -1), name_id FROM framework_flags ORDER BY ts_ns, id",
            [&](sqlite3_stmt* s) {
                FrameworkFlag f;
                if (!isTime(s, 0)) {
                    ++withoutTimes;
                    return;
                }
                f.timeNs = i64(s, 0);
                f.value = i64(s, 1);
                f.name = name(s, 2);
                builder.addFrameworkFlag(f);
            });
    // Schema 2 also added the main thread's sampled states.
    if (summary.schemaVersion >= 2)
        query(*file, "SELECT ts_ns, tid, state, coalesce(syscall, -2) FROM thread_states ORDER BY ts_ns, id",
            [&](sqlite3_stmt* s) {
                ThreadState t;
                if (!isTime(s, 0)) {
                    ++withoutTimes;
                    return;
                }
                t.timeNs = i64(s, 0);
                t.thread = builder.thread(pid, i64(s, 1));
                const unsigned char* state = sqlite3_column_text(s, 2);
                t.state = state && *state ? char(*state) : '?';
                t.syscall = i32(s, 3);
                builder.addThreadState(t);
            });
    // Schema 3: the interposers' GEMM and convolution calls, and CUPTI's links from CUDA calls to them.
    if (summary.schemaVersion >= 3) {
        readLibraryCalls(*file, builder, pid, name, withoutTimes);
        query(*file, "SELECT correlation_id, external_id FROM external_correlations WHERE kind = 5",
            [&](sqlite3_stmt* s) {
                builder.addExternalCorrelation({ uint64_t(i64(s, 0)), uint64_t(i64(s, 1)) });
            });
    }
    if (summary.schemaVersion >= 5) readPythonSites(*file, builder, pid, name, withoutTimes);
    if (summary.schemaVersion >= 6) readMemory(*file, builder, pid, withoutTimes);
    if (summary.schemaVersion >= 7) readNativeSamples(*file, builder, pid, withoutTimes);
    // The Python bootstrap's facts: marks with a payload in its "tuneup" domain.
    query(*file,
        "SELECT m.ts_ns, m.name_id, m.payload FROM nvtx_marks m JOIN nvtx_domains d ON d.id = m.domain_id "
        "JOIN strings s ON s.id = d.name_id WHERE s.value = 'tuneup' AND m.payload IS NOT NULL ORDER BY m.ts_ns, m.id",
        [&](sqlite3_stmt* s) {
            ProgramFact f;
            if (!isTime(s, 0)) {
                ++withoutTimes;
                return;
            }
            f.timeNs = i64(s, 0);
            f.name = name(s, 1);
            f.value = i64(s, 2);
            builder.addProgramFact(f);
        });
    // NVTX ranges are the tuneup file's user annotations; ranges never closed end with the recording
    // (meta end_ns, or after a kill, the last event: a scan of every table, done only then).
    std::optional<int64_t> endOfRecording = summary.lastNs;
    query(*file, "SELECT start_ns, end_ns, tid, name_id FROM nvtx_ranges", [&](sqlite3_stmt* s) {
        Annotation a;
        const bool open = sqlite3_column_type(s, 1) == SQLITE_NULL; // never closed
        if (!isTime(s, 0) || (!open && !isTime(s, 1))) {
            ++withoutTimes;
            return;
        }
        a.startNs = i64(s, 0);
        if (open && !endOfRecording) endOfRecording = file->summary().lastNs.value_or(0);
        a.endNs = open ? std::max(*endOfRecording, a.startNs) : i64(s, 1);
        a.thread = builder.thread(pid, i64(s, 2));
        a.name = name(s, 3);
        builder.addAnnotation(a);
    });

    if (!kernelDb && rowsIn(summary, "kernels") > 0)
        readKernels(file->db(), file->path(), rowsIn(summary, "kernels"), kernels);
    if (kernelReader.joinable()) kernelReader.join();
    if (kernels.error) std::rethrow_exception(kernels.error);
    withoutTimes += kernels.withoutTimes;
    if (withoutTimes > 0)
        builder.stats().add("times.not_integers", StatSeverity::DataLoss, withoutTimes,
            "events whose start or end is NULL or not an integer (a damaged or altered file): left out");
    for (size_t i = 0; i < kernels.rows.size(); ++i) {
        auto it = strings.find(kernels.nameIds[i]);
        kernels.rows[i].name = it == strings.end() ? kEmptyString : it->second;
        builder.addKernel(kernels.rows[i]);
    }
    builder.stats().bytesRead = summary.fileBytes + summary.walBytes;
    TraceModel model = builder.finish();
    model.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    return model;
}

} // namespace tuneup::analysis
