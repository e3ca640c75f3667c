// tuneup bench's arguments (cli/bench_args.h) and its fix catalogue (cli/bench_fixes.h): --candidate's
// words, --max-time, --fix lists, and which fix answers which finding.

#include "bench_args.h"
#include "bench_fixes.h"

#include <gtest/gtest.h>

namespace tuneup::cli {
namespace {

using Words = std::vector<std::string>;

TEST(SplitCommandLine, WordsAsAShellSplitsThem) {
    std::string error;
    EXPECT_EQ(
        splitCommandLine("python train.py --workers 8", error), (Words { "python", "train.py", "--workers", "8" }));
    EXPECT_EQ(splitCommandLine("  python   'my script.py'  \"a \\\"b\\\" c\" x\\ y ", error),
        (Words { "python", "my script.py", "a \"b\" c", "x y" }));
    EXPECT_EQ(splitCommandLine("echo '' \"\"", error), (Words { "echo", "", "" }));
    EXPECT_EQ(splitCommandLine("a'b'c", error), (Words { "abc" }));
    EXPECT_TRUE(error.empty());
    EXPECT_TRUE(splitCommandLine("", error).empty());
}

TEST(SplitCommandLine, UnclosedQuoteIsAnError) {
    std::string error;
    EXPECT_TRUE(splitCommandLine("python 'train.py", error).empty());
    EXPECT_NE(error.find("unclosed single quote"), std::string::npos) << error;
    error.clear();
    EXPECT_TRUE(splitCommandLine("python \"train.py", error).empty());
    EXPECT_NE(error.find("unclosed double quote"), std::string::npos) << error;
}

TEST(ParseDuration, UnitsAndPlainSeconds) {
    EXPECT_EQ(parseDuration("90s"), 90);
    EXPECT_EQ(parseDuration("10m"), 600);
    EXPECT_EQ(parseDuration("1h30m"), 5400);
    EXPECT_EQ(parseDuration("2.5m"), 150);
    EXPECT_EQ(parseDuration("45"), 45);
    for (const char* bad : { "", "10x", "m", "-5", "0", "1h30", "ten" })
        EXPECT_FALSE(parseDuration(bad)) << bad;
}

TEST(FixList, NamesValuesAndErrors) {
    std::string error;
    const auto fixes = parseFixList("dataloader-workers=4, persistent-workers", error);
    ASSERT_EQ(fixes.size(), 2u) << error;
    EXPECT_EQ(fixes[0].text(), "dataloader-workers=4");
    EXPECT_EQ(fixes[1].text(), "persistent-workers");
    EXPECT_TRUE(parseFixList("turbo", error).empty());
    EXPECT_NE(error.find("unknown fix 'turbo'"), std::string::npos) << error;
    EXPECT_NE(error.find("anomaly-off"), std::string::npos) << error; // the known ones are listed
    EXPECT_TRUE(parseFixList("dataloader-workers", error).empty());
    EXPECT_NE(error.find("needs a number of workers"), std::string::npos) << error;
    EXPECT_TRUE(parseFixList("dataloader-workers=0", error).empty());
    EXPECT_TRUE(parseFixList("anomaly-off=1", error).empty());
    EXPECT_NE(error.find("takes no value"), std::string::npos) << error;
    EXPECT_TRUE(parseFixList("tf32,tf32", error).empty());
    EXPECT_NE(error.find("twice"), std::string::npos) << error;
    EXPECT_TRUE(parseFixList("tf32,", error).empty());
}

TEST(FixCatalogue, EveryFixSaysWhatItChangesAndWhereItApplies) {
    for (const BenchFix& f : benchFixes()) {
        EXPECT_FALSE(f.changes.empty()) << f.name;
        EXPECT_FALSE(f.unused.empty()) << f.name;
        EXPECT_TRUE(f.python || f.libtorch) << f.name;
        EXPECT_EQ(findBenchFix(f.name), &f);
    }
    // LibTorch programs get what the agent's at::Context switches reach.
    EXPECT_TRUE(findBenchFix("cudnn-benchmark")->libtorch);
    EXPECT_TRUE(findBenchFix("tf32")->libtorch);
    EXPECT_TRUE(findBenchFix("anomaly-off")->libtorch);
    EXPECT_FALSE(findBenchFix("set-to-none")->libtorch);
    EXPECT_TRUE(findBenchFix("amp-bf16")->precision);
    EXPECT_EQ(findBenchFix("nope"), nullptr);
}

analysis::Finding finding(const std::string& rule, const std::string& title = "") {
    analysis::Finding f;
    f.ruleId = rule;
    f.title = title;
    return f;
}

TEST(FixForFinding, EachFixableFindingGetsItsFix) {
    analysis::RankSummary rank;
    const auto fixOf = [&](const analysis::Finding& f, bool python = true, int computeMajor = 0) {
        const FindingFix answer = fixForFinding(f, rank, python, 8, computeMajor);
        std::string text;
        for (const FixSpec& s : answer.fixes)
            text += (text.empty() ? "" : ",") + s.text();
        return text.empty() ? "none: " + answer.whyNot : text;
    };
    EXPECT_EQ(fixOf(finding("cudnn-autotuner-off")), "cudnn-benchmark");
    EXPECT_EQ(fixOf(finding("cudnn-autotuner-off"), false), "cudnn-benchmark"); // LibTorch too
    EXPECT_EQ(fixOf(finding("debug-api-enabled", "autograd anomaly detection is on")), "anomaly-off");
    EXPECT_NE(fixOf(finding("debug-api-enabled", "the PyTorch profiler is enabled")).find("none: the profiler"),
        std::string::npos);
    EXPECT_EQ(fixOf(finding("zero-grad-fill")), "set-to-none");
    EXPECT_NE(fixOf(finding("zero-grad-fill"), false).find("a LibTorch program"), std::string::npos);
    EXPECT_EQ(fixOf(finding("dataloader-stall")), "dataloader-workers=8"); // the cores, at most 8
    rank.settings = { { "dataloader.num_workers", "3" } };
    EXPECT_EQ(fixOf(finding("dataloader-stall")), "dataloader-workers=6"); // twice the workers it has
    // The main process busy receiving the batches (dataloader-stall's title says so): workers are no fix.
    EXPECT_NE(fixOf(finding("dataloader-stall",
                        "the training loop waits 6.6 ms per step (31%) for the next batch; the main process is busy "
                        "receiving batches, more workers will not help"))
                  .find("none: the main process is busy receiving the batches, so more workers will not help"),
        std::string::npos);
    EXPECT_EQ(fixOf(finding("pageable-memcpy")), "pin-memory");
    rank.settings.clear();
    EXPECT_NE(
        fixOf(finding("pageable-memcpy")).find("none: the copies do not come from a DataLoader"), std::string::npos);
    EXPECT_EQ(fixOf(finding("amp-unused"), true, 8), "amp-bf16");
    EXPECT_EQ(fixOf(finding("amp-unused"), true, 7), "amp-fp16");
    EXPECT_NE(fixOf(finding("gemm-dims-not-aligned")).find("--candidate"), std::string::npos);
}

TEST(FixForFinding, TheCandidatesFindingAmongTheRaisedOnes) {
    analysis::RankSummary rank;
    const analysis::Finding stall = finding("dataloader-stall"), anomaly = finding("debug-api-enabled", "anomaly");
    const std::vector<const analysis::Finding*> raised = { &stall, &anomaly };
    std::string error;
    EXPECT_EQ(
        findingForFixes(parseFixList("dataloader-workers=2,pin-memory", error), raised, rank, true, 2, 0), &stall);
    EXPECT_EQ(findingForFixes(parseFixList("anomaly-off", error), raised, rank, true, 2, 0), &anomaly);
    EXPECT_EQ(findingForFixes(parseFixList("tf32", error), raised, rank, true, 2, 0), nullptr);
}

} // namespace
} // namespace tuneup::cli
