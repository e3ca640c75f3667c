// The trace reader on every kind of bad file a user can hand it, and on good ones.

#include "import/tuneup_file.h"
#include "import/tuneup_import.h"
#include "steps/host_state.h"
#include "temp_dir.h"
#include "trace_fixture.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <optional>
#include <random>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using tuneup::analysis::TuneupFile;
using tuneup::analysis::TuneupFileError;
using Kind = tuneup::analysis::TuneupFileError::Kind;

namespace {

class TuneupFileTest : public ::testing::Test {
protected:
    std::string path(const std::string& name) const { return (fs::path(m_dir) / name).string(); }

    // Opens and summarises; returns the error's kind and message, or fails the test when it opens.
    std::pair<Kind, std::string> openError(const std::string& file) {
        try {
            auto opened = TuneupFile::open(file);
            opened->summary();
        } catch (const TuneupFileError& e) {
            return { e.kind(), e.what() };
        }
        ADD_FAILURE() << file << " opened, but it should not";
        return { Kind::NotFound, "" };
    }

    static std::string readAll(const std::string& file) {
        std::string bytes;
        if (FILE* f = fopen(file.c_str(), "rb")) {
            char buffer[65536];
            size_t n;
            while ((n = fread(buffer, 1, sizeof buffer, f)) > 0)
                bytes.append(buffer, n);
            fclose(f);
        }
        return bytes;
    }

    static void writeBytes(const std::string& file, const std::string& bytes) {
        std::ofstream(file, std::ios::binary) << bytes;
    }

    static std::string randomBytes(size_t n, unsigned seed) {
        std::mt19937 random(seed);
        std::string bytes(n, '\0');
        for (char& c : bytes)
            c = char(random() & 0xff);
        return bytes;
    }

