// The main thread's native stack, sampled by the agent in programs that are not Python (agent/
// native_stack_sampler.h) and named by `tuneup record` from the binary's debug information (analysis/import/
// native_frame_names.h): tests/clients/native_spin.cpp spends its CPU time on one line of its own code, inside
// libm's sin (no frame pointers: the unwind tables are walked), and that line is what the samples must name.

#include "import/native_frame_names.h"
#include "import/tuneup_import.h"
#include "run_program.h"
#include "sqlite_query.h"
#include "temp_dir.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <rapidjson/document.h>

namespace tuneup::test {
namespace {

const std::string kSpin = TUNEUP_TEST_NATIVE_SPIN;
const std::string kSpinSource = std::string(TUNEUP_SOURCE_DIR) + "/tests/clients/native_spin.cpp";

int lineOf(const std::string& file, const std::string& text) {
    std::ifstream in(file);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
        ++number;
        if (line.find(text) != std::string::npos) return number;
    }
    return -1;
}

// Why this kernel samples nothing (perf_event_paranoid 3, a container's seccomp filter), or "" when it does.
std::string perfRefused(const std::string& db) {
    const std::string native = SqliteQuery(db).meta("capture.native_stacks").value_or("");
    return native.starts_with("off: perf_event_open refused") ? native : "";
}

// TUNEUP_SAMPLE_MS for the recordings made while it lives.
class SamplePeriod {
public:
    explicit SamplePeriod(const char* ms) { setenv("TUNEUP_SAMPLE_MS", ms, 1); }
    ~SamplePeriod() { unsetenv("TUNEUP_SAMPLE_MS"); }
    SamplePeriod(const SamplePeriod&) = delete;
    SamplePeriod& operator=(const SamplePeriod&) = delete;
};

class NativeStacksTest : public ::testing::Test {
protected:
    TempDir m_dir { "native_stacks_test" };
    std::string path(const std::string& name) const { return m_dir.path() + "/" + name; }

