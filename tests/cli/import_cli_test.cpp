// `tuneup import` and `tuneup advise` on Nsight Systems exports, run as a user runs them: every rule runs
// on an export, an export without CUDA activity is a clear error with exit 1, and import writes a tuneup
// file that the other commands read, refusing to replace what is not its to replace.

#include "nsys_fixture.h"
#include "shared_traces.h"
#include "temp_dir.h"

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

const fs::path kTraces = TUNEUP_SHARED_TRACES;
const std::string kReport1 = (kTraces / "nvfuser/ee4fcf30/report1.sqlite").string();
const std::string kNoCuda = (kTraces / "dynamicvit/nsys_profile.sqlite").string();
const std::string kAlexnet
    = (kTraces / "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz").string();

#define REQUIRE_TRACES() TUNEUP_REQUIRE_SHARED_TRACES(kTraces)
#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

struct Result {
    int code = -1;
    std::string out, err;
};

std::string readAll(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
}

class ImportCliTest : public ::testing::Test {
protected:
    std::string path(const std::string& name) const { return (fs::path(m_dir) / name).string(); }

    Result run(const std::vector<std::string>& args) {
        const std::string outPath = path(".stdout"), errPath = path(".stderr");
        const pid_t pid = fork();
        if (pid == 0) {
            const int out = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            const int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            dup2(out, 1);
            dup2(err, 2);
            std::vector<char*> argv { const_cast<char*>(TUNEUP_BINARY) };
            for (const std::string& arg : args)
                argv.push_back(const_cast<char*>(arg.c_str()));
            argv.push_back(nullptr);
            execv(TUNEUP_BINARY, argv.data());
            _exit(99);
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) { }
        Result r;
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 1000 + WTERMSIG(status);
        r.out = readAll(outPath);
        r.err = readAll(errPath);
        return r;
    }

    tuneup::test::TempDir m_tmp { "import_cli_test" };
    std::string m_dir = m_tmp.path();
};

TEST_F(ImportCliTest, AdviseOnAnNsysExportRunsEveryRule) {
    REQUIRE_TRACES();
    const Result rules = run({ "rules" });
    ASSERT_EQ(rules.code, 0) << rules.err;
    std::vector<std::string> ids;
    std::istringstream lines(rules.out);
    for (std::string line; std::getline(lines, line);)
        if (!line.empty() && line[0] != ' ') ids.push_back(line);
    ASSERT_GE(ids.size(), 10u);

    const Result r = run({ "advise", kReport1, "--format", "json" });
    ASSERT_EQ(r.code, 0) << r.err;
    // Each rule reports: a finding, clean, not applicable, or not evaluated with what it needs.
    for (const std::string& id : ids)
        EXPECT_CONTAINS(r.out, "\"" + id + "\"");
    EXPECT_CONTAINS(r.out, "nsys-sqlite");
    EXPECT_CONTAINS(r.out, "pageable-memcpy"); // a 394 MB copy from pageable memory
}

// MANIFEST.md: CloverLeaf is an HPC mini-app, not deep learning: the deep-learning rules stay silent (its
// per-iteration cudaDeviceSynchronize and pageable copies are real findings).
TEST_F(ImportCliTest, DeepLearningRulesStaySilentOnAnHpcApp) {
    REQUIRE_TRACES();
    const Result r = run(
        { "advise", (kTraces / "pipit/pipit/tests/data/cloverleaf-nsys/perlmutter-cloverleaf-cuda.sqlite").string(),
            "--format", "json", "--all" }); // --all: its pageable copies are 1.4% of a step but under 1 ms
    ASSERT_EQ(r.code, 0) << r.err;
    const size_t findings = r.out.find("\"findings\""), others = r.out.find("\"rules_without_findings\"");
    ASSERT_NE(findings, std::string::npos);
    ASSERT_NE(others, std::string::npos);
    const std::string raised = r.out.substr(findings, others - findings);
    for (const char* rule : { "amp-unused", "zero-grad-fill", "dataloader-stall", "data-parallel", "unfused-pointwise",
             "gemm-dims-not-aligned", "cudnn-autotuner-off", "communication-bound" })
        EXPECT_EQ(raised.find(std::string("\"") + rule + "\""), std::string::npos) << rule;
    EXPECT_NE(raised.find("\"sync-in-loop\""), std::string::npos);
    EXPECT_NE(raised.find("\"pageable-memcpy\""), std::string::npos);
}

TEST_F(ImportCliTest, AdviseOnAnExportWithoutCudaActivityExitsOne) {
    REQUIRE_TRACES();
    const Result r = run({ "advise", kNoCuda });
    EXPECT_EQ(r.code, 1);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_CONTAINS(
        r.err, kNoCuda + ": an Nsight Systems export with no CUDA activity: the capture recorded no kernels");
}

TEST_F(ImportCliTest, AdviseOnADamagedSqliteFileExitsOne) {
    tuneup::test::writeNsysExport(path("small.sqlite"),
        "INSERT INTO StringIds VALUES (1, 'k'); INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, "
        "contextId, streamId, demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, "
        "blockZ, staticSharedMemory, dynamicSharedMemory) VALUES (1, 2, 0, 1, 7, 1, 1, 8, 1, 1, 1, 1, 1, 1, 0, 0)");
    const std::string bytes = readAll(path("small.sqlite"));
    std::ofstream(path("cut.sqlite"), std::ios::binary) << bytes.substr(0, 3000);
    const Result r = run({ "advise", path("cut.sqlite") });
    EXPECT_EQ(r.code, 1);
    EXPECT_CONTAINS(r.err, path("cut.sqlite") + ": ");
    EXPECT_CONTAINS(r.err, "cut short");
}

