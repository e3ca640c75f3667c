// The job core: which files make a job (folders, globs, a run's main name), what each process was,
// helpers set aside, ranks read side by side or streamed into summaries (same advice), summary files
// merged across "machines", and what a bad summary says.

#include "all_rules.h"
#include "export/tuneup_writer.h"
#include "job/job.h"
#include "job/job_files.h"
#include "job/summary_file.h"
#include "model/trace_builder.h"
#include "report/report.h"
#include "shared_traces.h"
#include "temp_dir.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <sstream>

using namespace tuneup;
using namespace tuneup::analysis;
namespace fs = std::filesystem;

namespace {

const std::string kDlrm = "param/et_replay/tests/inputs/dlrm_kineto/";

// A recording of one process: `role` in its meta, and `kernels` kernels (GPU work) or none.
void writeRecording(const std::string& path, const std::string& role, int kernels) {
    TraceBuilder b(SourceFormat::TuneupDb, path);
    b.info().metadata.emplace_back("role", role);
    const StringId name = b.intern("volta_sgemm_128x64_nn");
    for (int i = 0; i < kernels; ++i) {
        Kernel k;
        k.startNs = 1'000'000 + i * 1'000'000;
        k.endNs = k.startNs + 500'000;
        k.stream = 7;
        k.name = name;
        b.addKernel(k);
    }
    writeTuneupFile(b.finish(), path);
}

std::vector<std::string> names(const std::vector<std::string>& paths) {
    std::vector<std::string> out;
    out.reserve(paths.size());
    for (const std::string& p : paths)
        out.push_back(fs::path(p).filename().string());
    return out;
}

std::vector<std::string> names(const std::vector<JobFile>& files) {
    std::vector<std::string> out;
    out.reserve(files.size());
    for (const JobFile& f : files)
        out.push_back(fs::path(f.path).filename().string());
    return out;
}

JobOptions withRules() {
    JobOptions options;
    options.builtinRules = rules::builtinRules;
    return options;
}

// The advice as JSON without the inputs' paths, which differ between the ways a job was opened.
std::string findingsJson(const AdviceReport& report) {
    std::ostringstream out;
    ReportContext context;
    writeJsonReport(out, report, context);
    std::string json = out.str();
    const size_t inputs = json.find("\"inputs\"");
    const size_t findings = json.find("\"findings\"");
    return inputs != std::string::npos && findings != std::string::npos ? json.substr(findings) : json;
}

std::vector<std::string> dlrmRanks() {
    std::vector<std::string> paths;
    const fs::path dir = fs::path(TUNEUP_SHARED_TRACES) / kDlrm;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().extension() == ".json") paths.push_back(entry.path().string());
    std::sort(paths.begin(), paths.end());
    return paths;
}

class JobTest : public ::testing::Test {
protected:
    test::TempDir dir { "job_test" };
    std::string path(const std::string& name) const { return dir.path() + "/" + name; }
};

} // namespace

TEST_F(JobTest, FoldersGlobsAndARunsMainNameBecomeItsFiles) {
    writeRecording(path("run.rank0.db"), "rank", 3);
    writeRecording(path("run.rank10.db"), "rank", 3);
    writeRecording(path("run.rank2.db"), "rank", 3);
    writeRecording(path("run.pid7.db"), "launcher", 0);
    std::ofstream(path("run.rank0.db-wal")) << "";
    std::ofstream(path("notes.txt")) << "not a trace";

    // A folder: its trace files, numbers in order.
    EXPECT_EQ(names(expandJobPaths({ dir.path() })),
        (std::vector<std::string> { "run.pid7.db", "run.rank0.db", "run.rank2.db", "run.rank10.db" }));
    // A glob (quoted, so the shell left it): what it matches.
    EXPECT_EQ(names(expandJobPaths({ path("run.rank*.db") })),
        (std::vector<std::string> { "run.rank0.db", "run.rank2.db", "run.rank10.db" }));
    // run.db after a distributed recording: the ranks wrote their own files; main first, then ranks, then others.
    EXPECT_EQ(names(expandJobPaths({ path("run.db") })),
        (std::vector<std::string> { "run.rank0.db", "run.rank2.db", "run.rank10.db", "run.pid7.db" }));
    // What matches nothing is said.
    EXPECT_THROW(expandJobPaths({ path("nothing*.db") }), std::runtime_error);
    fs::create_directories(path("empty"));
    EXPECT_THROW(expandJobPaths({ path("empty") }), std::runtime_error);
    // A missing plain file is left for the import to name.
    EXPECT_EQ(expandJobPaths({ path("missing.json") }), (std::vector<std::string> { path("missing.json") }));
}

