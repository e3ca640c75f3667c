// The bench JSON (analyzer/lib/bench/bench_json.cpp): written and read back, and bad files refused with
// what, where and what to do.

#include "bench/bench_result.h"
#include "temp_dir.h"
#include "units.h"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace tuneup::analysis {
namespace {

BenchResult sample() {
    BenchResult r;
    r.toolVersion = "0.1.0";
    r.command = { "python3", "train.py", "--load-ms", "10" };
    r.environment = { { "host", "vm" }, { "cpus", "2" } };
    r.mode = "automatic";
    r.steps = 20;
    r.warmup = 5;
    r.runs = 4;
    r.maxTimeSeconds = 600;
    BenchCandidate c;
    c.name = "dataloader-workers=4";
    c.kind = "fix";
    c.fixes = { "dataloader-workers=4" };
    c.verdict = BenchVerdict::Faster;
    c.speedup = 3.1;
    c.speedupCi = std::make_pair(2.9, 3.4);
    c.pValue = 1e-12;
    c.threshold = 0.05;
    c.noise = 0.04;
    c.baselineStepMs = { 104, 103, 100, 110, 80 };
    c.candidateStepMs = { 33.5, 33, 32, 36, 80 };
    c.runs.push_back({ "baseline", 1, 0, 26, 20, 104, 3.2, true, "" });
    c.runs.push_back({ "candidate", 2, 1, 0, 0, 0, 1.1, false, "exited with code 1" });
    c.warmupSteps = 1;
    c.oneTimeCostMs = 120;
    c.breakEvenSteps = 1.7;
    c.finding = "dataloader-stall";
    c.estimatedSpeedup = 1.72;
    c.applied.push_back({ "dataloader-workers", "applied", "DataLoader(num_workers=4)" });
    r.candidates.push_back(c);
    BenchCandidate a;
    a.name = "python3 train.py --amp";
    a.kind = "command";
    a.command = { "python3", "train.py", "--amp" };
    a.verdict = BenchVerdict::Inconclusive;
    a.why = "the interval straddles the threshold";
    a.lossDelta = -0.002;
    r.candidates.push_back(a);
    r.notBenched.push_back({ "gemm-dims-not-aligned", "needs a code change" });
    return r;
}

std::string write(const BenchResult& r) {
    std::ostringstream out;
    writeBenchJson(out, r);
    return out.str();
}

TEST(BenchJson, WrittenAndReadBack) {
    test::TempDir dir("bench_json_test");
    const std::string path = dir.path() + "/bench.json";
    std::ofstream(path) << write(sample());
    const BenchResult back = readBenchJson(path);
    EXPECT_EQ(back.schemaVersion, kBenchSchemaVersion);
    EXPECT_EQ(back.command, sample().command);
    EXPECT_EQ(back.mode, "automatic");
    ASSERT_EQ(back.candidates.size(), 2u);
    const BenchCandidate& c = back.candidates[0];
    EXPECT_EQ(c.name, "dataloader-workers=4");
    EXPECT_EQ(c.verdict, BenchVerdict::Faster);
    EXPECT_DOUBLE_EQ(*c.speedup, 3.1);
    EXPECT_DOUBLE_EQ(c.speedupCi->second, 3.4);
    EXPECT_DOUBLE_EQ(*c.pValue, 1e-12);
    EXPECT_DOUBLE_EQ(c.baselineStepMs.meanMs, 104);
    EXPECT_DOUBLE_EQ(c.baselineStepMs.medianMs, 103);
    EXPECT_EQ(c.candidateStepMs.n, 80u);
    EXPECT_EQ(c.warmupSteps, 1u);
    EXPECT_DOUBLE_EQ(*c.breakEvenSteps, 1.7);
    EXPECT_EQ(*c.finding, "dataloader-stall");
    EXPECT_FALSE(c.lossDelta);
    const BenchCandidate& a = back.candidates[1];
    EXPECT_EQ(a.kind, "command");
    EXPECT_EQ(a.command.size(), 3u);
    EXPECT_FALSE(a.speedup);
    EXPECT_FALSE(a.finding);
    EXPECT_DOUBLE_EQ(*a.lossDelta, -0.002);
    EXPECT_EQ(back.forFinding("dataloader-stall"), &back.candidates[0]);
    EXPECT_EQ(back.forFinding("zero-grad-fill"), nullptr);
}

TEST(BenchJson, UnmeasuredNumbersAreNullNotZero) {
    const std::string text = write(sample());
    EXPECT_NE(text.find("\"speedup\": null"), std::string::npos);
    EXPECT_NE(text.find("\"finding\": null"), std::string::npos);
    EXPECT_NE(text.find("\"schema_version\": 1"), std::string::npos);
}

void expectRefused(const std::string& content, const std::string& expected) {
    test::TempDir dir("bench_json_test");
    const std::string path = dir.path() + "/bad.json";
    std::ofstream(path) << content;
    try {
        readBenchJson(path);
        FAIL() << "accepted: " << content;
    } catch (const BenchFileError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find(path), std::string::npos) << message;
        EXPECT_NE(message.find(expected), std::string::npos) << message;
    }
}