    tuneup::test::TempDir m_tmp { "tuneup_file_test" };
    std::string m_dir = m_tmp.path();
};

TEST_F(TuneupFileTest, MissingFileNamesThePath) {
    auto [kind, message] = openError(path("nope.db"));
    EXPECT_EQ(kind, Kind::NotFound);
    EXPECT_NE(message.find(path("nope.db")), std::string::npos) << message;
    EXPECT_NE(message.find("no such file"), std::string::npos) << message;
}

TEST_F(TuneupFileTest, DirectoryIsNotAFile) {
    auto [kind, message] = openError(m_dir);
    EXPECT_EQ(kind, Kind::NotAFile);
    EXPECT_NE(message.find("is a directory"), std::string::npos) << message;
}

TEST_F(TuneupFileTest, EmptyFile) {
    writeBytes(path("empty.db"), "");
    auto [kind, message] = openError(path("empty.db"));
    EXPECT_EQ(kind, Kind::Empty);
    EXPECT_NE(message.find("empty (0 bytes)"), std::string::npos) << message;
    EXPECT_NE(message.find("record again"), std::string::npos) << message;
}

TEST_F(TuneupFileTest, RandomBytesAreNotSqlite) {
    writeBytes(path("noise.db"), randomBytes(8192, 1));
    auto [kind, message] = openError(path("noise.db"));
    EXPECT_EQ(kind, Kind::NotSqlite);
    EXPECT_NE(message.find("not an SQLite file"), std::string::npos) << message;
    EXPECT_NE(message.find("tuneup record"), std::string::npos) << message;
}

TEST_F(TuneupFileTest, JsonIsRecognisedAsSuch) {
    writeBytes(path("trace.json"), "{\"traceEvents\": []}");
    auto [kind, message] = openError(path("trace.json"));
    EXPECT_EQ(kind, Kind::NotSqlite);
    EXPECT_NE(message.find("JSON"), std::string::npos) << message;
}

TEST_F(TuneupFileTest, DamagedSqliteHeader) {
    // The magic is right, the rest of the header is not.
    writeBytes(path("header.db"), std::string("SQLite format 3\0", 16) + randomBytes(4080, 2));
    auto [kind, message] = openError(path("header.db"));
    EXPECT_TRUE(kind == Kind::NotSqlite || kind == Kind::Corrupt) << message;
    EXPECT_NE(message.find(path("header.db")), std::string::npos) << message;
}

TEST_F(TuneupFileTest, TruncatedFileIsCorrupt) {
    tuneup::test::TraceSpec spec;
    spec.kernels = 3000;
    tuneup::test::writeTrace(path("cut.db"), spec);
    const auto size = fs::file_size(path("cut.db"));
    ASSERT_GT(size, 20u * 4096);
    fs::resize_file(path("cut.db"), size / 2 / 4096 * 4096);
    auto [kind, message] = openError(path("cut.db"));
    EXPECT_EQ(kind, Kind::Corrupt) << message;
    EXPECT_NE(message.find("damaged"), std::string::npos) << message;
    EXPECT_NE(message.find(".recover"), std::string::npos) << message;
}

TEST_F(TuneupFileTest, OverwrittenMiddlePagesAreCorrupt) {
    tuneup::test::TraceSpec spec;
    spec.kernels = 3000;
    tuneup::test::writeTrace(path("bad.db"), spec);
    std::string bytes = readAll(path("bad.db"));
    const size_t pages = bytes.size() / 4096;
    ASSERT_GT(pages, 20u);
    for (size_t page = pages / 3; page < 2 * pages / 3; ++page)
        bytes.replace(page * 4096, 4096, randomBytes(4096, unsigned(page)));
    writeBytes(path("bad.db"), bytes);

    auto [kind, message] = openError(path("bad.db"));
    EXPECT_EQ(kind, Kind::Corrupt) << message;
    EXPECT_NE(message.find(path("bad.db")), std::string::npos) << message;
}

TEST_F(TuneupFileTest, QuickCheckFindsDamageThatTheSummaryDoesNotRead) {
    // Many strings over many pages, then one strings page made invalid: the summary never reads that table.
    tuneup::test::writeTrace(path("q.db"));
    {
        sqlite3* db = nullptr;
        ASSERT_EQ(sqlite3_open(path("q.db").c_str(), &db), SQLITE_OK);
        tuneup::test::exec(db,
            "WITH RECURSIVE n(i) AS (SELECT 10 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) "
            "INSERT INTO strings SELECT i, 'some_kernel_name_' || i FROM n");
        sqlite3_close(db);
    }
    std::string bytes = readAll(path("q.db"));
    const size_t at = bytes.find("some_kernel_name_1500");
    ASSERT_NE(at, std::string::npos);
    bytes[at / 4096 * 4096] = char(0x42); // not a valid b-tree page type
    writeBytes(path("q.db"), bytes);

    auto file = TuneupFile::open(path("q.db"));
    EXPECT_EQ(file->summary().eventCount(), 21);
    try {
        EXPECT_FALSE(file->quickCheck().empty());
    } catch (const TuneupFileError& e) {
        EXPECT_EQ(e.kind(), Kind::Corrupt) << e.what();
    }
}

TEST_F(TuneupFileTest, ForeignSqliteListsItsTables) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path("app.db").c_str(), &db), SQLITE_OK);
    tuneup::test::exec(db, "CREATE TABLE users (id INTEGER, name TEXT); CREATE TABLE orders (id INTEGER)");
    sqlite3_close(db);
    auto [kind, message] = openError(path("app.db"));
    EXPECT_EQ(kind, Kind::Foreign);
    EXPECT_NE(message.find("is an SQLite file but not a tuneup trace (tables: orders, users)"), std::string::npos)
        << message;
}

TEST_F(TuneupFileTest, ForeignMetaTableIsNotMistakenForOurs) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path("meta.db").c_str(), &db), SQLITE_OK);
    tuneup::test::exec(db, "CREATE TABLE meta (name TEXT, x INTEGER)");
    sqlite3_close(db);
    EXPECT_EQ(openError(path("meta.db")).first, Kind::Foreign);
}

TEST_F(TuneupFileTest, NsightSystemsExportIsPointedToImport) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path("report.sqlite").c_str(), &db), SQLITE_OK);
    tuneup::test::exec(db,
        "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT);"
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER)");
    sqlite3_close(db);
    auto [kind, message] = openError(path("report.sqlite"));
    EXPECT_EQ(kind, Kind::Foreign);
    EXPECT_NE(message.find("Nsight Systems"), std::string::npos) << message;
    EXPECT_NE(message.find("tuneup import"), std::string::npos) << message;
}

TEST_F(TuneupFileTest, EmptySqliteDatabase) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path("blank.db").c_str(), &db), SQLITE_OK);
    tuneup::test::exec(db, "PRAGMA user_version=3"); // forces the header to be written
    sqlite3_close(db);
    auto [kind, message] = openError(path("blank.db"));
    EXPECT_EQ(kind, Kind::Foreign);
    EXPECT_NE(message.find("no tables"), std::string::npos) << message;
}

TEST_F(TuneupFileTest, TuneupFileWithoutSchemaHoldsNoRecording) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path("bare.db").c_str(), &db), SQLITE_OK);
    tuneup::test::exec(db, "PRAGMA application_id=" + std::to_string(tuneup::schema::kApplicationId));
    sqlite3_close(db);
    auto [kind, message] = openError(path("bare.db"));
    EXPECT_EQ(kind, Kind::Empty);
    EXPECT_NE(message.find("holds no recording"), std::string::npos) << message;
}

