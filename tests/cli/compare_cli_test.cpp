// `tuneup compare` run as users run it (docs/compare.md). Recordings of the dataloader_workers Python
// sample (a DataLoader in the main process) and its --fixed twin (worker processes): a change large on
// any CPU — each batch sleeps 96 ms to load in the main process (a step of about 150 ms), while four
// workers make a batch every 24 ms (the twin's workers may still fall behind and keep a smaller stall: the
// tests allow that). They are made alone on the machine (record_compare_runs.sh says why). The real HTA
// trace_diff pair (A100 against V100) for a changed environment; malformed inputs; every format, JUnit
// validated against tests/fixtures/junit.xsd.

#include "run_program.h"
#include "shared_traces.h"
#include "temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sstream>

namespace fs = std::filesystem;

namespace tuneup::test {
namespace {

const std::string kTraceDiff = std::string(TUNEUP_SHARED_TRACES) + "/hta/tests/data/trace_diff";
const std::string kRecordRuns = std::string(TUNEUP_SOURCE_DIR) + "/tests/cli/record_compare_runs.sh";
const std::string kSchema = std::string(TUNEUP_SOURCE_DIR) + "/tests/fixtures/junit.xsd";

class CompareCliTest : public ::testing::Test {
protected:
    // Recordings: slow.db and fixed.db (the sample and its twin); sleeps.db and sleeps2.db
    // (tests/cli/bench_steps.py, twice: steps that are sleeps). ctest makes them once, alone on the machine,
    // in $TUNEUP_COMPARE_RUNS; a test run by hand makes them once per process, with the same script.
    static inline TempDir* s_runs = nullptr;

    static void TearDownTestSuite() {
        delete s_runs;
        s_runs = nullptr;
    }

    static std::string run(const std::string& name) {
        std::string dir;
        if (const char* made = std::getenv("TUNEUP_COMPARE_RUNS")) {
            dir = made;
        } else {
            if (!s_runs) {
                s_runs = new TempDir("compare_cli_test");
                const ProgramResult r = runProgram(
                    "/bin/sh", { kRecordRuns, TUNEUP_BINARY, TUNEUP_PYTHON, TUNEUP_SOURCE_DIR, s_runs->path() });
                EXPECT_EQ(r.code, 0) << r.err;
            }
            dir = s_runs->path();
        }
        EXPECT_TRUE(fs::exists(dir + "/" + name)) << dir << "/" << name << ": not recorded";
        return dir + "/" + name;
    }
    TempDir m_out { "compare_cli_out" };
    std::string out(const std::string& name) const { return m_out.path() + "/" + name; }

