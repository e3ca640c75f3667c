// samples/python/sync_batchnorm.py recorded for real: `tuneup record -- python3 -m torch.distributed.run` with
// two ranks over gloo on the CPU (python3-torch 1.13), one file per rank. BatchNorm with 8 samples per process
// must raise sync-batchnorm-missing on each rank, from the bootstrap's facts (the DDP model's layers, the world
// size, the DataLoader's batch size), and name the line that made the DataLoader. --fixed converts the model
// to SyncBatchNorm, which DDP refuses on the CPU: the sample says so and stops, the facts say what it asked
// for, and the rule stays quiet. --fixed with 32 samples per process is sync-batchnorm-unneeded's pattern (its
// time is not measured without GPU kernels). On a GPU, scripts/gpu_bundle/gpu_check.py runs the real thing.

#include "sqlite_query.h"
#include "temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace fs = std::filesystem;

namespace {

using tuneup::test::readFile;

const std::string kSample = std::string(TUNEUP_SAMPLES_DIR) + "/python/sync_batchnorm.py";

class SyncBatchnormSampleTest : public ::testing::Test {
protected:
    // Records the sample with two ranks into DIR/NAME/run.rank{0,1}.db; the run must succeed.
    // --redirects/--tee 1: torch 1.13's launcher reads "0" as no setting on Python 3.11 and fails.
    std::string record(const std::string& name, const std::string& options) {
        const std::string dir = m_dir + "/" + name;
        fs::create_directory(dir);
        const std::string command = std::string(TUNEUP_BINARY) + " record -o " + dir + "/run.db -- " + TUNEUP_PYTHON
            + " -m torch.distributed.run --standalone --nproc_per_node 2 --redirects 1 --tee 1 --log_dir " + dir
            + "/logs " + kSample + " --steps 4 " + options + " > " + dir + "/out.txt 2>&1";
        const int status = std::system(command.c_str());
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command << "\n" << readFile(dir + "/out.txt");
        for (const char* rank : { "/run.rank0.db", "/run.rank1.db" })
            EXPECT_TRUE(fs::exists(dir + rank)) << dir + rank << "\n" << readFile(dir + "/out.txt");
        return dir;
    }

    // `tuneup advise` of both ranks' files, --all --format json.
    static rapidjson::Document advise(const std::string& dir) {
        const std::string out = dir + "/advice.json";
        const std::string command = std::string(TUNEUP_BINARY) + " advise " + dir + "/run.rank0.db " + dir
            + "/run.rank1.db --all --format json -o " + out + " 2> " + dir + "/advise.txt";
        EXPECT_EQ(std::system(command.c_str()), 0) << command << "\n" << readFile(dir + "/advise.txt");
        rapidjson::Document json;
        json.Parse(readFile(out).c_str());
        EXPECT_TRUE(!json.HasParseError() && json.IsObject()) << out;
        return json;
    }

    // The findings of `rule`, one per rank.
    static std::vector<const rapidjson::Value*> findings(const rapidjson::Document& advice, const std::string& rule) {
        std::vector<const rapidjson::Value*> list;
        for (const auto& f : advice["findings"].GetArray())
            if (f["rule"].GetString() == rule) list.push_back(&f);
        return list;
    }
    static std::string outcome(const rapidjson::Document& advice, const std::string& rule) {
        for (const auto& r : advice["rules_without_findings"].GetArray())
            if (r["rule"].GetString() == rule)
                return std::string(r["status"].GetString()) + ": " + r["reason"].GetString();
        return "(raised)";
    }
    static std::string fact(const std::string& db, const std::string& name) {
        tuneup::test::SqliteQuery q(db);
        const auto rows = q.rows("SELECT m.payload FROM nvtx_marks m JOIN strings s ON s.id = m.name_id WHERE "
                                 "s.value = '"
            + name + "' ORDER BY m.ts_ns DESC LIMIT 1");
        return rows.empty() || !rows[0][0] ? "" : *rows[0][0];
    }
    static int lineOf(const std::string& text) {
        std::ifstream in(kSample);
        std::string line;
        for (int number = 1; std::getline(in, line); ++number)
            if (line.find(text) != std::string::npos) return number;
        ADD_FAILURE() << "no line of " << kSample << " holds " << text;
        return 0;
    }