TEST_F(TuneupFileTest, NewerSchemaAsksForAnUpgrade) {
    tuneup::test::TraceSpec spec;
    spec.schemaVersion = tuneup::schema::kSchemaVersion + 1;
    tuneup::test::writeTrace(path("new.db"), spec);
    auto [kind, message] = openError(path("new.db"));
    EXPECT_EQ(kind, Kind::NewerSchema);
    const std::string newer = "schema " + std::to_string(tuneup::schema::kSchemaVersion + 1);
    const std::string ours = "reads up to schema " + std::to_string(tuneup::schema::kSchemaVersion);
    EXPECT_NE(message.find("written by a newer tuneup (" + newer + ", tuneup 9.9.9)"), std::string::npos) << message;
    EXPECT_NE(message.find(ours), std::string::npos) << message;
    EXPECT_NE(message.find("upgrade tuneup"), std::string::npos) << message;
}

TEST_F(TuneupFileTest, ValidFileSummary) {
    tuneup::test::writeTrace(path("run.db"));
    auto file = TuneupFile::open(path("run.db"));
    EXPECT_EQ(file->schemaVersion(), tuneup::schema::kSchemaVersion);
    const auto s = file->summary();
    EXPECT_EQ(s.path, path("run.db"));
    EXPECT_EQ(s.fileBytes, fs::file_size(path("run.db")));
    EXPECT_EQ(s.walBytes, 0u);
    EXPECT_EQ(s.metaValue("format"), "tuneup-trace");
    EXPECT_EQ(s.metaValue("host"), "testhost");
    EXPECT_EQ(s.metaValue("absent"), "");

    std::map<std::string, int64_t> counts;
    for (const auto& count : s.eventCounts)
        counts[count.table] = count.rows;
    EXPECT_EQ(counts,
        (std::map<std::string, int64_t> { { "kernels", 3 }, { "memcpys", 2 }, { "memsets", 1 }, { "syncs", 1 },
            { "api_calls", 4 }, { "nvtx_ranges", 2 }, { "nvtx_marks", 5 }, { "framework_flags", 3 },
            { "gemm_calls", 0 }, { "conv_calls", 0 }, { "python_calls", 0 }, { "python_samples", 0 },
            { "memory_events", 0 }, { "memory_peaks", 0 }, { "native_samples", 0 } }));
    ASSERT_EQ(s.eventCounts.size(), tuneup::analysis::kEventTables.size());
    EXPECT_EQ(s.eventCounts.front().table, "kernels"); // report order
    EXPECT_EQ(s.eventCount(), 21);

    ASSERT_EQ(s.stats.size(), 4u);
    EXPECT_EQ(s.droppedCount(), 9);
    ASSERT_EQ(s.devices.size(), 1u);
    EXPECT_EQ(s.devices[0].name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(s.devices[0].smCount, 132);

    EXPECT_EQ(s.firstNs, 1010000000);
    EXPECT_EQ(s.lastNs, 2990000000);
    EXPECT_TRUE(s.complete);
    EXPECT_EQ(s.durationNs(), 2000000000); // from meta start_ns/end_ns
    EXPECT_TRUE(s.warnings.empty());
    EXPECT_TRUE(file->quickCheck().empty());
}

TEST_F(TuneupFileTest, EmptyRecordingHasNoSpanButADuration) {
    tuneup::test::TraceSpec spec;
    spec.kernels = spec.memcpys = spec.memsets = spec.syncs = spec.apiCalls = spec.nvtxRanges = spec.nvtxMarks = 0;
    spec.frameworkFlags = false;
    tuneup::test::writeTrace(path("idle.db"), spec);
    const auto s = TuneupFile::open(path("idle.db"))->summary();
    EXPECT_EQ(s.eventCount(), 0);
    EXPECT_EQ(s.firstNs, 1000000000); // meta start/end stand in
    EXPECT_EQ(s.lastNs, 3000000000);
    EXPECT_EQ(s.durationNs(), 2000000000);
}

TEST_F(TuneupFileTest, ReadingLeavesTheFileAndItsDirectoryUntouched) {
    tuneup::test::TraceSpec spec;
    spec.walMode = true;
    tuneup::test::writeTrace(path("run.db"), spec);
    ASSERT_FALSE(fs::exists(path("run.db-wal"))); // a clean close merges and removes it
    const std::string before = readAll(path("run.db"));
    const auto mtime = fs::last_write_time(path("run.db"));
    {
        auto file = TuneupFile::open(path("run.db"));
        EXPECT_EQ(file->summary().eventCount(), 21);
        file->quickCheck();
    }
    EXPECT_EQ(readAll(path("run.db")), before);
    EXPECT_EQ(fs::last_write_time(path("run.db")), mtime);
    EXPECT_FALSE(fs::exists(path("run.db-wal")));
    EXPECT_FALSE(fs::exists(path("run.db-shm")));
}

// What a SIGKILLed agent leaves: the file, its -wal and -shm, and no end_ns.
void writeKilledRecording(const std::string& file) {
    fs::create_directories(fs::path(file).parent_path());
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        sqlite3* db = nullptr;
        tuneup::test::TraceSpec spec;
        spec.walMode = true;
        spec.endNs = false;
        if (sqlite3_open(file.c_str(), &db) != SQLITE_OK) _exit(1);
        try {
            tuneup::test::fillTrace(db, spec);
            tuneup::test::exec(db, "INSERT INTO kernels (start_ns, end_ns, device_id, name_id) VALUES (2, 3, 0, 1)");
        } catch (...) {
            _exit(2);
        }
        _exit(0); // no close: the WAL stays
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    ASSERT_TRUE(fs::exists(file + "-wal"));
}

TEST_F(TuneupFileTest, KilledRecordingIsValidAndIncomplete) {
    writeKilledRecording(path("killed.db"));
    const std::string db = readAll(path("killed.db"));
    const std::string wal = readAll(path("killed.db-wal"));
    {
        auto file = TuneupFile::open(path("killed.db"));
        const auto s = file->summary();
        EXPECT_FALSE(s.complete);
        EXPECT_GT(s.walBytes, 0u);
        EXPECT_EQ(s.eventCount(), 22); // the rows in the WAL are read
        EXPECT_EQ(s.firstNs, 2);
        EXPECT_EQ(s.durationNs(), 2990000000 - 1000000000); // meta start to the last event
        EXPECT_TRUE(file->quickCheck().empty());
    }
    // A read-only connection neither checkpoints nor removes the WAL.
    EXPECT_EQ(readAll(path("killed.db")), db);
    EXPECT_EQ(readAll(path("killed.db-wal")), wal);
}

// Sets an environment variable for the scope of one test.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value)
        : m_name(name) {
        if (const char* old = getenv(name)) m_old = old;
        setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() { m_old ? setenv(m_name, m_old->c_str(), 1) : unsetenv(m_name); }

private:
    const char* m_name;
    std::optional<std::string> m_old;
};

TEST_F(TuneupFileTest, KilledRecordingInReadOnlyDirectoryIsReadFromACopy) {
    if (geteuid() == 0) GTEST_SKIP() << "root writes into a read-only directory anyway";
    writeKilledRecording(path("ro/killed.db"));
    fs::remove(path("ro/killed.db-shm"));
    ASSERT_EQ(chmod(path("ro").c_str(), 0555), 0);
    fs::create_directory(path("tmp"));
    ScopedEnv tmpdir("TMPDIR", path("tmp"));
    {
        auto file = TuneupFile::open(path("ro/killed.db"));
        EXPECT_TRUE(file->readFromCopy());
        const auto s = file->summary();
        EXPECT_EQ(s.eventCount(), 19); // the WAL's rows too
        ASSERT_EQ(s.warnings.size(), 1u);
        EXPECT_NE(s.warnings[0].find("read from a copy"), std::string::npos) << s.warnings[0];
        EXPECT_FALSE(fs::exists(path("ro/killed.db-shm")));
    }
    EXPECT_TRUE(fs::is_empty(path("tmp"))); // the copy goes with the file object
    chmod(path("ro").c_str(), 0700);
}

TEST_F(TuneupFileTest, KilledRecordingInReadOnlyDirectoryWithoutTemporarySpace) {
    if (geteuid() == 0) GTEST_SKIP() << "root writes into a read-only directory anyway";
    writeKilledRecording(path("ro/killed.db"));
    fs::remove(path("ro/killed.db-shm"));
    ASSERT_EQ(chmod(path("ro").c_str(), 0555), 0);
    ScopedEnv tmpdir("TMPDIR", path("no-such-dir"));
    auto [kind, message] = openError(path("ro/killed.db"));
    EXPECT_EQ(kind, Kind::Unreadable);
    EXPECT_NE(message.find("-wal"), std::string::npos) << message;
    EXPECT_NE(message.find("to a writable directory"), std::string::npos) << message;
    chmod(path("ro").c_str(), 0700);
}

TEST_F(TuneupFileTest, UnreadableFile) {
    if (geteuid() == 0) GTEST_SKIP() << "root reads every file";
    tuneup::test::writeTrace(path("secret.db"));
    ASSERT_EQ(chmod(path("secret.db").c_str(), 0), 0);
    auto [kind, message] = openError(path("secret.db"));
    EXPECT_EQ(kind, Kind::Unreadable);
    EXPECT_NE(message.find("Permission denied"), std::string::npos) << message;
}

TEST_F(TuneupFileTest, PathsWithUriCharacters) {
    const std::string odd = path("a ?#%b.db");
    tuneup::test::writeTrace(odd);
    EXPECT_EQ(TuneupFile::open(odd)->summary().eventCount(), 21);
}

} // namespace

