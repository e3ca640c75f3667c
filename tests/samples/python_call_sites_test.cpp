// Call sites from the Python bootstrap on real PyTorch (Debian's python3-torch, CPU): `tuneup record` notes the
// line of the user's code behind each call it watches and samples the main thread's Python stack; `tuneup advise`
// names those lines in its findings. The lines are looked up in the sample's text, so the tests follow its edits.

#include "sqlite_query.h"
#include "temp_dir.h"
#include "tuneup_record.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

using tuneup::test::readFile;

const std::string kTrainMlp = std::string(TUNEUP_SAMPLES_DIR) + "/python/train_mlp.py";

// The number of the first line of `file` that contains `text`; 0 when none does.
int lineOf(const std::string& file, const std::string& text) {
    std::ifstream in(file);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number)
        if (line.find(text) != std::string::npos) return number;
    ADD_FAILURE() << "no line of " << file << " contains " << text;
    return 0;
}

class PythonCallSitesTest : public ::testing::Test {
protected:
    // `tuneup record -o DIR/NAME.db -- python3 ARGS` with `env` before it; the exit code.
    int record(const std::string& name, const std::string& args, const std::string& env = "") {
        return tuneup::test::tuneupRecord(TUNEUP_BINARY, db(name), std::string(TUNEUP_PYTHON) + " " + args,
            m_dir + "/out.txt", m_dir + "/err.txt", env);
    }
    std::string db(const std::string& name) const { return m_dir + "/" + name + ".db"; }
    std::string out() const { return readFile(m_dir + "/out.txt"); }
    std::string err() const { return readFile(m_dir + "/err.txt"); }

    rapidjson::Document advise(const std::string& name) {
        const std::string json = m_dir + "/" + name + ".json";
        const std::string command
            = std::string(TUNEUP_BINARY) + " advise " + db(name) + " --all --format json -o " + json + " 2>/dev/null";
        EXPECT_EQ(std::system(command.c_str()), 0) << command;
        rapidjson::Document advice;
        advice.Parse(readFile(json).c_str());
        EXPECT_TRUE(advice.IsObject()) << readFile(json);
        return advice;
    }
    static const rapidjson::Value* finding(const rapidjson::Document& advice, const std::string& rule) {
        for (const auto& f : advice["findings"].GetArray())
            if (f["rule"].GetString() == rule) return &f;
        return nullptr;
    }
    // The source of `f` at `line` of train_mlp.py that is (not) sampled; nullptr when there is none.
    static const rapidjson::Value* source(const rapidjson::Value& f, int line, bool sampled) {
        for (const auto& s : f["sources"].GetArray())
            if (s["line"].GetInt() == line && s["sampled"].GetBool() == sampled
                && std::string(s["file"].GetString()) == kTrainMlp)
                return &s;
        return nullptr;
    }
    // The watched calls named `call` at `line` in the file's python_calls.
    static int64_t callsAt(tuneup::test::SqliteQuery& q, const std::string& call, int line) {
        return q.scalar("SELECT count(*) FROM python_calls p JOIN strings c ON c.id = p.call_id WHERE c.value = '"
            + call + "' AND p.line = " + std::to_string(line));
    }

    tuneup::test::TempDir m_tmp { "tuneup_python_call_sites" };
    std::string m_dir = m_tmp.path();
};