    tuneup::test::TempDir m_tmp { "tuneup_sync_batchnorm" };
    std::string m_dir = m_tmp.path();
};

TEST_F(SyncBatchnormSampleTest, BatchNormWithEightPerProcessFiresOnEachRank) {
    const std::string dir = record("broken", "");
    for (const char* rank : { "/run.rank0.db", "/run.rank1.db" }) {
        EXPECT_EQ(fact(dir + rank, "tuneup.ddp.world_size"), "2") << rank;
        EXPECT_EQ(fact(dir + rank, "tuneup.ddp.batchnorm_layers"), "2") << rank;
        EXPECT_EQ(fact(dir + rank, "tuneup.ddp.sync_batchnorm_layers"), "0") << rank;
        EXPECT_EQ(fact(dir + rank, "tuneup.dataloader.batch_size"), "8") << rank;
    }
    const auto advice = advise(dir);
    for (const auto& input : advice["inputs"].GetArray())
        EXPECT_GE(input["steps"]["count"].GetInt(), 3) << input["path"].GetString();
    const auto missing = findings(advice, "sync-batchnorm-missing");
    ASSERT_EQ(missing.size(), 2u) << outcome(advice, "sync-batchnorm-missing");
    const int line = lineOf("loader = DataLoader(");
    for (const auto* f : missing) {
        EXPECT_STREQ((*f)["severity"].GetString(), "warning");
        EXPECT_STREQ((*f)["kind"].GetString(), "correctness");
        EXPECT_STREQ((*f)["title"].GetString(),
            "2 BatchNorm layers (recorded) normalise over a per-GPU batch of 8 "
            "on each of 2 processes, without SyncBatchNorm");
        bool named = false;
        for (const auto& site : (*f)["sources"].GetArray())
            named = named || (site["file"].GetString() == kSample && site["line"].GetInt() == line);
        EXPECT_TRUE(named) << "the finding names " << kSample << ":" << line << ", where the DataLoader is made";
    }
    EXPECT_TRUE(findings(advice, "sync-batchnorm-unneeded").empty());
    // The text report shows the finding once for both ranks: the first, as it claims no time to rank them by.
    const std::string text = dir + "/advice.txt";
    const std::string command
        = std::string(TUNEUP_BINARY) + " advise " + dir + "/run.rank0.db " + dir + "/run.rank1.db --all -o " + text;
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    EXPECT_NE(readFile(text).find("shown: rank 0, the first"), std::string::npos) << readFile(text);
}

TEST_F(SyncBatchnormSampleTest, FixedAsksForSyncBatchNormAndIsQuiet) {
    const std::string dir = record("fixed", "--fixed");
    // On the CPU DDP refuses SyncBatchNorm, and the sample says so.
    const std::string out = readFile(dir + "/out.txt");
    EXPECT_NE(out.find("which refused it; no training step runs"), std::string::npos) << out;
    for (const char* rank : { "/run.rank0.db", "/run.rank1.db" }) {
        EXPECT_EQ(fact(dir + rank, "tuneup.ddp.world_size"), "2") << rank;
        EXPECT_EQ(fact(dir + rank, "tuneup.ddp.batchnorm_layers"), "0") << rank;
        EXPECT_EQ(fact(dir + rank, "tuneup.ddp.sync_batchnorm_layers"), "2") << rank;
    }
    const auto advice = advise(dir);
    EXPECT_TRUE(findings(advice, "sync-batchnorm-missing").empty());
    EXPECT_EQ(outcome(advice, "sync-batchnorm-missing"),
        "clean: the model uses SyncBatchNorm (2 SyncBatchNorm layers (recorded))");
    EXPECT_TRUE(findings(advice, "sync-batchnorm-unneeded").empty()) << "8 per process: SyncBatchNorm is worth it";
}

TEST_F(SyncBatchnormSampleTest, SyncBatchNormWithThirtyTwoPerProcessIsUnneeded) {
    // sync-batchnorm-unneeded's pattern, and its fix (plain BatchNorm at the same batch).
    const auto unneeded = advise(record("sync32", "--fixed --batch 32"));
    const auto found = findings(unneeded, "sync-batchnorm-unneeded");
    ASSERT_EQ(found.size(), 2u) << outcome(unneeded, "sync-batchnorm-unneeded");
    for (const auto* f : found) {
        EXPECT_STREQ((*f)["title"].GetString(),
            "2 SyncBatchNorm layers (recorded) share statistics across 2 "
            "processes while each GPU's batch is 32");
        EXPECT_TRUE(std::string((*f)["detail"].GetString()).find("not measured") != std::string::npos);
    }
    const auto plain = advise(record("plain32", "--batch 32"));
    EXPECT_TRUE(findings(plain, "sync-batchnorm-unneeded").empty());
    EXPECT_TRUE(findings(plain, "sync-batchnorm-missing").empty()) << "32 per process is enough for BatchNorm";
    EXPECT_EQ(outcome(plain, "sync-batchnorm-unneeded"),
        "clean: the model DistributedDataParallel wraps has no SyncBatchNorm layers (recorded by tuneup's Python "
        "bootstrap)");
}

} // namespace