namespace {

TEST_F(TuneupFileTest, FrameworkFlagsAreImportedWithUnknownAsMinusOne) {
    tuneup::test::writeTrace(path("flags.db"));
    const tuneup::analysis::TraceModel m = tuneup::analysis::importTuneupFile(path("flags.db"));
    ASSERT_EQ(m.frameworkFlags.size(), 3u);
    std::vector<std::pair<std::string, int64_t>> flags;
    for (size_t i = 0; i < m.frameworkFlags.size(); ++i)
        flags.emplace_back(std::string(m.str(m.frameworkFlags.name[i])), m.frameworkFlags.value[i]);
    EXPECT_EQ(flags[0], (std::pair<std::string, int64_t> { "cudnn.benchmark", 0 }));
    EXPECT_EQ(flags[1], (std::pair<std::string, int64_t> { "autograd.anomaly", -1 }));
    EXPECT_EQ(flags[2], (std::pair<std::string, int64_t> { "cudnn.benchmark", 1 }));
    EXPECT_EQ(m.frameworkFlags.timeNs[2], 1500000000);
}

TEST_F(TuneupFileTest, ThreadStatesAreImportedWithTheMachineThatNumberedTheirSystemCalls) {
    tuneup::test::TraceSpec spec;
    spec.threadStates = true;
    spec.machine = "aarch64";
    tuneup::test::writeTrace(path("states.db"), spec);
    const tuneup::analysis::TraceModel m = tuneup::analysis::importTuneupFile(path("states.db"));
    EXPECT_EQ(m.info.machine, "aarch64");
    ASSERT_EQ(m.threadStates.size(), 3u);
    EXPECT_EQ(m.threads[m.threadStates.thread[0]].tid, 4242);
    EXPECT_EQ(m.threadStates.timeNs[1], 1020000000);
    EXPECT_EQ(m.threadStates.state[0], 'R');
    EXPECT_EQ(m.threadStates.syscall[0], -1);
    EXPECT_EQ(m.threadStates.syscall[1], 98); // futex on aarch64
    EXPECT_EQ(m.threadStates.state[2], 'D');
    EXPECT_EQ(m.threadStates.syscall[2], -2); // NULL: unknown
    const tuneup::analysis::HostStateTimeline t(m);
    EXPECT_EQ(t.dominant({ 1020000000, 1030000000 }).activity, tuneup::analysis::HostActivity::Lock);

    // A file from before the agent wrote `machine` reads as x86-64, where those were recorded.
    spec.machine.clear();
    tuneup::test::writeTrace(path("old.db"), spec);
    EXPECT_EQ(tuneup::analysis::importTuneupFile(path("old.db")).info.machine, "x86_64");
}

TEST_F(TuneupFileTest, LibraryCallsAreImportedFieldForField) {
    tuneup::test::TraceSpec spec;
    spec.libraryCalls = true;
    tuneup::test::writeTrace(path("calls.db"), spec);
    const auto counted = TuneupFile::open(path("calls.db"))->summary();
    EXPECT_EQ(counted.eventCount(), 25); // `tuneup info` counts them
    using namespace tuneup::analysis;
    const TraceModel m = importTuneupFile(path("calls.db"));

    const GemmCallTable& g = m.gemmCalls;
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g.startNs[0], 1099990000);
    EXPECT_EQ(g.endNs[0], 1100000000);
    EXPECT_EQ(m.threads[g.thread[0]].tid, 4242);
    EXPECT_EQ(g.api[0], GemmApi::Cublas);
    EXPECT_EQ(m.str(g.name[0]), "cublasGemmEx");
    EXPECT_EQ(g.transa[0], 0);
    EXPECT_EQ(g.transb[0], 1);
    EXPECT_EQ(g.m[0], 30);
    EXPECT_EQ(g.n[0], 1001);
    EXPECT_EQ(g.k[0], 30);
    EXPECT_EQ(g.batch[0], 1);
    EXPECT_EQ(g.aType[0], 2);
    EXPECT_EQ(g.bType[0], 2);
    EXPECT_EQ(g.cType[0], 2);
    EXPECT_EQ(g.computeType[0], 68);
    EXPECT_EQ(g.lda[0], 30);
    EXPECT_EQ(g.ldb[0], 1001);
    EXPECT_EQ(g.ldc[0], 30);
    EXPECT_EQ(g.strideA[0], -1); // NULL: not a strided batched call
    EXPECT_EQ(g.epilogue[0], -1);
    EXPECT_EQ(g.externalId[0], 17u);
    EXPECT_EQ(g.status[0], 0);
    EXPECT_EQ(g.api[1], GemmApi::CublasLt);
    EXPECT_EQ(g.batch[1], 12);
    EXPECT_EQ(g.strideA[1], 32256);
    EXPECT_EQ(g.strideB[1], 64512);
    EXPECT_EQ(g.strideC[1], 2048);
    EXPECT_EQ(g.epilogue[1], 4);
    EXPECT_EQ(g.externalId[1], 0u);
    EXPECT_EQ(g.status[1], 1);

