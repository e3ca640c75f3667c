// `tuneup bench` on the Python CPU samples (issue 14's "done when") and a LibTorch C++ sample:
// automatic bench finds each sample's finding, applies its fix in the process and measures it with the
// right direction and an interval that excludes 1.0 where the effect is real; an A/A bench never says
// faster or slower; `tuneup advise --bench` shows the measured gain beside the estimate.
//
// The effects are made large (a DataLoader stall of several times the step's compute, anomaly
// detection on a deep narrow model) and the assertions are the honest ones (direction and interval, not
// a verdict that also has to clear the machine's run-to-run noise): the machine is shared and loaded.

#include "run_program.h"
#include "temp_dir.h"

#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>
#include <rapidjson/document.h>

namespace fs = std::filesystem;

namespace tuneup::test {
namespace {

class BenchSamplesTest : public ::testing::Test {
protected:
    TempDir m_dir { "bench_samples_test" };

    void SetUp() override {
        // One thread per torch process: less contention with the machine's other work, steadier steps.
        setenv("OMP_NUM_THREADS", "1", 1);
    }

    std::string path(const std::string& name) const { return m_dir.path() + "/" + name; }

    static std::vector<std::string> sample(const std::string& script, const std::vector<std::string>& args) {
        std::vector<std::string> words { TUNEUP_PYTHON, std::string(TUNEUP_SAMPLES_DIR) + "/python/" + script };
        words.insert(words.end(), args.begin(), args.end());
        return words;
    }

    // Runs tuneup bench with --format json into bench.json and its runs in runs/; returns the document.
    rapidjson::Document bench(
        std::vector<std::string> options, const std::vector<std::string>& command, int expectedCode = 0) {
        std::vector<std::string> args { "bench", "--format", "json", "-o", path("bench.json"), "--runs-dir",
            path("runs"), "--max-time", "3m" };
        args.insert(args.end(), options.begin(), options.end());
        args.push_back("--");
        args.insert(args.end(), command.begin(), command.end());
        const ProgramResult r = runProgram(TUNEUP_BINARY, args);
        EXPECT_EQ(r.code, expectedCode) << r.err;
        rapidjson::Document doc;
        doc.Parse(readFile(path("bench.json")).c_str());
        EXPECT_FALSE(doc.HasParseError()) << r.err;
        return doc;
    }

    static const rapidjson::Value* candidate(const rapidjson::Document& doc, const std::string& prefix) {
        if (!doc.IsObject() || !doc.HasMember("candidates")) return nullptr;
        for (const auto& c : doc["candidates"].GetArray())
            if (std::string(c["name"].GetString()).starts_with(prefix)) return &c;
        return nullptr;
    }

    static std::string applied(const rapidjson::Value& c, const std::string& fix) {
        for (const auto& a : c["applied"].GetArray())
            if (a["fix"].GetString() == fix)
                return std::string(a["status"].GetString()) + ": " + a["detail"].GetString();
        return "";
    }