TEST_F(JobTest, HelperProcessesAreSetAsideWithANote) {
    writeRecording(path("run.db"), "main", 5);
    writeRecording(path("run.pid7.db"), "dataloader-worker", 0);
    writeRecording(path("run.pid8.db"), "other", 0);
    writeRecording(path("run.pid9.db"), "forked-child", 4); // a child that ran GPU work trains (mp.spawn)
    writeRecording(path("run.pid10.db"), "launcher", 0);

    EXPECT_EQ(classifyJobFile(path("run.pid7.db")).role, ProcessRole::DataLoaderWorker);
    EXPECT_EQ(classifyJobFile(path("run.pid7.db")).label(), "run.pid7.db (DataLoader worker)");
    EXPECT_EQ(classifyJobFile(path("run.pid10.db")).aside, "launcher");
    EXPECT_EQ(classifyJobFile(path("run.pid9.db")).aside, "");
    EXPECT_EQ(classifyJobFile(path("run.db")).role, ProcessRole::Main);

    const auto job = openJob({ dir.path() }, withRules());
    EXPECT_EQ(names(job->ranks), (std::vector<std::string> { "run.db", "run.pid9.db" }));
    EXPECT_EQ(names(job->helpers), (std::vector<std::string> { "run.pid7.db", "run.pid8.db", "run.pid10.db" }));
    ASSERT_EQ(job->notes.size(), 1u);
    EXPECT_NE(job->notes[0].find("run.pid7.db (DataLoader worker)"), std::string::npos) << job->notes[0];
    EXPECT_EQ(job->report.ranks.size(), 2u);
    EXPECT_TRUE(job->helperModels.empty()); // not read unless asked

    // Only helpers given: they are what the user wants analysed.
    const auto workers = openJob({ path("run.pid7.db"), path("run.pid8.db") }, withRules());
    EXPECT_EQ(workers->ranks.size(), 2u);
    EXPECT_TRUE(workers->notes.empty());
}

TEST_F(JobTest, TheProcessesBesideARankAreReadForTheTimeline) {
    writeRecording(path("run.db"), "main", 5);
    writeRecording(path("run.pid7.db"), "dataloader-worker", 0);
    writeRecording(path("other.pid8.db"), "dataloader-worker", 0); // another run's
    std::ofstream(path("run.pid9.db")) << "cut short"; // a worker killed mid-write
    JobOptions options = withRules();
    options.withHelperProcesses = true;
    const auto job = openJob({ path("run.db") }, options);
    EXPECT_EQ(names(job->ranks), (std::vector<std::string> { "run.db" }));
    EXPECT_EQ(names(job->helpers), (std::vector<std::string> { "run.pid7.db" }));
    ASSERT_EQ(job->helperModels.size(), 1u);
    ASSERT_EQ(job->notes.size(), 1u); // the unreadable one, left out
    EXPECT_NE(job->notes[0].find("run.pid9.db"), std::string::npos) << job->notes[0];
}

TEST_F(JobTest, StreamedRanksGiveTheSameAdvice) {
    TUNEUP_REQUIRE_SHARED_TRACES(fs::path(TUNEUP_SHARED_TRACES));
    const auto paths = dlrmRanks();
    ASSERT_EQ(paths.size(), 8u);
    const auto kept = openJob(paths, withRules());
    JobOptions streaming = withRules();
    streaming.streamFromRanks = 1;
    streaming.threads = 3;
    const auto streamed = openJob(paths, streaming);
    EXPECT_EQ(kept->models.size(), 8u);
    EXPECT_TRUE(streamed->models.empty());
    EXPECT_TRUE(streamed->analyses.empty());
    EXPECT_EQ(findingsJson(streamed->report), findingsJson(kept->report));
    EXPECT_FALSE(kept->report.ranked().empty());
}

TEST_F(JobTest, SummariesOfSeveralMachinesMergeIntoTheJobsAdvice) {
    TUNEUP_REQUIRE_SHARED_TRACES(fs::path(TUNEUP_SHARED_TRACES));
    const auto paths = dlrmRanks();
    // Two "machines", four ranks each, in folders of their own.
    for (size_t i = 0; i < paths.size(); ++i) {
        const std::string node = path("node" + std::to_string(i / 4));
        fs::create_directories(node);
        fs::copy_file(paths[i], node + "/" + fs::path(paths[i]).filename().string());
    }
    for (const char* node : { "node0", "node1" }) {
        const auto job = openJob({ path(node) }, withRules());
        std::ofstream out(path(std::string(node) + ".json"));
        writeJobSummary(out, job->report, "test");
    }
    const auto merged = openJob({ path("node*.json") }, withRules());
    EXPECT_TRUE(merged->ranks.empty());
    EXPECT_EQ(merged->summaries.size(), 2u);
    ASSERT_EQ(merged->report.ranks.size(), 8u);
    const auto whole = openJob(paths, withRules());
    EXPECT_EQ(findingsJson(merged->report), findingsJson(whole->report));
    // The job-wide rules ran over the merged ranks: rank-straggler compared all eight.
    bool straggler = false;
    for (const RuleOutcome& o : merged->report.outcomes)
        straggler = straggler || (o.ruleId == "rank-straggler" && o.status != RuleStatus::NotEvaluated);
    EXPECT_TRUE(straggler);
}

