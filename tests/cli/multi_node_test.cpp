// A job larger than one machine, on one machine: each "node" (a folder of rank traces) is advised where it
// is into a summary (`tuneup advise node/ --summary-out nodeN.json`), and the summaries merge into the
// job's advice (`tuneup advise node*.json`) — the same findings as advising every rank at once.

#include "run_program.h"
#include "shared_traces.h"
#include "temp_dir.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace fs = std::filesystem;
using tuneup::test::runProgram;

namespace {

const fs::path kDlrm = fs::path(TUNEUP_SHARED_TRACES) / "param/et_replay/tests/inputs/dlrm_kineto";

#define EXPECT_CONTAINS(haystack, needle) EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

// The findings of a JSON report: everything from "findings" on (the inputs' paths differ).
std::string findings(const std::string& json) {
    const size_t at = json.find("\"findings\"");
    return at == std::string::npos ? json : json.substr(at);
}

} // namespace

TEST(MultiNode, SummariesOfTwoNodesGiveTheAdviceOfTheWholeJob) {
    TUNEUP_REQUIRE_SHARED_TRACES(kDlrm);
    const tuneup::test::TempDir dir("multi_node");
    std::vector<std::string> ranks;
    for (const auto& entry : fs::directory_iterator(kDlrm))
        if (entry.path().extension() == ".json") ranks.push_back(entry.path().string());
    std::sort(ranks.begin(), ranks.end());
    ASSERT_EQ(ranks.size(), 8u);
    for (size_t i = 0; i < ranks.size(); ++i) {
        const fs::path node = fs::path(dir.path()) / ("node" + std::to_string(i / 4));
        fs::create_directories(node);
        fs::copy_file(ranks[i], node / fs::path(ranks[i]).filename());
    }

    for (const char* node : { "node0", "node1" }) {
        const std::string summary = dir.path() + "/" + node + ".json";
        const auto r = runProgram(TUNEUP_BINARY, { "advise", dir.path() + "/" + node, "--summary-out", summary });
        ASSERT_EQ(r.code, 0) << r.err;
        EXPECT_CONTAINS(r.err, "summary of 4 ranks written to " + summary);
        EXPECT_TRUE(fs::exists(summary));
    }
    const auto merged = runProgram(
        TUNEUP_BINARY, { "advise", dir.path() + "/node0.json", dir.path() + "/node1.json", "--format", "json" });
    ASSERT_EQ(merged.code, 0) << merged.err;
    std::vector<std::string> all = { "advise" };
    all.insert(all.end(), ranks.begin(), ranks.end());
    all.insert(all.end(), { "--format", "json" });
    const auto whole = runProgram(TUNEUP_BINARY, all);
    ASSERT_EQ(whole.code, 0) << whole.err;
    EXPECT_EQ(findings(merged.out), findings(whole.out));
    EXPECT_CONTAINS(merged.out, "rank-straggler");

    // A summary holds no events: the commands that need them say so.
    const auto import = runProgram(TUNEUP_BINARY, { "import", dir.path() + "/node0.json", "-o", dir.path() + "/x.db" });
    EXPECT_EQ(import.code, 1);
    EXPECT_CONTAINS(import.err, "a job summary");
}

TEST(MultiNode, ABrokenSummaryIsABadInput) {
    const tuneup::test::TempDir dir("multi_node_bad");
    const std::string summary = dir.path() + "/node0.json";
    std::ofstream(summary) << R"({"format": "tuneup-job-summary", "schema_version": 1, "ranks": [{"path": 3}]})";
    const auto r = runProgram(TUNEUP_BINARY, { "advise", summary });
    EXPECT_EQ(r.code, 1);
    EXPECT_CONTAINS(r.err, summary + ": ranks[0].path: expected a string");
}
