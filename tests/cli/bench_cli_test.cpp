// `tuneup bench` run as a user runs it, on a small Python program whose steps are sleeping "step" ranges
// (tests/cli/bench_steps.py; no torch, so each run takes a fraction of a second): usage errors, a
// baseline that fails, a candidate that crashes or changes the number of steps, an A/A bench, a real
// difference, the JSON's fields, a fix that cannot apply, the runs' folder, --micro without a GPU.
// The torch samples are benched in tests/samples/bench_samples_test.cpp.

#include "run_program.h"
#include "temp_dir.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace fs = std::filesystem;

namespace tuneup::test {
namespace {

class BenchCliTest : public ::testing::Test {
protected:
    TempDir m_dir { "bench_cli_test" };

    std::string path(const std::string& name) const { return m_dir.path() + "/" + name; }

    // `python3 bench_steps.py ARGS` as a command line (for --candidate) and as words (after --).
    static std::string stepsLine(const std::string& args) {
        return std::string(TUNEUP_PYTHON) + " " + TUNEUP_BENCH_STEPS + " " + args;
    }
    static std::vector<std::string> steps(const std::vector<std::string>& args) {
        std::vector<std::string> words { TUNEUP_PYTHON, TUNEUP_BENCH_STEPS };
        words.insert(words.end(), args.begin(), args.end());
        return words;
    }

    ProgramResult bench(std::vector<std::string> options, const std::vector<std::string>& command) {
        std::vector<std::string> args { "bench" };
        args.insert(args.end(), options.begin(), options.end());
        if (!command.empty()) args.push_back("--");
        args.insert(args.end(), command.begin(), command.end());
        // The runs' temporary folder goes in the test's own, which the tests check.
        const char* tmpdir = getenv("TMPDIR");
        const std::string saved = tmpdir ? tmpdir : "";
        setenv("TMPDIR", m_dir.path().c_str(), 1);
        ProgramResult result = runProgram(TUNEUP_BINARY, args);
        if (tmpdir)
            setenv("TMPDIR", saved.c_str(), 1);
        else
            unsetenv("TMPDIR");
        return result;
    }