TEST(BenchJson, BadFilesSayWhatAndWhere) {
    expectRefused("{\"schema_version\": 1, \"candidates\": [", "not valid JSON at byte");
    expectRefused("[1, 2]", "not a tuneup bench file");
    expectRefused("{\"schema_version\": 1}", "not a tuneup bench file");
    expectRefused("{\"schema_version\": 9, \"candidates\": []}", "a bench file of version 9");
    expectRefused("{\"schema_version\": 1, \"candidates\": [{\"name\": \"x\", \"kind\": \"fix\"}]}",
        "candidates[0].verdict: missing");
    expectRefused("{\"schema_version\": 1, \"candidates\": [{\"name\": \"x\", \"kind\": \"fix\", \"verdict\": "
                  "\"great\"}]}",
        "unknown verdict 'great'");
    std::string text = write(sample());
    text.replace(text.find("\"speedup\": 3.1"), 14, "\"speedup\": \"3x\"");
    expectRefused(text, "candidates[0].speedup: not a number");
    EXPECT_THROW(readBenchJson("/nonexistent/bench.json"), BenchFileError);
}

TEST(BenchTable, TextAndMarkdownShowVerdictsNotesAndWhatWasNotBenched) {
    std::ostringstream text, markdown;
    writeBenchText(text, sample(), false);
    writeBenchMarkdown(markdown, sample());
    const std::string t = text.str();
    EXPECT_NE(t.find("tuneup bench: python3 train.py --load-ms 10"), std::string::npos) << t;
    EXPECT_NE(t.find("dataloader-workers=4    faster"), std::string::npos) << t;
    EXPECT_NE(t.find("3.10x"), std::string::npos) << t;
    EXPECT_NE(t.find("2.90x-3.40x"), std::string::npos) << t;
    EXPECT_NE(t.find(formatDuration(104'000'000) + " -> " + formatDuration(33'500'000)), std::string::npos) << t;
    EXPECT_NE(t.find("1.72x"), std::string::npos) << t;
    EXPECT_NE(
        t.find("one-time cost " + formatDuration(120'000'000) + " beyond the baseline's, paid back after 2 steps"),
        std::string::npos)
        << t;
    EXPECT_NE(t.find("candidate run 2 not used: exited with code 1"), std::string::npos) << t;
    EXPECT_NE(t.find("gemm-dims-not-aligned: needs a code change"), std::string::npos) << t;
    EXPECT_NE(t.find("loss -0.002"), std::string::npos) << t;
    EXPECT_EQ(t.find("\033["), std::string::npos);
    const std::string m = markdown.str();
    EXPECT_NE(m.find("| `dataloader-workers=4` | **faster** | 3.10x | 2.90x-3.40x |"), std::string::npos) << m;
}

} // namespace
} // namespace tuneup::analysis
