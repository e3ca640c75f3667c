// `tuneup compare --format markdown` on the real HTA trace_diff pair (rank 3 of 8 A100s against rank 1
// of 2 V100s), compared with the summaries kept in tests/golden/compare/: the CI job summary users get,
// held still while the code under it moves. Paths are replaced by <traces>; a failure shows a unified
// diff; scripts/refresh-golden.sh writes the files anew when a change is intended.

#include "run_program.h"
#include "shared_traces.h"
#include "temp_dir.h"
#include "unified_diff.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

const fs::path kTraces = TUNEUP_SHARED_TRACES;
const fs::path kGoldenDir = TUNEUP_COMPARE_GOLDEN_DIR;

struct Case {
    std::string name; // the golden file is <name>.md
    std::vector<std::string> args; // after `compare`; paths under ../shared/traces start with "<traces>/"
    int exitCode = 0;
};

std::vector<Case> cases() {
    const std::string diff = "<traces>/hta/tests/data/trace_diff/";
    const std::string control = diff + "control/control.json.gz", test = diff + "test/test.json.gz";
    return {
        { "trace_diff_incomparable", { control, test }, 4 },
        { "trace_diff_allow_env_change", { control, test, "--allow-env-change" }, 1 },
    };
}

void PrintTo(const Case& c, std::ostream* out) {
    *out << c.name;
}

bool refreshing() {
    const char* refresh = std::getenv("TUNEUP_REFRESH_GOLDEN");
    return refresh && std::string(refresh) == "1";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
        text.replace(at, from.size(), to);
    return text;
}

class CompareGolden : public ::testing::TestWithParam<Case> { };

TEST_P(CompareGolden, MatchesTheGoldenSummary) {
    TUNEUP_REQUIRE_SHARED_TRACES(kTraces);
    const Case& c = GetParam();
    std::vector<std::string> args { "compare", "--format", "markdown" };
    for (const std::string& arg : c.args)
        args.push_back(replaced(arg, "<traces>", kTraces.string()));
    const tuneup::test::ProgramResult r = tuneup::test::runProgram(TUNEUP_BINARY, args);
    EXPECT_EQ(r.code, c.exitCode) << r.err;
    // The Markdown escapes '_' in paths: the traces' folder is replaced in both spellings.
    std::string now = replaced(r.out, kTraces.string(), "<traces>");
    now = replaced(now, replaced(kTraces.string(), "_", "\\_"), "<traces>");
    const fs::path golden = kGoldenDir / (c.name + ".md");
    const std::string kept = tuneup::test::readFile(golden.string());
    if (refreshing()) {
        if (now != kept) {
            std::ofstream(golden, std::ios::binary) << now;
            std::cout << "refreshed " << golden.string() << "\n";
        }
        return;
    }
    ASSERT_FALSE(kept.empty()) << golden << " is missing: run scripts/refresh-golden.sh to write it";
    EXPECT_TRUE(now == kept) << "tuneup compare --format markdown on " << c.name << " differs from " << golden.string()
                             << " (- kept, + now). If the change is intended, run scripts/refresh-golden.sh "
                                "<build dir> and review the diff of tests/golden/ before committing.\n"
                             << tuneup::golden::unifiedDiff(kept, now, "golden/" + c.name + ".md", "now");
}

std::string caseName(const ::testing::TestParamInfo<Case>& info) {
    return info.param.name;
}

INSTANTIATE_TEST_SUITE_P(SharedTraces, CompareGolden, ::testing::ValuesIn(cases()), caseName);

TEST(CompareGoldenFiles, EachBelongsToACase) {
    std::set<std::string> names;
    for (const Case& c : cases())
        names.insert(c.name + ".md");
    for (const auto& entry : fs::directory_iterator(kGoldenDir)) {
        const std::string file = entry.path().filename().string();
        if (names.count(file)) continue;
        if (refreshing()) {
            fs::remove(entry.path());
            std::cout << "removed " << entry.path().string() << " (no such case)\n";
        } else {
            ADD_FAILURE() << entry.path() << " belongs to no case of compare_golden_test.cpp: remove it";
        }
    }
}

} // namespace