TEST_F(ImportCliTest, ImportWritesATuneupFileTheOtherCommandsRead) {
    REQUIRE_TRACES();
    const Result r = run({ "import", kReport1, "-o", path("run.db") });
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_CONTAINS(r.err, "imported 14.5 k events from " + kReport1 + " (nsys-sqlite) -> " + path("run.db"));
    EXPECT_CONTAINS(r.err, "18 kernels, 3 copies, 3 memsets, 3 syncs, 990 API calls, 13,513 ranges");
    EXPECT_FALSE(fs::exists(path("run.db.importing")));
    const Result info = run({ "info", path("run.db") });
    EXPECT_EQ(info.code, 0) << info.err;
    EXPECT_CONTAINS(info.out, "kernels                  18");
    const Result advise = run({ "advise", path("run.db") });
    EXPECT_EQ(advise.code, 0) << advise.err;
    EXPECT_CONTAINS(advise.out, "pageable-memcpy");

    // A Kineto trace: what the schema has no table for is said, and left out.
    const Result kineto = run({ "import", kAlexnet, "-o", path("alexnet.db") });
    ASSERT_EQ(kineto.code, 0) << kineto.err;
    EXPECT_CONTAINS(kineto.err, "not in the tuneup schema, so left out: 359 CPU ops");
    // Memory events (profile_memory=True) are written: 236 in TraceLens's BERT-small trace, which info counts
    // and advise reads from the copy as from the source: memory-headroom finds the same peak; the source is
    // inference (operators without a backward pass), which the copy, without operators, cannot tell: it is not
    // evaluated there rather than advise a larger training batch.
    const std::string bert
        = (kTraces / "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz").string();
    const Result memory = run({ "import", bert, "-o", path("bert.db") });
    ASSERT_EQ(memory.code, 0) << memory.err;
    EXPECT_CONTAINS(memory.err, ", 236 memory events");
    EXPECT_EQ(memory.err.find("memory events (tuneup advise"), std::string::npos) << memory.err;
    const Result bertInfo = run({ "info", path("bert.db") });
    EXPECT_CONTAINS(bertInfo.out, "memory_events           236");
    const Result fromCopy = run({ "advise", path("bert.db"), "--all" });
    const Result fromSource = run({ "advise", bert, "--all" });
    EXPECT_CONTAINS(fromSource.out, "GPU memory peaks at 122 MB of 85 GB (0.1%, reserved)");
    EXPECT_CONTAINS(fromCopy.out, "GPU memory peaks at 122 MB of 85 GB (0.1%");
    EXPECT_CONTAINS(fromCopy.out, "whether this is training cannot be told");
}

TEST_F(ImportCliTest, ImportRefusesToReplaceWithoutForceAndNeverReplacesOtherData) {
    REQUIRE_TRACES();
    ASSERT_EQ(run({ "import", kReport1, "-o", path("run.db") }).code, 0);
    const auto written = fs::last_write_time(path("run.db"));
    Result r = run({ "import", kAlexnet, "-o", path("run.db") });
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, path("run.db") + " exists; add --force");
    EXPECT_EQ(fs::last_write_time(path("run.db")), written);

    // --force replaces a tuneup file, and the -wal beside it that SQLite would otherwise apply to it.
    std::ofstream(path("run.db-wal")) << "stale";
    r = run({ "import", kAlexnet, "-o", path("run.db"), "--force" });
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_FALSE(fs::exists(path("run.db-wal")));
    EXPECT_CONTAINS(run({ "info", path("run.db") }).out, "kernels                  79");

    // A leftover -wal alone counts as an existing output.
    fs::remove(path("run.db"));
    std::ofstream(path("run.db-wal")) << "stale";
    EXPECT_EQ(run({ "import", kAlexnet, "-o", path("run.db") }).code, 2);

    // Never somebody else's file, even with --force.
    fs::copy_file(kReport1, path("report.sqlite"));
    const std::string before = readAll(path("report.sqlite"));
    r = run({ "import", kAlexnet, "-o", path("report.sqlite"), "--force" });
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "is not a tuneup trace, so tuneup will not replace it");
    EXPECT_EQ(readAll(path("report.sqlite")), before);
}

TEST_F(ImportCliTest, ImportBadInputAndBadUsage) {
    Result r = run({ "import", path("missing.json"), "-o", path("out.db") });
    EXPECT_EQ(r.code, 1);
    EXPECT_CONTAINS(r.err, path("missing.json") + ": ");
    EXPECT_FALSE(fs::exists(path("out.db")));

    std::ofstream(path("notes.txt")) << "not a trace\n";
    r = run({ "import", path("notes.txt"), "-o", path("out.db") });
    EXPECT_EQ(r.code, 1);
    EXPECT_CONTAINS(r.err, "not a trace tuneup reads");
    EXPECT_FALSE(fs::exists(path("out.db")));

    EXPECT_EQ(run({ "import", path("notes.txt") }).code, 2); // no -o
    r = run({ "import", path("notes.txt"), "-o", path("no/such/dir/out.db") });
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "does not exist");
    r = run({ "import", path("notes.txt"), "-o", m_dir });
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "is a directory");
    tuneup::test::writeNsysExport(
        path("one.sqlite"), "INSERT INTO NVTX_EVENTS (start, end, eventType, text) VALUES (1, 2, 59, 'x')");
    r = run({ "import", path("one.sqlite"), "-o", path("one.sqlite"), "--force" });
    EXPECT_EQ(r.code, 2);
    EXPECT_CONTAINS(r.err, "the same file");

    r = run({ "import", "--help" });
    EXPECT_EQ(r.code, 0);
    EXPECT_CONTAINS(r.out, "tuneup import report.sqlite -o run.db");
    EXPECT_CONTAINS(r.out, "Exit codes:");
}

} // namespace