    // The speed-up is measured in the right direction and its interval excludes 1.0.
    static void expectFaster(const rapidjson::Value& c, double atLeast) {
        ASSERT_TRUE(c["speedup"].IsNumber()) << c["why"].GetString();
        EXPECT_GT(c["speedup"].GetDouble(), atLeast);
        EXPECT_GT(c["speedup_ci"][0].GetDouble(), 1.0);
        const std::string verdict = c["verdict"].GetString();
        EXPECT_TRUE(verdict == "faster" || verdict == "inconclusive") << verdict; // inconclusive: noise > effect's CI
    }
};

TEST_F(BenchSamplesTest, DataLoaderStallIsFoundAndItsFixMeasuredFaster) {
    const rapidjson::Document doc = bench({ "--runs", "3", "--steps", "8", "--warmup", "2" },
        sample("dataloader_workers.py", { "--steps", "60", "--load-ms", "10" }));
    EXPECT_STREQ(doc["mode"].GetString(), "automatic");
    const rapidjson::Value* c = candidate(doc, "dataloader-workers=");
    ASSERT_NE(c, nullptr);
    EXPECT_STREQ((*c)["finding"].GetString(), "dataloader-stall");
    EXPECT_EQ(applied(*c, "dataloader-workers").rfind("applied: DataLoader(num_workers=", 0), 0u)
        << applied(*c, "dataloader-workers");
    expectFaster(*c, 1.5);
    ASSERT_TRUE((*c)["estimated_speedup"].IsNumber());
    EXPECT_GT((*c)["estimated_speedup"].GetDouble(), 1.5);
    for (const auto& run : (*c)["runs"].GetArray())
        EXPECT_STREQ(run["note"].GetString(), "stopped after 11 steps"); // 2 warm-up + 8 + the cut one

    // advise --bench: the measured gain beside the estimate.
    const ProgramResult advice
        = runProgram(TUNEUP_BINARY, { "advise", path("runs/baseline.run1.db"), "--bench", path("bench.json") });
    EXPECT_EQ(advice.code, 0) << advice.err;
    EXPECT_NE(advice.out.find("measured: "), std::string::npos) << advice.out;
    EXPECT_NE(advice.out.find("with dataloader-workers="), std::string::npos) << advice.out;
    EXPECT_NE(advice.out.find("measured by tuneup bench; estimated "), std::string::npos) << advice.out;
}

TEST_F(BenchSamplesTest, AnomalyDetectionIsFoundAndItsFixMeasuredFaster) {
    const rapidjson::Document doc = bench({ "--runs", "4", "--steps", "6", "--warmup", "2" },
        sample("anomaly.py", { "--steps", "200", "--batch", "4", "--hidden", "30" }));
    const rapidjson::Value* c = candidate(doc, "anomaly-off");
    ASSERT_NE(c, nullptr);
    EXPECT_STREQ((*c)["finding"].GetString(), "debug-api-enabled");
    EXPECT_EQ(applied(*c, "anomaly-off"), "applied: torch.set_anomaly_enabled(True) left anomaly detection off");
    expectFaster(*c, 1.3);
}

TEST_F(BenchSamplesTest, ZeroGradFillIsFoundAndItsFixMeasured) {
    // On the CPU the fills are cheap and set_to_none makes backward allocate each gradient afresh: the
    // direction is the measurement's to say, not the test's.
    const rapidjson::Document doc = bench({ "--runs", "2", "--steps", "6", "--warmup", "2" },
        sample("zero_grad_fill.py", { "--steps", "200", "--batch", "1", "--layers", "24" }));
    const rapidjson::Value* c = candidate(doc, "set-to-none");
    ASSERT_NE(c, nullptr);
    EXPECT_STREQ((*c)["finding"].GetString(), "zero-grad-fill");
    EXPECT_EQ(applied(*c, "set-to-none"), "applied: Optimizer.zero_grad(set_to_none=True)");
    EXPECT_TRUE((*c)["speedup"].IsNumber());
    EXPECT_TRUE((*c)["estimated_speedup"].IsNumber());
    const std::string verdict = (*c)["verdict"].GetString();
    EXPECT_TRUE(verdict != "failed" && verdict != "not-applied") << verdict;
}

TEST_F(BenchSamplesTest, AABenchOfASampleIsSameOrInconclusive) {
    const std::vector<std::string> command = sample("anomaly.py", { "--fixed", "--steps", "200", "--hidden", "10" });
    std::string line;
    for (const std::string& w : command)
        line += (line.empty() ? "" : " ") + w;
    const rapidjson::Document doc
        = bench({ "--candidate", line, "--runs", "3", "--steps", "8", "--warmup", "2" }, command);
    ASSERT_EQ(doc["candidates"].Size(), 1u);
    const std::string verdict = doc["candidates"][0]["verdict"].GetString();
    EXPECT_TRUE(verdict == "same" || verdict == "inconclusive") << verdict;
}

TEST_F(BenchSamplesTest, InProcessFixesSayWhatTheyChanged) {
    // One run a side: what each fix did, and the loss delta of a precision what-if.
    const rapidjson::Document doc
        = bench({ "--fix", "fused-optimizer", "--fix", "amp-bf16", "--fix", "channels-last", "--fix",
                    "dataloader-workers=2", "--runs", "1", "--steps", "3", "--warmup", "1" },
            sample("anomaly.py", { "--fixed", "--steps", "50", "--batch", "16" }));
    EXPECT_STREQ(doc["mode"].GetString(), "fixes");
    const rapidjson::Value* fused = candidate(doc, "fused-optimizer");
    ASSERT_NE(fused, nullptr);
    EXPECT_EQ(applied(*fused, "fused-optimizer"), "applied: SGD(foreach=True)"); // fused needs the GPU
    const rapidjson::Value* amp = candidate(doc, "amp-bf16");
    ASSERT_NE(amp, nullptr);
    EXPECT_EQ(applied(*amp, "amp-bf16").rfind("applied: autocast(cpu, bfloat16)", 0), 0u) << applied(*amp, "amp-bf16");
    ASSERT_TRUE((*amp)["loss_delta"].IsNumber());
    EXPECT_LT(std::abs((*amp)["loss_delta"].GetDouble()), 0.1); // bfloat16 changes the loss a little
    const rapidjson::Value* channels = candidate(doc, "channels-last");
    ASSERT_NE(channels, nullptr);
    EXPECT_STREQ((*channels)["verdict"].GetString(), "not-applied"); // an MLP has no convolution
    EXPECT_NE(std::string((*channels)["why"].GetString()).find("no 4-D tensor"), std::string::npos);
    const rapidjson::Value* workers = candidate(doc, "dataloader-workers=2");
    ASSERT_NE(workers, nullptr);
    EXPECT_STREQ((*workers)["verdict"].GetString(), "not-applied");
    EXPECT_NE(std::string((*workers)["why"].GetString()).find("the program made no DataLoader"), std::string::npos);
}

TEST_F(BenchSamplesTest, LibTorchProgramGetsTheAgentsSwitchesOnly) {
    const std::string program = std::string(TUNEUP_SAMPLES_BIN) + "/anomaly";
    ASSERT_TRUE(fs::exists(program)) << program;
    const rapidjson::Document doc
        = bench({ "--fix", "anomaly-off", "--fix", "set-to-none", "--runs", "3", "--steps", "6", "--warmup", "2" },
            { program, "--steps", "200" });
    EXPECT_STREQ(doc["environment"]["program"].GetString(), "native (LibTorch or other)");
    const rapidjson::Value* anomaly = candidate(doc, "anomaly-off");
    ASSERT_NE(anomaly, nullptr);
    EXPECT_EQ(applied(*anomaly, "anomaly-off"), "applied: torch::autograd::AnomalyMode turned off");
    EXPECT_STREQ((*anomaly)["finding"].GetString(), "debug-api-enabled");
    expectFaster(*anomaly, 1.5);
    for (const auto& run : (*anomaly)["runs"].GetArray())
        EXPECT_STREQ(run["note"].GetString(), "stopped after 9 steps"); // by the agent, on its step ranges
    const rapidjson::Value* zero = candidate(doc, "set-to-none");
    ASSERT_NE(zero, nullptr);
    EXPECT_STREQ((*zero)["verdict"].GetString(), "not-applied");
    EXPECT_NE(std::string((*zero)["why"].GetString()).find("not a Python program"), std::string::npos);
    EXPECT_FALSE(fs::exists(path("runs/fix2.run1.db"))); // never run
}

} // namespace
} // namespace tuneup::test
