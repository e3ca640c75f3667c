// The torch probes on a real LibTorch program: `tuneup record` runs the mlp_training sample (Debian's
// CPU LibTorch here), whose NVTX step ranges let the agent read torch's settings on the training
// thread. The file must hold what the sample set, and `tuneup advise` must read it back.

#include "sqlite_query.h"
#include "temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace fs = std::filesystem;

namespace {

class TorchProbeTest : public ::testing::Test {
protected:
    // Records the sample with `options`; returns the file.
    std::string record(const std::string& name, const std::string& options, const std::string& trace = "") {
        std::string db = m_dir + "/" + name + ".db";
        const std::string command = std::string(TUNEUP_BINARY) + " record -o " + db
            + (trace.empty() ? "" : " --trace " + trace) + " -- " + TUNEUP_SAMPLE + " --steps 4 " + options + " > "
            + m_dir + "/out.txt 2>&1";
        const int status = std::system(command.c_str());
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
        return db;
    }

    // The first value recorded for a flag, as text ("1", "0", "NULL"), or "" when never recorded.
    static std::string firstValue(tuneup::test::SqliteQuery& q, const std::string& flag) {
        const auto rows = q.rows("SELECT coalesce(f.value, 'NULL') FROM framework_flags f JOIN strings s ON s.id = "
                                 "f.name_id WHERE s.value = '"
            + flag + "' ORDER BY f.ts_ns LIMIT 1");
        return rows.empty() || !rows[0][0] ? "" : *rows[0][0];
    }

    tuneup::test::TempDir m_tmp { "tuneup_torch_probe" };
    std::string m_dir = m_tmp.path();
};

TEST_F(TorchProbeTest, DefaultsAreReadOnTheTrainingThread) {
    const std::string db = record("defaults", "");
    tuneup::test::SqliteQuery q(db);
    ASSERT_TRUE(q.ok()) << q.error();
    // LibTorch's defaults (cuda-capture.md §6): benchmark off, deterministic off, anomaly off,
    // autocast off, profiler off; TF32 for cuDNN on (CPU builds still carry the flag).
    EXPECT_EQ(firstValue(q, "cudnn.benchmark"), "0");
    EXPECT_EQ(firstValue(q, "cudnn.deterministic"), "0");
    EXPECT_EQ(firstValue(q, "autograd.anomaly"), "0");
    EXPECT_EQ(firstValue(q, "autocast.enabled"), "0");
    EXPECT_EQ(firstValue(q, "profiler.enabled"), "0");
    EXPECT_EQ(firstValue(q, "tf32.cudnn"), "1");
    // Read on the thread that emits the NVTX ranges: the sample's main thread.
    const auto threads = q.rows("SELECT DISTINCT f.tid = p.pid FROM framework_flags f, processes p");
    ASSERT_EQ(threads.size(), 1u);
    EXPECT_EQ(threads[0][0], "1");
    // Changes only: the sample changes nothing while it trains, so one reading per flag.
    EXPECT_EQ(q.rows("SELECT name_id FROM framework_flags GROUP BY name_id HAVING count(*) > 1").size(), 0u);
}

TEST_F(TorchProbeTest, SettingsTheProgramTurnedOnAreRecorded) {
    const std::string db = record("on", "--cudnn-benchmark --anomaly");
    tuneup::test::SqliteQuery q(db);
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(firstValue(q, "cudnn.benchmark"), "1");
    EXPECT_EQ(firstValue(q, "autograd.anomaly"), "1");
    EXPECT_EQ(firstValue(q, "cudnn.deterministic"), "0");
}

TEST_F(TorchProbeTest, TraceWithoutTorchRecordsNoFlags) {
    const std::string db = record("off", "--cudnn-benchmark", "nvtx,cuda");
    tuneup::test::SqliteQuery q(db);
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(q.rows("SELECT * FROM framework_flags").size(), 0u);
    EXPECT_GT(q.rows("SELECT * FROM nvtx_ranges").size(), 0u);
}

TEST_F(TorchProbeTest, AdviseReadsTheFlags) {
    // debug-api-enabled fires on anomaly detection recorded on.
    const std::string db = record("anomaly", "--anomaly");
    const std::string out = m_dir + "/advice.json";
    const std::string command = std::string(TUNEUP_BINARY) + " advise " + db + " --format json -o " + out;
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    std::ifstream file(out);
    std::stringstream text;
    text << file.rdbuf();
    const std::string json = text.str();
    EXPECT_NE(json.find("\"rule\": \"debug-api-enabled\""), std::string::npos) << json.substr(0, 2000);
}

} // namespace