TEST_F(JobTest, ASummaryKeepsTheIdleInsideGraphReplaysAndVersionOneStillReads) {
    // Each step of the fixture idles 81 us between the nodes of its CUDA graph replay.
    const auto job = openJob({ std::string(TUNEUP_KINETO_FIXTURES) + "/cuda_graph_replay.json" }, withRules());
    std::ostringstream out;
    writeJobSummary(out, job->report, "test");
    const std::string now = out.str();
    EXPECT_NE(now.find("\"schema_version\":2"), std::string::npos);
    std::ofstream(path("now.json")) << now;
    const auto back = readJobSummary(path("now.json"));
    ASSERT_EQ(back.size(), 1u);
    EXPECT_EQ(back[0].summary.steps.median.idleGraphNs, 81'000);
    EXPECT_EQ(back[0].summary.steps.median.idleNs, job->report.ranks[0].steps.median.idleNs);

    // Version 1 had nine numbers per breakdown (no idle inside graph replays): read as 0 there.
    std::string before = std::regex_replace(now, std::regex(R"(\[(-?\d+(,-?\d+){8}),-?\d+\])"), "[$1]");
    before.replace(before.find("\"schema_version\":2"), 18, "\"schema_version\":1");
    std::ofstream(path("before.json")) << before;
    const auto old = readJobSummary(path("before.json"));
    ASSERT_EQ(old.size(), 1u);
    EXPECT_EQ(old[0].summary.steps.median.idleGraphNs, 0);
    EXPECT_EQ(old[0].summary.steps.median.stepNs, back[0].summary.steps.median.stepNs);
    ASSERT_EQ(old[0].summary.steps.perStep.size(), 4u);
    // A version-2 file with nine numbers is damaged, not old.
    std::ofstream(path("cut.json")) << std::regex_replace(now, std::regex(R"(\[(-?\d+(,-?\d+){8}),-?\d+\])"), "[$1]");
    EXPECT_THROW(readJobSummary(path("cut.json")), SummaryFileError);
}

TEST_F(JobTest, FindingsNameTheLinesOfCodeBehindThemAndASummaryKeepsThem) {
    TUNEUP_REQUIRE_SHARED_TRACES(fs::path(TUNEUP_SHARED_TRACES));
    // TraceLens's BERT trace, recorded with_stack: its one data-dependent synchronisation (aten::is_nonzero)
    // runs inside Hugging Face's attention-mask helper (found independently by walking its python_function
    // events in Python: the innermost frame around the op outside torch and the standard library).
    const std::string bert
        = (fs::path(TUNEUP_SHARED_TRACES) / "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz")
              .string();
    JobOptions options = withRules();
    options.materiality.showAll = true;
    const auto job = openJob({ bert }, options);
    const Finding* sync = nullptr;
    for (const RuleOutcome& o : job->report.outcomes)
        for (const Finding& f : o.findings)
            if (f.ruleId == "sync-in-loop") sync = &f;
    ASSERT_NE(sync, nullptr);
    bool maskHelper = false;
    for (const SourceSite& site : sync->sources)
        maskHelper = maskHelper
            || (site.file == "transformers/modeling_attn_mask_utils.py" && site.line == 429
                && site.function == "_prepare_4d_attention_mask_for_sdpa" && site.events == 1);
    EXPECT_TRUE(maskHelper) << sync->sources.size();

    std::ofstream(path("bert.json")) << [&] {
        std::ostringstream out;
        writeJobSummary(out, job->report, "test");
        return out.str();
    }();
    const auto merged = openJob({ path("bert.json") }, options);
    EXPECT_EQ(findingsJson(merged->report), findingsJson(job->report));
    EXPECT_NE(
        findingsJson(job->report).find("\"function\": \"_prepare_4d_attention_mask_for_sdpa\""), std::string::npos);
}

TEST_F(JobTest, ABadSummarySaysWhereAndWhat) {
    auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(path(name)) << text;
        return path(name);
    };
    auto message = [](const std::string& file) {
        try {
            readJobSummary(file);
        } catch (const SummaryFileError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    const std::string head = R"({"format": "tuneup-job-summary", "schema_version": )";
    EXPECT_NE(message(write("cut.json", head + "1, \"ranks\": [")).find("not valid JSON at byte"), std::string::npos);
    EXPECT_NE(message(write("new.json", head + "7, \"ranks\": []}")).find("version 7"), std::string::npos);
    const std::string missing = message(write("missing.json", head + "1, \"ranks\": [{\"path\": \"a\"}]}"));
    EXPECT_NE(missing.find("missing.json: ranks[0]: missing \"format\""), std::string::npos) << missing;
    EXPECT_NE(
        message(write("type.json", head + "1, \"ranks\": 3}")).find("ranks: expected an array"), std::string::npos);
    // Recognised by content, and refused by what reads events.
    EXPECT_EQ(detectFileFormat(write("ok.json", head + "1, \"tool_version\": \"x\", \"ranks\": []}")),
        TraceFileFormat::JobSummary);
}

TEST_F(JobTest, CancellingStopsTheReading) {
    writeRecording(path("run.db"), "main", 5);
    std::atomic<bool> cancel { true };
    JobOptions options = withRules();
    options.cancel = &cancel;
    EXPECT_THROW(openJob({ path("run.db") }, options), JobCancelled);
}
