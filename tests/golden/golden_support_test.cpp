// The golden-file machinery itself: the report's golden form and the diff a failure shows.

#include "golden_json.h"
#include "unified_diff.h"

#include <gtest/gtest.h>
#include <stdexcept>

namespace tuneup::golden {
namespace {

TEST(UnifiedDiff, EqualTextsHaveNoDiff) {
    EXPECT_EQ(unifiedDiff("a\nb\n", "a\nb\n", "x", "y"), "");
}

TEST(UnifiedDiff, OneChangedLineWithItsContext) {
    const std::string before = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    const std::string after = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
    EXPECT_EQ(unifiedDiff(before, after, "kept", "now"),
        "--- kept\n+++ now\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(UnifiedDiff, DistantChangesMakeTwoHunksNearOnesOne) {
    std::string before, after;
    for (int i = 1; i <= 20; ++i) {
        before += std::to_string(i) + "\n";
        after += (i == 2 || i == 18 ? "x" : std::to_string(i)) + "\n";
    }
    EXPECT_EQ(unifiedDiff(before, after, "a", "b"),
        "--- a\n+++ b\n@@ -1,5 +1,5 @@\n 1\n-2\n+x\n 3\n 4\n 5\n@@ -15,6 +15,6 @@\n 15\n 16\n 17\n-18\n+x\n 19\n 20\n");
    after = before;
    after.replace(after.find("5\n"), 2, "y\n"); // 5 and 9: six lines apart, one hunk
    after.replace(after.find("9\n"), 2, "z\n");
    EXPECT_EQ(unifiedDiff(before, after, "a", "b"),
        "--- a\n+++ b\n@@ -2,11 +2,11 @@\n 2\n 3\n 4\n-5\n+y\n 6\n 7\n 8\n-9\n+z\n 10\n 11\n 12\n");
}

TEST(UnifiedDiff, InsertionsAndRemovalsCountTheirSide) {
    EXPECT_EQ(unifiedDiff("a\nb\n", "a\nnew\nb\n", "x", "y"), "--- x\n+++ y\n@@ -1,2 +1,3 @@\n a\n+new\n b\n");
    EXPECT_EQ(unifiedDiff("a\ngone\nb\n", "a\nb\n", "x", "y"), "--- x\n+++ y\n@@ -1,3 +1,2 @@\n a\n-gone\n b\n");
    EXPECT_EQ(unifiedDiff("", "a\n", "x", "y"), "--- x\n+++ y\n@@ -0,0 +1,1 @@\n+a\n");
}

TEST(UnifiedDiff, LongDiffsAreCutWithANote) {
    std::string before, after;
    for (int i = 0; i < 100; ++i) {
        before += "old " + std::to_string(i) + "\n";
        after += "new " + std::to_string(i) + "\n";
    }
    const std::string diff = unifiedDiff(before, after, "a", "b", 10);
    EXPECT_EQ(std::count(diff.begin(), diff.end(), '\n'), 11) << diff;
    EXPECT_NE(diff.find("\n... (193 more lines of diff)\n"), std::string::npos) << diff;
}

TEST(GoldenForm, DropsMembersReplacesPathsAndRoundsRatios) {
    Normalisation n;
    n.dropMembers = { "tool.version" };
    n.replacements = { { "/home/ana/traces/", "<traces>/" } };
    const std::string json = R"({"tool": {"name": "tuneup", "version": "0.1.0"}, "version": 1,
        "inputs": [{"path": "/home/ana/traces/a.json", "share": 0.60873870413984891, "events": 12345678901234}]})";
    EXPECT_EQ(goldenForm(json, n, 200),
        "{\"tool\": {\"name\": \"tuneup\"}, \"version\": 1, \"inputs\": [{\"path\": \"<traces>/a.json\", \"share\": "
        "0.608739, \"events\": 12345678901234}]}\n");
}

TEST(GoldenForm, LongContainersBreakAndShortElementsPack) {
    const std::string json = R"({"facts": {"first fact": "a long text that does not fit", "second": "b"},
        "events": [{"table": "kernels", "row": 1}, {"table": "kernels", "row": 2}, {"table": "kernels", "row": 3}],
        "empty": [], "nested": [[1, 2], [3, 4]]})";
    EXPECT_EQ(goldenForm(json, {}, 60),
        "{\n"
        "  \"facts\": {\n"
        "    \"first fact\": \"a long text that does not fit\",\n"
        "    \"second\": \"b\"\n"
        "  },\n"
        "  \"events\": [\n"
        "    {\"table\": \"kernels\", \"row\": 1},\n"
        "    {\"table\": \"kernels\", \"row\": 2},\n"
        "    {\"table\": \"kernels\", \"row\": 3}\n"
        "  ],\n"
        "  \"empty\": [],\n"
        "  \"nested\": [[1, 2], [3, 4]]\n"
        "}\n");
    EXPECT_EQ(goldenForm(R"([10000, 20000, 30000, 40000, 50000, 60000])", {}, 20),
        "[\n  10000, 20000,\n  30000, 40000,\n  50000, 60000\n]\n");
}

TEST(GoldenForm, RefusesWhatIsNotJson) {
    EXPECT_THROW(goldenForm("{\"a\": ", {}), std::runtime_error);
}

} // namespace
} // namespace tuneup::golden