    const ConvCallTable& c = m.convCalls;
    ASSERT_EQ(c.size(), 2u);
    EXPECT_EQ(c.api[0], ConvApi::Legacy);
    EXPECT_EQ(m.str(c.name[0]), "cudnnGetConvolutionForwardAlgorithm_v7");
    EXPECT_EQ(c.kind[0], ConvCallKind::Heuristic);
    EXPECT_EQ(c.direction[0], ConvDirection::Forward);
    EXPECT_EQ(
        std::vector<int32_t>({ c.n[0], c.c[0], c.d[0], c.h[0], c.w[0], c.k[0], c.filterC[0], c.t[0], c.r[0], c.s[0] }),
        std::vector<int32_t>({ 8, 3, -1, 224, 224, 64, 3, -1, 7, 7 }));
    EXPECT_EQ(std::vector<int32_t>({ c.padD[0], c.padH[0], c.padW[0], c.strideD[0], c.strideH[0], c.strideW[0],
                  c.dilationD[0], c.dilationH[0], c.dilationW[0], c.groups[0] }),
        std::vector<int32_t>({ -1, 3, 3, -1, 2, 2, -1, 1, 1, 1 }));
    EXPECT_EQ(c.dataType[0], 2);
    EXPECT_EQ(c.computeType[0], 0);
    EXPECT_EQ(c.mathType[0], 1);
    EXPECT_EQ(c.layout[0], TensorLayout::Nchw);
    EXPECT_EQ(c.algo[0], 1);
    EXPECT_EQ(c.algoSource[0], AlgoSource::Heuristic);
    EXPECT_EQ(c.planId[0], 0u);
    EXPECT_EQ(c.status[0], 0);
    EXPECT_EQ(c.api[1], ConvApi::Backend);
    EXPECT_EQ(c.kind[1], ConvCallKind::Run);
    EXPECT_EQ(c.direction[1], ConvDirection::BackwardData);
    EXPECT_EQ(c.d[1], 8);
    EXPECT_EQ(c.t[1], 3);
    EXPECT_EQ(c.groups[1], 2);
    EXPECT_EQ(c.mathType[1], -1);
    EXPECT_EQ(c.layout[1], TensorLayout::Nhwc);
    EXPECT_EQ(c.algo[1], 7);
    EXPECT_EQ(c.algoSource[1], AlgoSource::Given);
    EXPECT_EQ(c.planId[1], 3u);
    EXPECT_EQ(c.status[1], 2000);

