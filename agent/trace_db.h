#pragma once
// Writes one trace file (schema.sql) through the agent's private SQLite: prepared statements,
// large transactions, WAL, so a killed process still leaves a file that opens. Used only by the
// writer thread.

#include "gpu_records.h"
#include "host_events.h"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace tuneup::agent {

struct RangeRow {
    int64_t id = 0; // assigned by the caller, so children can name a parent written later
    uint64_t startNs = 0;
    std::optional<uint64_t> endNs;
    int tid = 0;
    std::optional<int> endTid;
    int64_t domainId = 0;
    std::optional<int64_t> nameId;
    int kind = 1;
    std::optional<int> depth;
    std::optional<int64_t> parentId;
    uint32_t category = 0;
    std::optional<uint32_t> color;
    uint8_t payloadType = 0;
    uint64_t payloadBits = 0;
};

struct MarkRow {
    uint64_t tsNs = 0;
    int tid = 0;
    int64_t domainId = 0;
    std::optional<int64_t> nameId;
    uint32_t category = 0;
    std::optional<uint32_t> color;
    uint8_t payloadType = 0;
    uint64_t payloadBits = 0;
};

class TraceDb final : public ActivitySink {
public:
    // Sets up the private SQLite for use by one thread only (no mutexes). Call before the writer
    // thread starts, on the thread that starts it; idempotent.
    static void initializeLibrary();
    // Creates a new file with the schema. Returns null and sets `error` on failure; `existed` says
    // the file was there already (it is never written then, even when another process has just
    // created it).
    static std::unique_ptr<TraceDb> create(const std::string& path, std::string& error, bool* existed = nullptr);
    // Opens a file this process wrote before an exec() replaced its image, to go on writing.
    static std::unique_ptr<TraceDb> reopen(const std::string& path, std::string& error);
    ~TraceDb() override;

    const std::string& path() const { return m_path; }

    void begin();
    // False when the transaction could not be written (disk full, the program closed the file's
    // descriptors): it is rolled back and the file stays as it was at the last commit.
    bool commit();

    // The first write failure, after which nothing more is written (every insert is a no-op) until
    // resumeForFinalRecord(). Never logged here: the writer says it once, with what it means.
    bool failed() const { return m_failed; }
    const std::string& failure() const { return m_failure; } // "database or disk is full (No space left on device)"
    int failureErrno() const { return m_failureErrno; } // the system's errno behind it, 0 if none
    // Whether the failed transaction held rows other rows refer to (strings, threads, domains, meta):
    // events written after it would then point at nothing.
    bool failedWithDimensions() const { return m_failedWithDimensions; }
    // Abandons the transaction in progress as a failure (rolled back if the connection still can).
    void fail(const std::string& why);
    // After a failure: lets one more transaction (the file's final record) be tried.
    void resumeForFinalRecord() { m_failed = false; }
    // Opens the file again by its path, for a connection whose descriptors the program closed; the
    // transaction in progress is lost. Clears the failure; false (and failed()) when it cannot.
    bool reconnect();
    // GPU records given to the file that were never committed (a failed transaction, or after it).
    uint64_t gpuRecordsLost() const { return m_gpuRecordsLost; }

    // The stats already in the file (written before exec() replaced the process's image).
    std::vector<std::pair<std::string, int64_t>> statValues();
    void removeMeta(std::string_view key);
    // The process goes on after all (an exec that failed): no end time in meta or processes.
    void clearEnd(int pid);

    int64_t intern(std::string_view text);
    void setMeta(std::string_view key, std::string_view value);
    std::string metaValue(std::string_view key); // empty when absent
    void setStat(std::string_view name, std::string_view severity, int64_t value, std::string_view description);
    void addThread(int tid, int pid);
    void nameThread(int tid, int pid, int64_t nameId);
    void addProcess(int pid, int parentPid, std::string_view role, std::string_view commandLine, uint64_t startNs);
    void endProcess(int pid, uint64_t endNs);
    // What the process turned out to be (a forked child that is a DataLoader worker); also meta `role`.
    void setProcessRole(int pid, std::string_view role);
    void addDomain(int64_t id, std::optional<int64_t> nameId);
    void nameCategory(int64_t domainId, uint32_t category, int64_t nameId);
    void addRange(const RangeRow&);
    int64_t maxRangeId(); // 0 in a new file
    void addMark(const MarkRow&);
    // A framework setting read on thread `tid`; value -1 (unknown) is stored as NULL.
    void addFrameworkFlag(uint64_t tsNs, int tid, int64_t nameId, int64_t value);
    // A sampled thread state (thread_sampler.h); syscall -2 (unknown) is stored as NULL.
    void addThreadState(uint64_t tsNs, int tid, char state, int64_t syscall);