TEST_F(PythonCallSitesTest, FindingsNameTheLinesOfTheTrainingScript) {
    ASSERT_EQ(record("mlp", kTrainMlp + " --steps 6 --load-ms 5 --workers 0 --anomaly"), 0) << err();
    tuneup::test::SqliteQuery q(db("mlp"));
    ASSERT_TRUE(q.ok()) << q.error();
    // Every watched call of the loop, at its line, with the function it is in.
    EXPECT_EQ(callsAt(q, "Optimizer.zero_grad", lineOf(kTrainMlp, "optimizer.zero_grad(")), 6);
    EXPECT_EQ(callsAt(q, "Optimizer.step", lineOf(kTrainMlp, "optimizer.step()")), 6);
    EXPECT_EQ(callsAt(q, "Tensor.backward", lineOf(kTrainMlp, "loss.backward()")), 6);
    EXPECT_EQ(callsAt(q, "DataLoader.__next__", lineOf(kTrainMlp, "for inputs, targets in loader:")), 7);
    EXPECT_EQ(q.text("SELECT DISTINCT s.value FROM python_calls p JOIN strings s ON s.id = p.file_id"), kTrainMlp);
    EXPECT_EQ(q.text("SELECT DISTINCT s.value FROM python_calls p JOIN strings c ON c.id = p.call_id JOIN strings s "
                     "ON s.id = p.function_id WHERE c.value = 'Optimizer.step'"),
        "main");
    EXPECT_EQ(q.scalar("SELECT count(*) FROM python_calls WHERE tid <> CAST((SELECT value FROM meta WHERE key = 'pid') "
                       "AS INTEGER)"),
        0);

    const rapidjson::Document advice = advise("mlp");
    // The DataLoader waits: the loop that asks for batches, the line that made the loader (where num_workers
    // goes), and where the main thread was meanwhile: making the batch itself, in the dataset's sleep.
    const rapidjson::Value* stall = finding(advice, "dataloader-stall");
    ASSERT_TRUE(stall) << readFile(m_dir + "/mlp.json").substr(0, 3000);
    const auto* loop = source(*stall, lineOf(kTrainMlp, "for inputs, targets in loader:"), false);
    ASSERT_TRUE(loop);
    EXPECT_STREQ((*loop)["function"].GetString(), "main");
    EXPECT_STREQ((*loop)["call"].GetString(), "");
    const auto* made = source(*stall, lineOf(kTrainMlp, "loader = DataLoader("), false);
    ASSERT_TRUE(made);
    EXPECT_STREQ((*made)["call"].GetString(), "DataLoader");
    const auto* sleeping = source(*stall, lineOf(kTrainMlp, "time.sleep(self.load_ms"), true);
    ASSERT_TRUE(sleeping);
    EXPECT_STREQ((*sleeping)["function"].GetString(), "SlowDataset.__getitem__");
    EXPECT_GE((*sleeping)["share"].GetDouble(), 0.6);
    EXPECT_TRUE((*stall)["evidence"]["facts"].HasMember("main thread's code during the waits (sampled)"));

    // Anomaly detection: the line that switched it on.
    const rapidjson::Value* anomaly = finding(advice, "debug-api-enabled");
    ASSERT_TRUE(anomaly);
    ASSERT_GE((*anomaly)["sources"].Size(), 1u);
    const auto& on = (*anomaly)["sources"][0];
    EXPECT_EQ(on["line"].GetInt(), lineOf(kTrainMlp, "torch.autograd.set_detect_anomaly(args.anomaly)"));
    EXPECT_STREQ(on["call"].GetString(), "torch.autograd.set_detect_anomaly");

    // The text report says it too.
    const std::string text = m_dir + "/mlp.txt";
    ASSERT_EQ(std::system((std::string(TUNEUP_BINARY) + " advise " + db("mlp") + " -o " + text).c_str()), 0);
    EXPECT_NE(readFile(text).find("meanwhile: " + kTrainMlp + ":" + std::to_string(lineOf(kTrainMlp, "time.sleep("))
                  + " in SlowDataset.__getitem__ (sampled: "),
        std::string::npos)
        << readFile(text);
}