    static ProgramResult compare(std::vector<std::string> args) {
        args.insert(args.begin(), "compare");
        return runProgram(TUNEUP_BINARY, args);
    }
    static rapidjson::Document json(const std::string& text) {
        rapidjson::Document doc;
        doc.Parse(text.c_str());
        EXPECT_FALSE(doc.HasParseError()) << text;
        return doc;
    }
};

TEST_F(CompareCliTest, TheFixedTwinIsImprovedWithTheCauseNamed) {
    const ProgramResult r = compare({ run("slow.db"), run("fixed.db") });
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("tuneup compare: improved: ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("dataloader.num_workers changed: 0 -> 4"), std::string::npos) << r.out;
    // The finding resolved — unless a machine so busy that the workers fell behind kept a smaller stall.
    EXPECT_TRUE(r.out.find("dataloader-stall resolved") != std::string::npos
        || r.out.find("  still     dataloader-stall") != std::string::npos)
        << r.out;
}

TEST_F(CompareCliTest, TheSwappedPairRegressesAndExitsOne) {
    const ProgramResult r = compare({ run("fixed.db"), run("slow.db"), "--format", "json" });
    EXPECT_EQ(r.code, 1) << r.err;
    const rapidjson::Document doc = json(r.out);
    EXPECT_STREQ(doc["verdict"].GetString(), "regressed");
    EXPECT_GT(doc["step_time"]["ratio_ci"][0].GetDouble(), 1 + doc["step_time"]["threshold"].GetDouble());
    // The stall appeared (or, on a machine busy enough to starve the workers, was there already).
    const auto& findings = doc["findings"];
    const auto& stall = findings["appeared"].Empty() ? findings["persisting"] : findings["appeared"];
    ASSERT_FALSE(stall.Empty()) << r.out;
    EXPECT_STREQ(stall[0]["rule"].GetString(), "dataloader-stall");
}

TEST_F(CompareCliTest, ARunAgainstItselfIsTheSame) {
    const ProgramResult r = compare({ run("slow.db"), run("slow.db"), "--format", "json" });
    EXPECT_EQ(r.code, 0) << r.err;
    const rapidjson::Document doc = json(r.out);
    EXPECT_STREQ(doc["verdict"].GetString(), "same");
    EXPECT_DOUBLE_EQ(doc["step_time"]["ratio"].GetDouble(), 1.0);
    EXPECT_TRUE(doc["step_time"]["identical"].GetBool());
    EXPECT_NE(std::string(doc["summary"].GetString()).find("the very same step times"), std::string::npos);
}

TEST_F(CompareCliTest, TwoRunsOfTheSameProgramAreNoRegression) {
    // Recorded seconds apart on a shared machine: steps of 20 ms sleeps, whose wake-ups a loaded machine
    // delays by far less than 25%. (Runs of a torch program landed up to 67% apart here under a load of 5
    // on 2 cores: that is what --calibrate measures, docs/performance.md.)
    const ProgramResult r
        = compare({ run("sleeps.db"), run("sleeps2.db"), "--max-regression", "25%", "--format", "json" });
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_STREQ(json(r.out)["verdict"].GetString(), "same") << r.out;
}

TEST_F(CompareCliTest, JunitValidatesAgainstTheSchemaAndParsesBack) {
    const std::string xml = out("compare.xml");
    const ProgramResult r = compare({ run("fixed.db"), run("slow.db"), "--format", "junit", "-o", xml });
    EXPECT_EQ(r.code, 1) << r.err;
    if (fs::exists("/usr/bin/xmllint")) {
        const ProgramResult lint = runProgram("/usr/bin/xmllint", { "--noout", "--schema", kSchema, xml });
        EXPECT_EQ(lint.code, 0) << lint.err;
    }
    // Parsed back (Python's XML parser): the test cases, and the failures they add up to.
    const ProgramResult parsed = runProgram(TUNEUP_PYTHON,
        { "-c",
            "import sys, xml.etree.ElementTree as ET\n"
            "root = ET.parse(sys.argv[1]).getroot()\n"
            "suite = root.find('testsuite')\n"
            "cases = suite.findall('testcase')\n"
            "failed = [c.get('name') for c in cases if c.find('failure') is not None]\n"
            "assert int(suite.get('tests')) == len(cases), 'tests'\n"
            "assert int(suite.get('failures')) == len(failed), 'failures'\n"
            "print(' '.join(c.get('name') for c in cases)); print('failed: ' + ' '.join(failed))\n",
            xml });
    ASSERT_EQ(parsed.code, 0) << parsed.err;
    // environment, step time, then the stall when it appeared (each appeared finding fails).
    EXPECT_EQ(parsed.out.rfind("environment step time", 0), 0u) << parsed.out;
    EXPECT_NE(parsed.out.find("failed: step time"), std::string::npos) << parsed.out;
    EXPECT_EQ(parsed.out.find("environment step time dataloader-stall") != std::string::npos,
        parsed.out.find("failed: step time dataloader-stall") != std::string::npos)
        << parsed.out;
}

TEST_F(CompareCliTest, MarkdownAndCsvGoToFiles) {
    const ProgramResult md = compare({ run("slow.db"), run("fixed.db"), "--format", "markdown", "-o", out("s.md") });
    EXPECT_EQ(md.code, 0) << md.err;
    const std::string text = readFile(out("s.md"));
    EXPECT_EQ(text.rfind("## tuneup compare: **improved**", 0), 0u) << text;
    EXPECT_LT(text.size(), size_t(1) << 20);
    EXPECT_NE(md.err.find("improved; report written to"), std::string::npos) << md.err;
    const ProgramResult csv = compare({ run("slow.db"), run("fixed.db"), "--format", "csv", "-o", out("d.csv") });
    EXPECT_EQ(csv.code, 0) << csv.err;
    const std::string rows = readFile(out("d.csv"));
    EXPECT_EQ(rows.rfind("section,name,class,unit,base,new,delta,ratio,verdict\nstep_time,median step,,ms,", 0), 0u)
        << rows;
    EXPECT_NE(rows.find("\nstep_time,median step,,ms,"), std::string::npos) << rows;
    EXPECT_NE(rows.find(",improved\n"), std::string::npos) << rows;
}

TEST_F(CompareCliTest, MalformedInputsExitTwoWithTheReason) {
    std::ofstream(out("notes.txt")) << "not a trace\n";
    std::ofstream(out("broken.json")) << "{\"traceEvents\": [ {\"ph\": \"X\", ";
    struct Case {
        std::vector<std::string> args;
        std::string says;
    };
    const std::vector<Case> cases {
        { { run("slow.db") }, "give two runs, BASE and NEW (got 1)" },
        { { run("slow.db"), out("missing.db") }, "NEW " + out("missing.db") },
        { { out("notes.txt"), run("slow.db") }, "BASE " + out("notes.txt") },
        { { run("slow.db"), out("broken.json") }, "NEW " + out("broken.json") },
        { { run("slow.db"), run("fixed.db"), "--max-regression", "five" }, "--max-regression 'five'" },
        { { run("slow.db"), run("fixed.db"), "--max-regression", "-3%" }, "--max-regression '-3%'" },
        { { run("slow.db"), run("fixed.db"), "--format", "pdf" }, "unknown --format 'pdf'" },
        { { run("slow.db"), run("fixed.db"), "-o", out("no/such/folder/r.txt") }, "cannot" },
        { { run("slow.db"), run("fixed.db"), "--step-range", "no-such-range" }, "no training steps found" },
    };
    for (const Case& c : cases) {
        const ProgramResult r = compare(c.args);
        EXPECT_EQ(r.code, 2) << c.says << "\n" << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
        EXPECT_TRUE(r.out.empty()) << r.out;
    }
}

TEST_F(CompareCliTest, CalibrateMeasuresTheNoiseOfRunsOfTheSameProgram) {
    const ProgramResult r = compare({ "--calibrate", run("sleeps.db"), run("sleeps2.db"), "--format", "json" });
    ASSERT_EQ(r.code, 0) << r.err;
    const rapidjson::Document doc = json(r.out);
    EXPECT_EQ(doc["runs"].Size(), 2u);
    EXPECT_EQ(doc["pairs"].Size(), 1u);
    const double suggested = doc["suggested_max_regression"].GetDouble();
    EXPECT_GE(suggested, 0.02);
    // Under the suggested threshold the pair reads "same", as compare itself says.
    const ProgramResult again = compare({ run("sleeps.db"), run("sleeps2.db"), "--max-regression",
        std::to_string(suggested * 100), "--format", "json" });
    EXPECT_EQ(again.code, 0);
    EXPECT_STREQ(json(again.out)["verdict"].GetString(), "same") << r.out << again.out;
    const ProgramResult one = compare({ "--calibrate", run("slow.db") });
    EXPECT_EQ(one.code, 2);
    EXPECT_NE(one.err.find("give two or more runs"), std::string::npos) << one.err;
}

TEST_F(CompareCliTest, HistoryKeepsRunsAndCompareGoesAgainstTheirLast) {
    const std::string db = out("history.db");
    const auto history = [](std::vector<std::string> args) {
        args.insert(args.begin(), "history");
        return runProgram(TUNEUP_BINARY, args);
    };
    for (const auto& [file, label] : { std::pair { "sleeps.db", "first" }, std::pair { "sleeps2.db", "second" } }) {
        const ProgramResult added = history({ "add", run(file), "--label", label, "--db", db });
        ASSERT_EQ(added.code, 0) << added.err;
        // 25 steps, less the first ones when a busy machine made them slower than all the others (warm-up).
        EXPECT_NE(added.err.find(std::string("(") + label + ", "), std::string::npos) << added.err;
        EXPECT_NE(added.err.find(" steps) added to " + db), std::string::npos) << added.err;
    }
    const ProgramResult shown = history({ "show", "--db", db, "--format", "json" });
    ASSERT_EQ(shown.code, 0) << shown.err;
    const rapidjson::Document doc = json(shown.out);
    ASSERT_EQ(doc["environments"].Size(), 1u);
    ASSERT_EQ(doc["environments"][0]["runs"].Size(), 2u);
    EXPECT_STREQ(doc["environments"][0]["runs"][1]["label"].GetString(), "second");
    EXPECT_NEAR(doc["environments"][0]["runs"][0]["median_ms"].GetDouble(), 20, 2);
    EXPECT_EQ(history({ "show", "--db", db }).out.find("environment: arch="), 0u);
    // The trend page: its chart is well-formed SVG with a point per run.
    const ProgramResult page = history({ "show", "--db", db, "--format", "html", "-o", out("trend.html") });
    ASSERT_EQ(page.code, 0) << page.err;
    const ProgramResult svg = runProgram(TUNEUP_PYTHON,
        { "-c",
            "import re, sys, xml.dom.minidom\n"
            "svgs = re.findall(r'<svg.*?</svg>', open(sys.argv[1]).read(), re.S)\n"
            "print(len(svgs), sum(len(xml.dom.minidom.parseString(s).getElementsByTagName('circle')) for s in svgs))\n",
            out("trend.html") });
    EXPECT_EQ(svg.out, "1 2\n") << svg.err;

    // The same program against its history: no change (two kept runs widen the interval ninefold, a
    // t-distribution with one degree of freedom: "same" when the sleeps kept still, else "inconclusive");
    // the slow sample (about 100 ms a step): regressed.
    const ProgramResult same = compare({ "--against-history", db, run("sleeps2.db") });
    EXPECT_EQ(same.code, 0) << same.out << same.err;
    EXPECT_TRUE(
        same.out.starts_with("tuneup compare: same: ") || same.out.starts_with("tuneup compare: inconclusive: "))
        << same.out;
    EXPECT_NE(same.out.find("(the last 2 run(s): first, second)"), std::string::npos) << same.out;
    const ProgramResult slower = compare({ "--against-history", db, run("slow.db"), "--last", "1" });
    EXPECT_EQ(slower.code, 1) << slower.out << slower.err;
    EXPECT_NE(slower.out.find("(the last 1 run(s): second)"), std::string::npos) << slower.out;

    // Errors: two runs with --against-history, a file that is no history, a run that cannot be read.
    EXPECT_EQ(compare({ "--against-history", db, run("sleeps.db"), run("sleeps2.db") }).code, 2);
    std::ofstream(out("notes.txt")) << "not a database\n";
    const ProgramResult notHistory = compare({ "--against-history", out("notes.txt"), run("sleeps.db") });
    EXPECT_EQ(notHistory.code, 2);
    EXPECT_NE(notHistory.err.find(out("notes.txt") + ": not"), std::string::npos) << notHistory.err;
    const ProgramResult missing = history({ "add", out("missing.db"), "--label", "x", "--db", db });
    EXPECT_EQ(missing.code, 2);
    EXPECT_NE(missing.err.find("no such file"), std::string::npos) << missing.err;
}

TEST_F(CompareCliTest, AChangedGpuIsIncomparableAndExitsFour) {
    TUNEUP_REQUIRE_SHARED_TRACES(TUNEUP_SHARED_TRACES);
    const std::string control = kTraceDiff + "/control/control.json.gz", test = kTraceDiff + "/test/test.json.gz";
    const ProgramResult r = compare({ control, test });
    EXPECT_EQ(r.code, 4) << r.err;
    EXPECT_EQ(r.out.rfind("tuneup compare: incomparable: ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("GPU model NVIDIA A100-PG509-200 -> Tesla V100-SXM2-16GB"), std::string::npos) << r.out;
    const ProgramResult anyway = compare({ control, test, "--allow-env-change" });
    EXPECT_EQ(anyway.code, 1) << anyway.out;
    EXPECT_EQ(anyway.out.rfind("tuneup compare: regressed: ", 0), 0u) << anyway.out;
}

TEST_F(CompareCliTest, JobSummariesCompareLikeTheirTraces) {
    TUNEUP_REQUIRE_SHARED_TRACES(TUNEUP_SHARED_TRACES);
    // tuneup advise --summary-out keeps steps, breakdowns and each rank's top kernels: enough to compare.
    const std::string control = kTraceDiff + "/control/control.json.gz", test = kTraceDiff + "/test/test.json.gz";
    for (const auto& [trace, summary] :
        { std::pair { control, out("control.json") }, std::pair { test, out("test.json") } })
        ASSERT_EQ(
            runProgram(TUNEUP_BINARY, { "advise", trace, "--summary-out", summary, "-o", out("advice.txt") }).code, 0);
    const ProgramResult fromTraces = compare({ control, test, "--allow-env-change", "--format", "json" });
    const ProgramResult fromSummaries
        = compare({ out("control.json"), out("test.json"), "--allow-env-change", "--format", "json" });
    EXPECT_EQ(fromSummaries.code, 1) << fromSummaries.err;
    const rapidjson::Document a = json(fromTraces.out), b = json(fromSummaries.out);
    EXPECT_STREQ(b["verdict"].GetString(), "regressed");
    for (const char* field : { "base_ms", "new_ms", "ratio" })
        EXPECT_DOUBLE_EQ(a["step_time"][field].GetDouble(), b["step_time"][field].GetDouble()) << field;
    EXPECT_EQ(a["breakdown"].Size(), b["breakdown"].Size());
    EXPECT_FALSE(a["kernels_whole_trace"].GetBool());
    EXPECT_TRUE(b["kernels_whole_trace"].GetBool()); // summaries keep the whole trace's top kernels
    // The GPU model is kept, so a summary is as incomparable as its trace.
    EXPECT_EQ(compare({ out("control.json"), out("test.json") }).code, 4);
}

TEST_F(CompareCliTest, InconclusiveExitsThreeOnlyWhenAskedTo) {
    TUNEUP_REQUIRE_SHARED_TRACES(TUNEUP_SHARED_TRACES);
    // V100 against A100, 1.49x (95% CI 1.19x-2.18x) over six steps, asked whether it doubled: the interval
    // straddles 2x, and more steps would decide.
    const std::string control = kTraceDiff + "/control/control.json.gz", test = kTraceDiff + "/test/test.json.gz";
    const std::vector<std::string> args { control, test, "--allow-env-change", "--max-regression", "100%" };
    const ProgramResult plain = compare(args);
    EXPECT_EQ(plain.code, 0) << plain.out;
    EXPECT_EQ(plain.out.rfind("tuneup compare: inconclusive: ", 0), 0u) << plain.out;
    EXPECT_NE(plain.out.find("measured steps per run would decide"), std::string::npos) << plain.out;
    std::vector<std::string> strict = args;
    strict.push_back("--fail-on-inconclusive");
    EXPECT_EQ(compare(strict).code, 3);
    // A trace against itself is the same, exit 0 with or without the flag.
    const ProgramResult itself = compare({ control, control, "--fail-on-inconclusive" });
    EXPECT_EQ(itself.code, 0) << itself.out;
    EXPECT_EQ(itself.out.rfind("tuneup compare: same: ", 0), 0u) << itself.out;
}

// The words of a shell command line as the CI recipes write them: split at spaces, quotes removed,
// stopping at "||".
std::vector<std::string> shellWords(const std::string& line) {
    std::vector<std::string> words;
    std::istringstream in(line);
    for (std::string word; in >> word;) {
        if (word == "||") break;
        std::erase(word, '"');
        words.push_back(word);
    }
    return words;
}

TEST_F(CompareCliTest, TheCiRecipesCompareCommandsRun) {
    // Every `tuneup compare` line of docs/ci/, run on the sample and its twin in place of the baseline and
    // the new recording: none may be a usage error.
    size_t commands = 0;
    for (const char* recipe : { "github-actions.yml", "gitlab-ci.yml" }) {
        std::istringstream lines(readFile(std::string(TUNEUP_SOURCE_DIR) + "/docs/ci/" + recipe));
        for (std::string line; std::getline(lines, line);) {
            const size_t at = line.find("tuneup compare baseline/");
            if (at == std::string::npos) continue;
            std::vector<std::string> args;
            for (std::string word : shellWords(line.substr(at + std::string("tuneup ").size()))) {
                if (word.starts_with("baseline/"))
                    word = run("fixed.db");
                else if (word == "recording/run.db")
                    word = run("slow.db");
                else if (word == "$MAX_REGRESSION")
                    word = "5%";
                else if (word.starts_with("compare."))
                    word = out(word);
                args.push_back(word);
            }
            const ProgramResult r = runProgram(TUNEUP_BINARY, args);
            EXPECT_EQ(r.code, 1) << recipe << ": " << line << "\n" << r.err; // the twin regressed to the sample
            ++commands;
        }
    }
    EXPECT_EQ(commands, 6u);
    EXPECT_NE(readFile(out("compare.xml")).find("<testcase classname=\"tuneup.compare\" name=\"step time\">"),
        std::string::npos);
}

TEST_F(CompareCliTest, AdviseJunitHasOneCasePerRuleAndFailsByFailOn) {
    const std::string xml = out("advise.xml");
    const ProgramResult r = runProgram(
        TUNEUP_BINARY, { "advise", run("slow.db"), "--format", "junit", "--fail-on", "warning", "-o", xml });
    EXPECT_EQ(r.code, 3) << r.err;
    if (fs::exists("/usr/bin/xmllint")) {
        const ProgramResult lint = runProgram("/usr/bin/xmllint", { "--noout", "--schema", kSchema, xml });
        EXPECT_EQ(lint.code, 0) << lint.err;
    }
    const ProgramResult rules = runProgram(TUNEUP_BINARY, { "rules" });
    const std::string text = readFile(xml);
    size_t ruleCount = 0;
    for (size_t at = 0; (at = rules.out.find("\n    doc: ", at)) != std::string::npos; ++at)
        ++ruleCount;
    EXPECT_NE(text.find("<testsuite name=\"tuneup advise " + run("slow.db") + "\" tests=\"" + std::to_string(ruleCount)
                  + "\" failures=\"1\""),
        std::string::npos)
        << text;
    EXPECT_NE(text.find("<testcase classname=\"tuneup.advise\" name=\"dataloader-stall\">\n      <failure"),
        std::string::npos);
    // Without --fail-on nothing fails, as the exit code says.
    const ProgramResult quiet = runProgram(TUNEUP_BINARY, { "advise", run("slow.db"), "--format", "junit" });
    EXPECT_EQ(quiet.code, 0);
    EXPECT_NE(quiet.out.find("failures=\"0\""), std::string::npos);
}

} // namespace
} // namespace tuneup::test