    ProgramResult record(const std::string& db, const std::vector<std::string>& command) {
        std::vector<std::string> args { "record", "-o", db, "--" };
        args.insert(args.end(), command.begin(), command.end());
        return runProgram(TUNEUP_TEST_CLI, args);
    }
};

TEST_F(NativeStacksTest, TheHotLineOfANativeProgramIsNamed) {
    const std::string db = path("spin.db");
    const ProgramResult r = record(db, { kSpin, "400" });
    ASSERT_EQ(r.code, 0) << r.err;
    if (const std::string why = perfRefused(db); !why.empty()) GTEST_SKIP() << why;
    SqliteQuery q(db);
    ASSERT_TRUE(q.meta("capture.native_stacks").value_or("").starts_with("on: every 10 ms")) << r.err;
    // About 40 samples in 400 ms of CPU time; each had a frame of the program's code.
    const int64_t samples = q.scalar("SELECT value FROM stats WHERE name = 'native_stacks.samples'");
    EXPECT_GE(samples, 10);
    EXPECT_EQ(q.scalar("SELECT count(*) FROM native_samples"),
        q.scalar("SELECT value FROM stats WHERE name = 'native_stacks.with_user_frame'"));
    // Most samples stop in sin, inside libm: the frame kept is the call on the marked line.
    const int hot = lineOf(kSpinSource, "native-spin: the hot line");
    const auto rows = q.rows("SELECT f.value, p.line, g.value, count(*) FROM native_samples p JOIN strings f ON f.id "
                             "= p.file_id JOIN strings g ON g.id = p.function_id GROUP BY 1, 2, 3 ORDER BY 4 DESC");
    ASSERT_FALSE(rows.empty()) << r.err;
    EXPECT_EQ(*rows[0][0], kSpinSource);
    EXPECT_EQ(std::stoi(*rows[0][1]), hot);
    EXPECT_NE(rows[0][2]->find("spinInUserCode"), std::string::npos) << *rows[0][2];
    EXPECT_GE(std::stoll(*rows[0][3]) * 2, q.scalar("SELECT count(*) FROM native_samples")) << "the hot line: most";
    // At most one in ten without a file and line: samples that stop in the program's code that has no debug
    // information (its PLT entry for sin).
    EXPECT_LE(q.scalar("SELECT count(*) FROM native_samples WHERE file_id IS NULL") * 10,
        q.scalar("SELECT count(*) FROM native_samples"));
    EXPECT_NE(r.err.find("native stacks: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("named from its debug information"), std::string::npos) << r.err;

    // The analysis reads them as the main thread's sampled frames, named as Python's are.
    const analysis::TraceModel model = analysis::importTuneupFile(db);
    std::map<std::string, size_t> frames;
    for (size_t i = 0; i < model.pythonSamples.size(); ++i)
        ++frames[std::string(model.str(model.pythonSamples.frame[i]))];
    ASSERT_FALSE(frames.empty());
    const std::string expected = kSpinSource + "(" + std::to_string(hot) + "): ";
    EXPECT_TRUE(std::any_of(frames.begin(), frames.end(), [&](const auto& f) {
        return f.first.starts_with(expected) && f.first.find("spinInUserCode") != std::string::npos;
    })) << frames.begin()->first;
}

// A program that unloads a library of its own while the agent may be unwinding samples taken in it: it runs on
// unharmed (the agent's dlclose waits for the unwinding, and a symbol's name is copied only while its library is
// surely loaded), and the samples in the library are kept. Before that, about one run in ten ended in SIGSEGV.
TEST_F(NativeStacksTest, ALibraryUnloadedWhileItsSamplesAreUnwoundHarmsNothing) {
    const SamplePeriod everyMillisecond("1");
    int64_t inLibrary = 0;
    for (int run = 0; run < 6; ++run) {
        const std::string db = path("unload" + std::to_string(run) + ".db");
        const ProgramResult r = record(db, { TUNEUP_TEST_NATIVE_UNLOAD, "1000", TUNEUP_TEST_NATIVE_UNLOAD_LIBRARY });
        ASSERT_EQ(r.code, 0) << "run " << run << ": " << r.err;
        if (const std::string why = perfRefused(db); !why.empty()) GTEST_SKIP() << why;
        EXPECT_NE(r.out.find("native_unload: "), std::string::npos) << r.out;
        inLibrary += SqliteQuery(db).scalar("SELECT count(*) FROM native_samples n JOIN strings m ON m.id = "
                                            "n.module_id WHERE m.value LIKE '%libnative_unload_lib.so'");
    }
    EXPECT_GT(inLibrary, 0) << "samples taken in the library it loads and unloads";
}

#ifdef TUNEUP_TEST_MLP_TRAINING
// A LibTorch training program: its main thread's CPU time goes to LibTorch's operators (no user frame there), called
// from the training loop, which is what the samples name, not the LibTorch header templates compiled into it.
TEST_F(NativeStacksTest, ALibTorchProgramsSamplesNameItsTrainingLoop) {
    const std::string db = path("mlp.db");
    const ProgramResult r
        = record(db, { TUNEUP_TEST_MLP_TRAINING, "--steps", "40", "--batch", "64", "--hidden", "512" });
    ASSERT_EQ(r.code, 0) << r.err;
    if (const std::string why = perfRefused(db); !why.empty()) GTEST_SKIP() << why;
    SqliteQuery q(db);
    EXPECT_GE(q.scalar("SELECT count(*) FROM native_samples"), 10);
    const std::string source = std::string(TUNEUP_SOURCE_DIR) + "/samples/mlp_training/main.cpp";
    EXPECT_GE(q.scalar("SELECT count(*) FROM native_samples p JOIN strings f ON f.id = p.file_id WHERE f.value = '"
                  + source + "'")
            * 10,
        q.scalar("SELECT count(*) FROM native_samples") * 9)
        << "nine in ten in the training loop";
    EXPECT_EQ(q.scalar("SELECT count(*) FROM native_samples p JOIN strings f ON f.id = p.file_id WHERE f.value LIKE "
                       "'/usr/include/%'"),
        0);
}
#endif

#ifdef TUNEUP_TEST_DATALOADER_SAMPLE
// A finding names where the training thread was: the C++ DataLoader sample decoding its batches in that thread
// (--decode-ms of arithmetic per sample, no workers) waits for data, and dataloader-stall's sampled sources are the
// decoding lines.
TEST_F(NativeStacksTest, ADataLoaderStallNamesTheLineTheTrainingThreadDecodesAt) {
    const std::string db = path("loader.db");
    const ProgramResult r
        = record(db, { TUNEUP_TEST_DATALOADER_SAMPLE, "--steps", "12", "--load-ms", "0", "--decode-ms", "3" });
    ASSERT_EQ(r.code, 0) << r.err;
    if (const std::string why = perfRefused(db); !why.empty()) GTEST_SKIP() << why;
    if (SqliteQuery(db).scalar("SELECT count(*) FROM native_samples WHERE file_id IS NOT NULL") == 0)
        GTEST_SKIP() << "the samples were built without debug information (a Release build): nothing to name";
    const ProgramResult advice = runProgram(TUNEUP_TEST_CLI, { "advise", db, "--format", "json" });
    ASSERT_EQ(advice.code, 0) << advice.err;
    rapidjson::Document doc;
    doc.Parse(advice.out.c_str());
    ASSERT_TRUE(doc.IsObject()) << advice.out;
    const std::string source = std::string(TUNEUP_SOURCE_DIR) + "/samples/cpp/dataloader_workers.cpp";
    // decode's lines, down to its arithmetic (named in decode, or in get where decode is inlined).
    const int first = lineOf(source, "double decode(double ms) {"), last = lineOf(source, "decode: the CPU's work");
    bool stall = false;
    double share = 0; // of the samples in the waits
    for (const auto& f : doc["findings"].GetArray()) {
        if (std::string(f["rule"].GetString()) != "dataloader-stall") continue;
        stall = true;
        for (const auto& site : f["sources"].GetArray())
            if (site["sampled"].GetBool() && site["file"].GetString() == source && site["line"].GetInt() >= first
                && site["line"].GetInt() <= last)
                share += site["share"].GetDouble();
    }
    EXPECT_TRUE(stall) << advice.out;
    EXPECT_GE(share, 0.5) << source << ":" << first << "-" << last << " in " << advice.out;
}
#endif

// The kernel's buffer is not inherited (MADV_DONTFORK): a forked child never reads, or frees, its parent's samples.
// The child records (an event), so it samples itself: its writer takes the lock against unloading that the forking
// thread held across fork, which the child must start with free (a recursive mutex's owner is a thread id).
TEST_F(NativeStacksTest, AForkedChildLeavesItsParentsSamplesAlone) {
    const std::string db = path("fork.db");
    const ProgramResult r = record(db, { kSpin, "300", "fork" });
    ASSERT_EQ(r.code, 0) << r.err; // 1: the child did not end well
    if (const std::string why = perfRefused(db); !why.empty()) GTEST_SKIP() << why;
    size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(m_dir.path())) {
        if (entry.path().extension() != ".db") continue;
        ++files;
        SqliteQuery q(entry.path().string());
        const std::string pid = q.meta("pid").value_or("?");
        EXPECT_EQ(q.scalar("SELECT count(*) FROM native_samples WHERE tid != " + pid), 0) << entry.path();
        EXPECT_GE(q.scalar("SELECT count(*) FROM native_samples"), 5) << entry.path() << ": its own samples";
        if (entry.path().string() == db) continue;
        EXPECT_EQ(q.meta("role").value_or(""), "forked-child");
        EXPECT_TRUE(q.meta("end_ns")) << "the child's file is finished: its writer was not stuck";
    }
    EXPECT_EQ(files, 2u) << r.err;
}

TEST_F(NativeStacksTest, PythonProgramsAndSampleMsZeroHaveNone) {
#ifdef TUNEUP_TEST_PYTHON
    const std::string db = path("python.db");
    const ProgramResult r = record(db, { TUNEUP_TEST_PYTHON, "-c", "sum(i * i for i in range(3000000))" });
    ASSERT_EQ(r.code, 0) << r.err;
    SqliteQuery q(db);
    EXPECT_EQ(
        q.meta("capture.native_stacks").value_or(""), "off: a Python program: the bootstrap samples its Python stack");
    EXPECT_EQ(q.scalar("SELECT count(*) FROM native_samples"), 0);
#endif
    const std::string off = path("off.db");
    setenv("TUNEUP_SAMPLE_MS", "0", 1);
    const ProgramResult quiet = record(off, { kSpin, "100" });
    unsetenv("TUNEUP_SAMPLE_MS");
    ASSERT_EQ(quiet.code, 0) << quiet.err;
    SqliteQuery quietFile(off);
    EXPECT_FALSE(quietFile.meta("capture.native_stacks").has_value());
    EXPECT_EQ(quietFile.scalar("SELECT count(*) FROM native_samples"), 0);
}

TEST_F(NativeStacksTest, WithoutAddr2lineTheFramesKeepTheirModuleAndAddress) {
    const std::string db = path("unnamed.db");
    setenv("TUNEUP_SAMPLE_MS", "5", 1);
    // The agent alone, as a user who sets LD_PRELOAD (and says which process is the main one, so that its file is
    // made at start): nothing names the frames afterwards.
    const ProgramResult r = runProgram("/bin/sh",
        { "-c",
            "TUNEUP_MAIN_PID=$$ LD_PRELOAD=" TUNEUP_TEST_AGENT_PATH " TUNEUP_OUTPUT=" + db + " exec " + kSpin
                + " 200" });
    unsetenv("TUNEUP_SAMPLE_MS");
    ASSERT_EQ(r.code, 0) << r.err;
    if (const std::string why = perfRefused(db); !why.empty()) GTEST_SKIP() << why;
    {
        SqliteQuery q(db);
        ASSERT_GT(q.scalar("SELECT count(*) FROM native_samples"), 0);
        EXPECT_EQ(q.scalar("SELECT count(*) FROM native_samples WHERE file_id IS NOT NULL"), 0);
        EXPECT_EQ(q.text("SELECT DISTINCT m.value FROM native_samples p JOIN strings m ON m.id = p.module_id"), kSpin);
    }
    const analysis::NativeFrameNaming missing = analysis::nameNativeFrames(db, "/nonexistent/addr2line");
    EXPECT_GT(missing.frames, 0u);
    EXPECT_EQ(missing.named, 0u);
    EXPECT_NE(missing.problem.find("not found: install binutils"), std::string::npos) << missing.problem;
    // Read as "module(0): 0x..." until named; named afterwards, by the real addr2line.
    const analysis::TraceModel before = analysis::importTuneupFile(db);
    ASSERT_FALSE(before.pythonSamples.empty());
    EXPECT_TRUE(std::string(before.str(before.pythonSamples.frame[0])).starts_with(kSpin + "(0): "));
    const analysis::NativeFrameNaming named = analysis::nameNativeFrames(db);
    EXPECT_GE(named.named, 1u) << named.problem; // all but places without debug information (the PLT entry of sin)
    // Named once: a second pass finds only those left without a name.
    EXPECT_EQ(analysis::nameNativeFrames(db).frames, named.frames - named.named);
}

TEST(NativeFrameNames, ARecordingWithoutNativeSamplesIsLeftAlone) {
    TempDir dir("native_frame_names");
    const std::string notes = dir.path() + "/notes.txt";
    std::ofstream(notes) << "not a database\n";
    const analysis::NativeFrameNaming r = analysis::nameNativeFrames(notes);
    EXPECT_EQ(r.frames, 0u);
    EXPECT_TRUE(r.problem.empty());
    EXPECT_EQ(std::filesystem::file_size(notes), 15u);
}

} // namespace
} // namespace tuneup::test