TEST_F(PythonCallSitesTest, LibrariesAreSkippedAndTheProgramIsUnchanged) {
    // A helper in an installed package converts a tensor: the line is the user's call of the helper. 3000 calls
    // are handed over in batches; an exception raised inside a watched call reaches the program as it was; a
    // CPU tensor's .item() returns too fast to have done GPU work and is not noted.
    fs::create_directories(m_dir + "/venv/lib/python3/site-packages");
    std::ofstream(m_dir + "/venv/lib/python3/site-packages/helper.py")
        << "import torch\ndef widen(t):\n    return t.to(torch.float64)\n";
    const std::string script = m_dir + "/main.py";
    std::ofstream(script) << "import sys\n"
                          << "sys.path.insert(0, '" << m_dir << "/venv/lib/python3/site-packages')\n"
                          << "import torch, helper\n"
                          << "t = torch.ones(100000)\n"
                          << "total = sum(helper.widen(t)[0].item() for _ in range(3000))  # the line\n"
                          << "try:\n"
                          << "    t.to('no-such-device')\n"
                          << "except RuntimeError:\n"
                          << "    print('kept')\n"
                          << "print(int(total))\n";
    ASSERT_EQ(record("lib", script), 0) << err();
    EXPECT_EQ(out(), "kept\n3000\n");
    EXPECT_EQ(err().find("tuneup: Python bootstrap"), std::string::npos) << err();
    tuneup::test::SqliteQuery q(db("lib"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(callsAt(q, "Tensor.to", 5), 3000);
    EXPECT_EQ(q.text("SELECT DISTINCT s.value FROM python_calls p JOIN strings c ON c.id = p.call_id JOIN strings s "
                     "ON s.id = p.function_id WHERE c.value = 'Tensor.to' AND p.line = 5"),
        "<genexpr>");
    // A few may be noted where the machine preempted the call; not most.
    EXPECT_LT(callsAt(q, "Tensor.item", 5), 300);
    EXPECT_EQ(callsAt(q, "Tensor.to", 7), 1);
    EXPECT_EQ(q.scalar("SELECT count(*) FROM python_calls p JOIN strings s ON s.id = p.file_id WHERE s.value LIKE "
                       "'%site-packages%'"),
        0);
    EXPECT_EQ(q.scalar("SELECT value FROM stats WHERE name = 'events.dropped'"), 0);
}

TEST_F(PythonCallSitesTest, SamplingFollowsTheAgentsPeriod) {
    const std::string args = kTrainMlp + " --steps 4 --load-ms 5 --workers 0";
    ASSERT_EQ(record("off", args, "TUNEUP_SAMPLE_MS=0"), 0) << err();
    tuneup::test::SqliteQuery off(db("off"));
    EXPECT_EQ(off.scalar("SELECT count(*) FROM python_samples"), 0);
    EXPECT_GT(off.scalar("SELECT count(*) FROM python_calls"), 0) << "call sites do not depend on sampling";

    ASSERT_EQ(record("on", args, "TUNEUP_SAMPLE_MS=2"), 0) << err();
    tuneup::test::SqliteQuery on(db("on"));
    // 4 steps of 16 samples of 5 ms: about 160 samples at 2 ms; a loaded machine makes fewer.
    EXPECT_GE(on.scalar("SELECT count(*) FROM python_samples"), 20);
    EXPECT_EQ(on.scalar("SELECT count(DISTINCT tid) FROM python_samples"), 1);
    EXPECT_EQ(on.scalar("SELECT count(*) FROM python_samples WHERE tid <> CAST((SELECT value FROM meta WHERE key = "
                        "'pid') AS INTEGER)"),
        0)
        << "the main thread only";
}

TEST_F(PythonCallSitesTest, DataLoaderWorkersKeepTheirOwnCallSites) {
    // Forked workers start with none of the parent's records and name their files' strings themselves.
    ASSERT_EQ(record("workers", kTrainMlp + " --steps 4 --load-ms 2 --workers 2"), 0) << err();
    tuneup::test::SqliteQuery main(db("workers"));
    EXPECT_EQ(callsAt(main, "DataLoader.__next__", lineOf(kTrainMlp, "for inputs, targets in loader:")), 5);
    EXPECT_EQ(callsAt(main, "Optimizer.step", lineOf(kTrainMlp, "optimizer.step()")), 4);
    for (const auto& entry : fs::directory_iterator(m_dir)) {
        const std::string name = entry.path().filename().string();
        if (!name.starts_with("workers.pid") || !name.ends_with(".db")) continue;
        tuneup::test::SqliteQuery worker(entry.path().string());
        EXPECT_EQ(worker.scalar("SELECT count(*) FROM python_calls p JOIN strings c ON c.id = p.call_id WHERE "
                                "c.value IN ('Optimizer.step', 'DataLoader.__next__', 'DataLoader')"),
            0)
            << name;
        EXPECT_EQ(worker.scalar("SELECT count(*) FROM python_calls WHERE file_id IS NULL OR call_id IS NULL"), 0);
        EXPECT_EQ(worker.scalar("SELECT count(*) FROM python_samples"), 0) << "workers are not sampled";
    }
}

} // namespace