    // A frame of the user's Python code (python_calls, python_samples); ids are strings.id, 0 stored as NULL.
    struct PythonFrameRow {
        int tid = 0;
        int64_t fileId = 0, line = 0, functionId = 0;
    };
    void addPythonCall(uint64_t startNs, uint64_t endNs, int64_t callId, const PythonFrameRow& frame);
    void addPythonSample(uint64_t tsNs, const PythonFrameRow& frame);
    // A sample of a native program's main thread (native_stack_sampler.h): its frame of the user's code, and the
    // addresses of its callers in the same module ("0x4011a0 0x401234"; empty: none).
    void addNativeSample(
        uint64_t tsNs, int tid, int64_t moduleId, uint64_t address, int64_t functionId, const std::string& callers);

    // The caching allocator as the Python bootstrap read it on thread `tid` (memory_events, memory_peaks): its
    // totals at `tsNs` and its peaks since `sinceNs`; -1 (not read) is stored as NULL.
    struct AllocatorReading {
        int tid = 0;
        int64_t device = 0, sinceNs = 0;
        int64_t allocatedBytes = -1, reservedBytes = -1, peakAllocatedBytes = -1, peakReservedBytes = -1;
    };
    void addAllocatorReading(uint64_t tsNs, const AllocatorReading& reading);

    // What `source` wrote and dropped on thread `tid` (0: no thread), for event_counts.
    void addEventCount(std::string_view source, int tid, uint64_t written, uint64_t dropped);

    // A recorded GEMM / convolution call (interpose_record.h) on thread `tid`; `nameId` is its function.
    void addGemmCall(uint64_t startNs, int tid, int64_t nameId, const GemmCallFixed& call);
    void addConvCall(uint64_t startNs, int tid, int64_t nameId, const ConvCallFixed& call);

    // ActivitySink: GPU records from CUPTI.
    void kernel(const KernelRecord&) override;
    void memcpy(const MemcpyRecord&) override;
    void memset(const MemsetRecord&) override;
    void sync(const SyncRecord&) override;
    void api(const ApiRecord&) override;
    void device(const DeviceRecord&) override;
    void externalCorrelation(const ExternalCorrelationRecord&) override;
    void memory(const MemoryRecord&) override;

    // Rows written by the insert functions above (events, not strings or metadata).
    uint64_t eventsWritten() const { return m_eventsWritten; }
    uint64_t gpuRecordsWritten() const { return m_gpuRecordsWritten; }

private:
    TraceDb(sqlite3* db, std::string path);
    sqlite3_stmt* prepare(const char* sql);
    bool step(sqlite3_stmt* statement);
    bool exec(const char* sql); // quiet: callers say what failed
    void recordFailure(int rc);
    bool stepGpuRecord(sqlite3_stmt* statement); // counts it lost when the file cannot take it
    bool isEventStatement(sqlite3_stmt* statement) const;
    void finalizeStatements();

    struct StringHash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const { return std::hash<std::string_view> {}(s); }
    };

    sqlite3* m_db;
    std::string m_path;
    bool m_inTransaction = false;
    bool m_failed = false;
    bool m_dimensionsDirty = false; // the transaction wrote rows that are not events
    bool m_failedWithDimensions = false;
    std::string m_failure;
    int m_failureErrno = 0;
    uint64_t m_gpuRecordsCommitted = 0, m_gpuRecordsLost = 0;
    uint64_t m_eventsWritten = 0;
    uint64_t m_gpuRecordsWritten = 0;
    int64_t m_nextStringId = 1;
    std::unordered_map<std::string, int64_t, StringHash, std::equal_to<>> m_strings;
    sqlite3_stmt* m_insertString = nullptr;
    sqlite3_stmt* m_setMeta = nullptr;
    sqlite3_stmt* m_setStat = nullptr;
    sqlite3_stmt* m_addThread = nullptr;
    sqlite3_stmt* m_nameThread = nullptr;
    sqlite3_stmt* m_addProcess = nullptr;
    sqlite3_stmt* m_endProcess = nullptr;
    sqlite3_stmt* m_addDomain = nullptr;
    sqlite3_stmt* m_nameCategory = nullptr;
    sqlite3_stmt* m_addRange = nullptr;
    sqlite3_stmt* m_addMark = nullptr;
    sqlite3_stmt* m_addFlag = nullptr;
    sqlite3_stmt* m_addThreadState = nullptr;
    sqlite3_stmt* m_pythonCall = nullptr;
    sqlite3_stmt* m_pythonSample = nullptr;
    sqlite3_stmt* m_nativeSample = nullptr;
    sqlite3_stmt* m_kernel = nullptr;
    sqlite3_stmt* m_memcpy = nullptr;
    sqlite3_stmt* m_memset = nullptr;
    sqlite3_stmt* m_sync = nullptr;
    sqlite3_stmt* m_api = nullptr;
    sqlite3_stmt* m_device = nullptr;
    sqlite3_stmt* m_gemmCall = nullptr;
    sqlite3_stmt* m_convCall = nullptr;
    sqlite3_stmt* m_externalCorrelation = nullptr;
    sqlite3_stmt* m_memory = nullptr;
    sqlite3_stmt* m_allocatorReading = nullptr;
    sqlite3_stmt* m_allocatorPeak = nullptr;
};

} // namespace tuneup::agent