    // Only the agent's own external correlations (kind 5, CUSTOM2) are read.
    ASSERT_EQ(m.externalCorrelations.size(), 1u);
    EXPECT_EQ(m.externalCorrelations.correlation[0], 0u);
    EXPECT_EQ(m.externalCorrelations.externalId[0], 17u);
}

TEST_F(TuneupFileTest, EventCountsAreSummedBySourceAndThread) {
    tuneup::test::writeTrace(path("counts.db"), {});
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path("counts.db").c_str(), &db), SQLITE_OK);
    // Thread 11's nvtx row twice: a process that exec()s writes its rows again.
    tuneup::test::exec(db,
        "INSERT INTO event_counts VALUES ('nvtx', 12, 50, 0), ('nvtx', 11, 100, 7), ('cupti', NULL, 40, 3), "
        "('nvtx', 11, 10, 1)");
    sqlite3_close(db);
    const auto s = TuneupFile::open(path("counts.db"))->summary();
    ASSERT_EQ(s.sourceCounts.size(), 3u);
    EXPECT_EQ(s.sourceCounts[0].source, "cupti");
    EXPECT_FALSE(s.sourceCounts[0].tid);
    EXPECT_EQ(s.sourceCounts[0].written, 40);
    EXPECT_EQ(s.sourceCounts[0].dropped, 3);
    EXPECT_EQ(s.sourceCounts[1].source, "nvtx");
    EXPECT_EQ(s.sourceCounts[1].tid, 11);
    EXPECT_EQ(s.sourceCounts[1].written, 110);
    EXPECT_EQ(s.sourceCounts[1].dropped, 8);
    EXPECT_EQ(s.sourceCounts[2].tid, 12);

    // A file from before schema 4 has no such table.
    ASSERT_EQ(sqlite3_open(path("counts.db").c_str(), &db), SQLITE_OK);
    tuneup::test::exec(db, "DROP TABLE event_counts");
    sqlite3_close(db);
    EXPECT_TRUE(TuneupFile::open(path("counts.db"))->summary().sourceCounts.empty());
}