    static rapidjson::Document json(const std::string& text) {
        rapidjson::Document doc;
        doc.Parse(text.c_str());
        EXPECT_FALSE(doc.HasParseError()) << text;
        return doc;
    }
};

TEST_F(BenchCliTest, UsageErrorsSayWhatIsWrongAndRunNothing) {
    const auto expectUsage
        = [&](std::vector<std::string> options, const std::vector<std::string>& command, const std::string& message) {
              const ProgramResult r = bench(options, command);
              EXPECT_EQ(r.code, 2) << r.err;
              EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
          };
    const auto program = steps({ "--steps", "3" });
    expectUsage({}, {}, "no command to bench; give it after --");
    expectUsage({ "--fix", "turbo" }, program, "unknown fix 'turbo'");
    expectUsage({ "--fix", "dataloader-workers" }, program, "needs a number of workers");
    expectUsage({ "--max-time", "soon" }, program, "--max-time 'soon' is not a duration");
    expectUsage({ "--candidate", "python 'x" }, program, "unclosed single quote");
    expectUsage({ "--format", "xml" }, program, "unknown --format 'xml'");
    expectUsage({ "--steps", "1" }, program, "measure at least 2 steps");
    expectUsage({ "--micro", "run.db" }, program, "give no command with it");
    // Nothing ran: no run's folder was left behind.
    EXPECT_TRUE(fs::is_empty(m_dir.path()));
}

TEST_F(BenchCliTest, CommandNotFoundIsAUsageError) {
    const ProgramResult r = bench({ "--runs", "1" }, { "/nonexistent/train" });
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("could not start"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("command not found"), std::string::npos) << r.err;
}

TEST_F(BenchCliTest, FailingBaselineIsReportedWithItsLastLines) {
    const ProgramResult r = bench({ "--runs", "2" }, steps({ "--steps", "3", "--ms", "1", "--exit", "3" }));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find("the baseline"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("exited with code 3"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("bench_steps: 3 steps of 1 ms"), std::string::npos) << r.err; // the log's tail
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(BenchCliTest, AABenchIsSameOrInconclusiveNeverFasterOrSlower) {
    // The candidate is the baseline itself: 3 runs a side, interleaved (ABBAAB).
    const std::string line = stepsLine("--steps 14 --ms 15");
    const ProgramResult r = bench({ "--candidate", line, "--runs", "3", "--steps", "10", "--warmup", "2", "--format",
                                      "json", "--max-time", "5m" },
        steps({ "--steps", "14", "--ms", "15" }));
    ASSERT_EQ(r.code, 0) << r.err;
    const rapidjson::Document doc = json(r.out);
    ASSERT_EQ(doc["candidates"].Size(), 1u);
    const auto& c = doc["candidates"][0];
    const std::string verdict = c["verdict"].GetString();
    EXPECT_TRUE(verdict == "same" || verdict == "inconclusive") << verdict << "\n" << r.out;
    EXPECT_STREQ(c["kind"].GetString(), "command");
    // Interleaved: the baseline ran 1st, 4th and 5th, the candidate 2nd, 3rd and 6th.
    ASSERT_EQ(c["runs"].Size(), 6u);
    std::string order;
    for (const auto& run : c["runs"].GetArray()) {
        order += run["arm"].GetString()[0];
        EXPECT_TRUE(run["used"].GetBool()) << run["note"].GetString();
        EXPECT_EQ(run["steps"].GetUint(), 14u); // a Python program without torch runs to its end
        EXPECT_EQ(run["measured"].GetUint(), 10u);
    }
    EXPECT_EQ(order, "bccbbc");
    EXPECT_EQ(c["baseline_step_ms"]["n"].GetUint(), 30u);
    EXPECT_NEAR(c["baseline_step_ms"]["median"].GetDouble(), 15, 10);
    // The runs' temporary folder is gone.
    EXPECT_TRUE(fs::is_empty(m_dir.path()));
}

TEST_F(BenchCliTest, RealDifferenceIsFasterWithItsIntervalAndTheJsonFields) {
    const ProgramResult r = bench({ "--candidate", stepsLine("--steps 14 --ms 10"), "--runs", "3", "--steps", "10",
                                      "--warmup", "2", "--format", "json", "-o", path("bench.json") },
        steps({ "--steps", "14", "--ms", "40" }));
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.err.find("bench written to " + path("bench.json")), std::string::npos) << r.err;
    const rapidjson::Document doc = json(readFile(path("bench.json")));
    EXPECT_EQ(doc["schema_version"].GetInt(), 1);
    ASSERT_TRUE(doc["command"].IsArray());
    EXPECT_STREQ(doc["command"][0].GetString(), TUNEUP_PYTHON);
    EXPECT_TRUE(doc["environment"].HasMember("host"));
    EXPECT_STREQ(doc["environment"]["program"].GetString(), "python (bootstrap)");
    const auto& c = doc["candidates"][0];
    for (const char* key :
        { "name", "kind", "verdict", "speedup", "speedup_ci", "p_value", "baseline_step_ms", "candidate_step_ms",
            "runs", "warmup_steps", "one_time_cost_ms", "break_even_steps", "finding", "loss_delta" })
        EXPECT_TRUE(c.HasMember(key)) << key;
    for (const char* key : { "median", "p10", "p90", "n" })
        EXPECT_TRUE(c["candidate_step_ms"].HasMember(key)) << key;
    EXPECT_STREQ(c["verdict"].GetString(), "faster") << readFile(path("bench.json"));
    // Sleeps of 40 ms against 10 ms: about 3.6x once Python's own time per step is added.
    EXPECT_GT(c["speedup"].GetDouble(), 2.5);
    EXPECT_LT(c["speedup"].GetDouble(), 4.5);
    EXPECT_GT(c["speedup_ci"][0].GetDouble(), 1.0);
    EXPECT_LT(c["p_value"].GetDouble(), 0.05);
    EXPECT_TRUE(c["finding"].IsNull());
    EXPECT_TRUE(c["loss_delta"].IsNull());
}

TEST_F(BenchCliTest, CrashingCandidateFailsWithItsErrorAndExitsOne) {
    const ProgramResult r
        = bench({ "--candidate", stepsLine("--steps 14 --ms 5 --fail-after 3"), "--runs", "2", "--steps", "8" },
            steps({ "--steps", "14", "--ms", "5" }));
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.out.find("failed"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("exited with code 1"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("failing after 3 steps, as asked"), std::string::npos) << r.out;
}

TEST_F(BenchCliTest, CandidateThatChangesTheStepCountIsNotAveragedIn) {
    const ProgramResult r = bench({ "--candidate", stepsLine("--steps 9 --ms 5"), "--runs", "2", "--steps", "6",
                                      "--warmup", "1", "--format", "json" },
        steps({ "--steps", "14", "--ms", "5" }));
    EXPECT_EQ(r.code, 1) << r.err;
    const rapidjson::Document doc = json(r.out);
    const auto& c = doc["candidates"][0];
    EXPECT_STREQ(c["verdict"].GetString(), "failed");
    EXPECT_NE(std::string(c["why"].GetString()).find("made 9 steps where the baseline made 14"), std::string::npos)
        << c["why"].GetString();
    EXPECT_EQ(c["candidate_step_ms"]["n"].GetUint(), 0u);
}

TEST_F(BenchCliTest, FixThatCannotApplyIsSaidAndNotMeasured) {
    // A Python program without torch: no zero_grad to change.
    const ProgramResult r = bench(
        { "--fix", "set-to-none", "--runs", "2", "--runs-dir", path("runs") }, steps({ "--steps", "10", "--ms", "5" }));
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find("not-applied"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("set-to-none: the program never called Optimizer.zero_grad"), std::string::npos) << r.out;
    // --runs-dir keeps the runs: the baseline's two and the candidate's one (not run again).
    EXPECT_TRUE(fs::exists(path("runs/baseline.run1.db")));
    EXPECT_TRUE(fs::exists(path("runs/baseline.run2.db")));
    EXPECT_TRUE(fs::exists(path("runs/fix1.run1.log")));
    EXPECT_FALSE(fs::exists(path("runs/fix1.run2.db")));
    EXPECT_NE(r.err.find("the runs' recordings and logs are in " + path("runs")), std::string::npos) << r.err;
}

TEST_F(BenchCliTest, MicroWithoutAGpuShowsThePlanAndExitsTwo) {
    if (fs::exists("/dev/nvidia0")) GTEST_SKIP() << "a GPU is here";
    const ProgramResult recorded = runProgram(TUNEUP_BINARY,
        { "record", "-o", path("run.db"), "--", TUNEUP_PYTHON, TUNEUP_BENCH_STEPS, "--steps", "3", "--ms", "1" });
    ASSERT_EQ(recorded.code, 0) << recorded.err;
    const ProgramResult r = runProgram(TUNEUP_BINARY, { "bench", "--micro", path("run.db") });
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.out.find("GEMMs (0 shapes)"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("no NVIDIA GPU on this machine"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nothing was timed"), std::string::npos) << r.err;
    const ProgramResult missing = runProgram(TUNEUP_BINARY, { "bench", "--micro", path("none.db") });
    EXPECT_EQ(missing.code, 2);
    EXPECT_NE(missing.err.find("none.db"), std::string::npos) << missing.err;
}

} // namespace
} // namespace tuneup::test