TEST_F(TuneupFileTest, SchemaVersionTwoStillOpens) {
    tuneup::test::TraceSpec spec;
    spec.schemaVersion = 2;
    tuneup::test::writeTrace(path("v2.db"), spec);
    auto file = TuneupFile::open(path("v2.db"));
    EXPECT_EQ(file->schemaVersion(), 2);
    EXPECT_EQ(file->summary().eventCount(), 21); // no gemm_calls or conv_calls table to count
    const tuneup::analysis::TraceModel m = tuneup::analysis::importTuneupFile(path("v2.db"));
    EXPECT_EQ(m.kernels.size(), 3u);
    EXPECT_EQ(m.frameworkFlags.size(), 3u);
    EXPECT_EQ(m.gemmCalls.size(), 0u);
    EXPECT_EQ(m.convCalls.size(), 0u);
    EXPECT_EQ(m.externalCorrelations.size(), 0u);
}

// GPU memory (schema 6): CUPTI's allocations and releases, the caching allocator's readings and its peaks.
TEST_F(TuneupFileTest, MemoryEventsAndPeaksAreImported) {
    tuneup::test::writeTrace(path("memory.db"));
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path("memory.db").c_str(), &db), SQLITE_OK);
    tuneup::test::exec(db,
        "INSERT INTO memory_events (ts_ns, device_id, source, delta_bytes, delta_of, allocated_bytes, reserved_bytes, "
        "memory_kind, address, tid, correlation_id, stream_id) VALUES "
        // cudaMalloc of 2 MiB on GPU 1, its cudaFree without a size (the size it was allocated with)
        "(1100000000, 1, 1, 2097152, 2, NULL, NULL, 3, 140000000000, NULL, 7, NULL), "
        "(1200000000, 1, 1, 0, 2, NULL, NULL, 3, 140000000000, NULL, 8, NULL), "
        // cudaHostAlloc: host memory; a stream-ordered allocation: allocated from a pool
        "(1300000000, 0, 1, 4096, 2, NULL, NULL, 2, 150000000000, NULL, 9, NULL), "
        "(1350000000, 1, 1, 1024, 1, NULL, NULL, 3, 160000000000, NULL, 10, 13), "
        // the allocator's totals read after an optimizer step
        "(1400000000, 1, 2, 0, 1, 3000000000, 5000000000, 3, NULL, 4242, NULL, NULL), "
        // damage: no time, negative totals
        "('soon', 1, 2, 0, 1, 1, 1, 3, NULL, NULL, NULL, NULL), "
        "(1500000000, 1, 2, 0, 1, -7, -9, 3, NULL, NULL, NULL, NULL); "
        "INSERT INTO memory_peaks (start_ns, end_ns, device_id, tid, allocated_bytes, reserved_bytes) VALUES "
        "(1000000000, 1400000000, 1, 4242, 7000000000, 8000000000), (1400000001, 1600000000, 1, 4242, 6000000000, "
        "NULL), ('x', 1700000000, 1, NULL, 1, 1)");
    sqlite3_close(db);

    const auto summary = TuneupFile::open(path("memory.db"))->summary();
    std::map<std::string, tuneup::analysis::TableCount> counts;
    for (const auto& count : summary.eventCounts)
        counts[count.table] = count;
    EXPECT_EQ(counts["memory_events"].rows, 7);
    EXPECT_EQ(counts["memory_events"].badTimes, 1);
    EXPECT_EQ(counts["memory_peaks"].rows, 3);
    EXPECT_EQ(counts["memory_peaks"].badTimes, 1);

    using namespace tuneup::analysis;
    const TraceModel m = importTuneupFile(path("memory.db"));
    const MemoryEventTable& e = m.memoryEvents;
    ASSERT_EQ(e.size(), 6u);
    EXPECT_EQ(e.device[0], 1);
    EXPECT_EQ(e.deltaBytes[0], 2097152);
    EXPECT_EQ(e.deltaOf[0], MemoryTotal::Reserved);
    EXPECT_EQ(e.allocatedBytes[0], -1);
    EXPECT_EQ(e.reservedBytes[0], -1);
    EXPECT_EQ(e.address[0], 140000000000u);
    EXPECT_EQ(e.thread[0], kNoThread);
    EXPECT_EQ(e.deltaBytes[1], -2097152) << "a release takes the size of its allocation";
    EXPECT_EQ(e.device[2], kHostMemory);
    EXPECT_EQ(e.deltaOf[3], MemoryTotal::Allocated);
    EXPECT_EQ(e.deltaBytes[4], 0);
    EXPECT_EQ(e.allocatedBytes[4], 3000000000);
    EXPECT_EQ(e.reservedBytes[4], 5000000000);
    ASSERT_NE(e.thread[4], kNoThread);
    EXPECT_EQ(m.threads[e.thread[4]].tid, 4242);
    EXPECT_EQ(e.allocatedBytes[5], -1) << "a negative total is unknown";
    EXPECT_EQ(e.reservedBytes[5], -1);
    const MemoryPeakTable& p = m.memoryPeaks;
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p.startNs[0], 1000000000);
    EXPECT_EQ(p.endNs[0], 1400000000);
    EXPECT_EQ(p.device[0], 1);
    EXPECT_EQ(p.allocatedBytes[0], 7000000000);
    EXPECT_EQ(p.reservedBytes[0], 8000000000);
    EXPECT_EQ(p.reservedBytes[1], -1);
    EXPECT_EQ(m.stats.value("times.not_integers"), 2);
}

TEST_F(TuneupFileTest, SchemaVersionFiveHasNoMemoryTables) {
    tuneup::test::TraceSpec spec;
    spec.schemaVersion = 5;
    tuneup::test::writeTrace(path("v5.db"), spec);
    auto file = TuneupFile::open(path("v5.db"));
    EXPECT_EQ(file->schemaVersion(), 5);
    EXPECT_EQ(file->summary().eventCount(), 21);
    const tuneup::analysis::TraceModel m = tuneup::analysis::importTuneupFile(path("v5.db"));
    EXPECT_EQ(m.kernels.size(), 3u);
    EXPECT_TRUE(m.memoryEvents.empty());
    EXPECT_TRUE(m.memoryPeaks.empty());
}

TEST_F(TuneupFileTest, SchemaVersionOneStillOpens) {
    tuneup::test::TraceSpec spec;
    spec.schemaVersion = 1;
    tuneup::test::writeTrace(path("v1.db"), spec);
    auto file = TuneupFile::open(path("v1.db"));
    EXPECT_EQ(file->schemaVersion(), 1);
    const tuneup::analysis::TraceModel m = tuneup::analysis::importTuneupFile(path("v1.db"));
    EXPECT_EQ(m.kernels.size(), 3u);
    EXPECT_EQ(m.frameworkFlags.size(), 0u);
}

} // namespace

namespace {

TEST_F(TuneupFileTest, BootstrapFactsAreTheTuneupDomainsMarksWithAPayload) {
    tuneup::test::writeTrace(path("facts.db"));
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path("facts.db").c_str(), &db), SQLITE_OK);
    tuneup::test::exec(db,
        "INSERT INTO strings VALUES (20, 'tuneup'), (21, 'tuneup.dataloader.num_workers'), (22, 'other'); "
        "INSERT INTO nvtx_domains VALUES (1, 20); "
        "INSERT INTO nvtx_marks (ts_ns, tid, domain_id, name_id, payload_type, payload) VALUES "
        "(1600000000, 4242, 1, 21, 2, 0), (1700000000, 4242, 1, 21, 2, 4), "
        "(1650000000, 4242, 1, 22, NULL, NULL), (1660000000, 4242, 0, 22, 2, 9)");
    sqlite3_close(db);
    const tuneup::analysis::TraceModel m = tuneup::analysis::importTuneupFile(path("facts.db"));
    ASSERT_EQ(m.programFacts.size(), 2u); // no payload, or another domain: not a fact
    EXPECT_EQ(m.str(m.programFacts.name[0]), "tuneup.dataloader.num_workers");
    EXPECT_EQ(m.programFacts.value[0], 0);
    EXPECT_EQ(m.programFacts.value[1], 4);
    EXPECT_EQ(m.programFacts.timeNs[1], 1700000000);
}

} // namespace
