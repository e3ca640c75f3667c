// The Python bootstrap on real PyTorch (the build's torch 2.x; Debian's 1.13 under the label torch1.13):
// `tuneup record` runs samples/python/train_mlp.py; the file must show the DataLoader, zero_grad and step
// ranges torch's profiler would name, the facts as marks, and torch's settings; the bootstrap must chain a user's
// sitecustomize, switch off on request and never change what the program does.

#include "sqlite_query.h"
#include "temp_dir.h"
#include "test_python.h"
#include "tuneup_record.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <optional>
#include <rapidjson/document.h>
#include <set>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

using tuneup::test::readFile;

class PythonBootstrapTest : public ::testing::Test {
protected:
    // `tuneup record -o DIR/NAME.db -- python3 ARGS` with `env` before it; the exit code.
    int record(const std::string& name, const std::string& args, const std::string& env = "") {
        return tuneup::test::tuneupRecord(TUNEUP_BINARY, db(name), tuneup::test::testPython() + " " + args,
            m_dir + "/out.txt", m_dir + "/err.txt", env);
    }
    int train(const std::string& name, const std::string& options, const std::string& env = "") {
        return record(
            name, std::string(TUNEUP_SAMPLES_DIR) + "/python/train_mlp.py --steps 6 --load-ms 0 " + options, env);
    }
    std::string db(const std::string& name) const { return m_dir + "/" + name + ".db"; }
    std::string err() const {
        std::ifstream file(m_dir + "/err.txt");
        std::stringstream text;
        text << file.rdbuf();
        return text.str();
    }

    static int64_t ranges(tuneup::test::SqliteQuery& q, const std::string& name) {
        return q.scalar(
            "SELECT count(*) FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id WHERE s.value = '" + name + "'");
    }
    // The payload of the mark `name` ("" when there is none).
    static std::string fact(tuneup::test::SqliteQuery& q, const std::string& name) {
        const auto rows = q.rows("SELECT m.payload FROM nvtx_marks m JOIN strings s ON s.id = m.name_id WHERE "
                                 "s.value = '"
            + name + "' ORDER BY m.ts_ns DESC LIMIT 1");
        return rows.empty() || !rows[0][0] ? "" : *rows[0][0];
    }
    // Every payload of the mark `name`, in time order, comma-separated.
    static std::string values(tuneup::test::SqliteQuery& q, const std::string& name) {
        std::string all;
        for (const auto& row : q.rows("SELECT m.payload FROM nvtx_marks m JOIN strings s ON s.id = m.name_id WHERE "
                                      "s.value = '"
                 + name + "' ORDER BY m.ts_ns"))
            all += (all.empty() ? "" : ",") + (row[0] ? *row[0] : std::string("NULL"));
        return all;
    }
    static std::string flag(tuneup::test::SqliteQuery& q, const std::string& name) {
        const auto rows = q.rows("SELECT coalesce(f.value, 'NULL') FROM framework_flags f JOIN strings s ON s.id = "
                                 "f.name_id WHERE s.value = '"
            + name + "' ORDER BY f.ts_ns DESC LIMIT 1");
        return rows.empty() || !rows[0][0] ? "" : *rows[0][0];
    }

    tuneup::test::TempDir m_tmp { "tuneup_python_bootstrap" };
    std::string m_dir = m_tmp.path();
};

TEST_F(PythonBootstrapTest, MarksTheTrainingLoopAsTorchProfilerNamesIt) {
    ASSERT_EQ(train("loop", "--set-to-none 0"), 0) << err();
    tuneup::test::SqliteQuery q(db("loop"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(ranges(q, "Optimizer.zero_grad#SGD.zero_grad"), 6);
    EXPECT_EQ(ranges(q, "Optimizer.step#SGD.step"), 6);
    EXPECT_EQ(ranges(q, "tuneup.backward"), 6);
    // The model's outermost call only: the Linear and ReLU layers inside it are not ranges of their own.
    EXPECT_EQ(ranges(q, "tuneup.forward#Sequential"), 6);
    EXPECT_EQ(ranges(q, "tuneup.forward#Linear"), 0);
    // Six batches, then the call that ends the iteration.
    EXPECT_EQ(ranges(q, "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"), 7);
    EXPECT_EQ(q.scalar("SELECT count(*) FROM nvtx_ranges r JOIN nvtx_domains d ON d.id = r.domain_id JOIN strings s "
                       "ON s.id = d.name_id WHERE s.value = 'tuneup'"),
        6 * 5 + 7);
    EXPECT_EQ(fact(q, "tuneup.dataloader.num_workers"), "0");
    EXPECT_EQ(fact(q, "tuneup.dataloader.pin_memory"), "0");
    EXPECT_EQ(fact(q, "tuneup.dataloader.batch_size"), "16"); // train_mlp.py's default
    EXPECT_EQ(fact(q, "tuneup.zero_grad.set_to_none"), "0");
    EXPECT_EQ(fact(q, "tuneup.wrap.data_parallel"), "");
    // The torch version as a number, major * 10000 + minor * 100 + patch (Debian's 1.13: 113xx; 2.13: 213xx).
    const std::string version = fact(q, "tuneup.torch.version");
    EXPECT_EQ(version.size() > 2 ? std::stoi(version) / 100 : -1, tuneup::test::testTorchVersion()) << version;
    // With no workers, the training process makes each batch itself, inside __next__.
    EXPECT_EQ(ranges(q, "tuneup.dataloader.fetch"), 6);
    // The bootstrap's NVTX calls let the torch probes read the settings.
    EXPECT_EQ(flag(q, "cudnn.benchmark"), "0");
    EXPECT_EQ(flag(q, "autograd.anomaly"), "0");
}

TEST_F(PythonBootstrapTest, FactsFollowTheProgram) {
    ASSERT_EQ(train("facts", "--workers 2 --set-to-none 1 --anomaly --cudnn-benchmark --data-parallel"), 0) << err();
    tuneup::test::SqliteQuery q(db("facts"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(fact(q, "tuneup.dataloader.num_workers"), "2");
    EXPECT_EQ(fact(q, "tuneup.zero_grad.set_to_none"), "1");
    EXPECT_EQ(fact(q, "tuneup.wrap.data_parallel"), "1");
    EXPECT_EQ(ranges(q, "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"), 7);
    EXPECT_EQ(flag(q, "cudnn.benchmark"), "1");
    EXPECT_EQ(flag(q, "autograd.anomaly"), "1");
}

TEST_F(PythonBootstrapTest, OptimizerFactsFollowItsSettings) {
    // Adam(foreach=False) and its --fixed twin (foreach=True on the CPU), over 25 layers' weights and biases.
    const std::string sample = std::string(TUNEUP_SAMPLES_DIR) + "/python/unfused_optimizer.py --steps 2 --width 16";
    ASSERT_EQ(record("loop", sample), 0) << err();
    ASSERT_EQ(record("foreach", sample + " --fixed"), 0) << err();
    tuneup::test::SqliteQuery loop(db("loop")), foreach (db("foreach"));
    ASSERT_TRUE(loop.ok() && foreach.ok()) << loop.error() << foreach.error();
    EXPECT_EQ(fact(loop, "tuneup.optimizer.foreach"), "0");
    EXPECT_EQ(fact(foreach, "tuneup.optimizer.foreach"), "1");
    for (auto* q : { &loop, &foreach }) {
        EXPECT_EQ(fact(*q, "tuneup.optimizer.fused"), "0"); // Adam has the option (1.13: fused=False)
        EXPECT_EQ(fact(*q, "tuneup.optimizer.params"), "50");
        EXPECT_EQ(fact(*q, "tuneup.optimizer.family"), "1"); // torch.optim
        EXPECT_EQ(ranges(*q, "Optimizer.step#Adam.step"), 2);
    }

    // foreach left unset: 1.x runs the per-parameter loop (2.x on the CPU too: foreach kernels are CUDA's).
    // An optimizer of the program's own, with no such options: -1, family "other".
    const std::string own = "-c 'import torch\n"
                            "p = [torch.zeros(2, requires_grad=True) for _ in range(3)]\n"
                            "torch.optim.SGD(p, lr=0.1)\n"
                            "class Mine(torch.optim.Optimizer):\n"
                            "    def __init__(self, params):\n"
                            "        super().__init__(params, dict(lr=0.1))\n"
                            "Mine(p[:2])'";
    ASSERT_EQ(record("own", own), 0) << err();
    tuneup::test::SqliteQuery q(db("own"));
    EXPECT_EQ(values(q, "tuneup.optimizer.foreach"), "0,-1");
    // SGD has a fused option from torch 2.0 on (None: off); 1.13's has none, nor has Mine.
    EXPECT_EQ(values(q, "tuneup.optimizer.fused"), tuneup::test::testTorchVersion() >= 200 ? "0,-1" : "-1");
    EXPECT_EQ(values(q, "tuneup.optimizer.params"), "3,2");
    EXPECT_EQ(values(q, "tuneup.optimizer.family"), "1,0");
}

TEST_F(PythonBootstrapTest, GradScalerFactsFollowTheScaler) {
    // The scaler's algorithm on the CPU (what the samples use without GradScaler("cpu")), subclassed with a
    // step that calls the parent's (counted once), over a model whose third and fifth steps overflow; then an
    // update to a given scale, and clipping before and after unscale_.
    const std::string skips = "-c 'import sys, torch\n"
                              "sys.path.insert(0, \"" TUNEUP_SAMPLES_DIR "/python\")\n"
                              "from cpu_grad_scaler import CpuGradScaler\n"
                              "class Mine(CpuGradScaler):\n"
                              "    def step(self, optimizer):\n"
                              "        return super().step(optimizer)\n"
                              "p = torch.nn.Parameter(torch.ones(4))\n"
                              "opt = torch.optim.SGD([p], lr=0.1)\n"
                              "s = Mine(init_scale=1024.0, growth_interval=2)\n"
                              "for i in range(6):\n"
                              "    opt.zero_grad()\n"
                              "    loss = (p * (float(\"inf\") if i in (2, 4) else 1.0)).sum()\n"
                              "    s.scale(loss).backward()\n"
                              "    torch.nn.utils.clip_grad_norm_([p], 1.0)\n"
                              "    if i == 5:\n"
                              "        s.unscale_(opt)\n"
                              "        torch.nn.utils.clip_grad_value_([p], 1.0)\n"
                              "    s.step(opt)\n"
                              "    s.update(8.0 if i == 5 else None)\n"
                              "print(\"scale\", s.get_scale())'";
    ASSERT_EQ(record("skips", skips), 0) << err();
    EXPECT_NE(readFile(m_dir + "/out.txt").find("scale 8.0"), std::string::npos) << readFile(m_dir + "/out.txt");
    EXPECT_EQ(err().find("tuneup: Python bootstrap"), std::string::npos) << err();
    tuneup::test::SqliteQuery q(db("skips"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(values(q, "tuneup.amp.grad_scaler"), "1");
    EXPECT_EQ(values(q, "tuneup.amp.updates"), "1,2,3,4,5,6");
    EXPECT_EQ(values(q, "tuneup.amp.skipped"), "0,1,2");
    // 1024, grown after 2 good steps, halved twice, then set to 8.
    EXPECT_EQ(values(q, "tuneup.amp.scale_milli"), "1024000,2048000,1024000,512000,8000");
    EXPECT_EQ(values(q, "tuneup.amp.clip_before_unscale"), "1,2,3,4,5,6");
    EXPECT_EQ(values(q, "tuneup.amp.clip_after_unscale"), "1");

    // torch.cuda.amp.GradScaler without a GPU disables itself: recorded as such, no updates counted, and
    // clipping is not judged. A scaler stepping something that is not a torch.optim optimizer: skips unknown.
    const std::string disabled = "-c 'import torch, warnings\n"
                                 "warnings.simplefilter(\"ignore\")\n"
                                 "p = torch.nn.Parameter(torch.ones(4))\n"
                                 "opt = torch.optim.SGD([p], lr=0.1)\n"
                                 "s = torch.cuda.amp.GradScaler()\n"
                                 "for i in range(3):\n"
                                 "    s.scale(p.sum()).backward()\n"
                                 "    torch.nn.utils.clip_grad_norm_([p], 1.0)\n"
                                 "    s.step(opt)\n"
                                 "    s.update()\n"
                                 "print(\"enabled\", s.is_enabled())'";
    ASSERT_EQ(record("disabled", disabled), 0) << err();
    EXPECT_NE(readFile(m_dir + "/out.txt").find("enabled False"), std::string::npos);
    tuneup::test::SqliteQuery d(db("disabled"));
    EXPECT_EQ(values(d, "tuneup.amp.grad_scaler"), "0");
    EXPECT_EQ(values(d, "tuneup.amp.updates"), "");
    EXPECT_EQ(values(d, "tuneup.amp.clip_before_unscale"), "");

    const std::string foreign = "-c 'import sys, torch\n"
                                "sys.path.insert(0, \"" TUNEUP_SAMPLES_DIR "/python\")\n"
                                "from cpu_grad_scaler import CpuGradScaler\n"
                                "p = torch.nn.Parameter(torch.ones(4))\n"
                                "class Stepper:\n"
                                "    param_groups = [dict(params=[p])]\n"
                                "    def step(self):\n"
                                "        pass\n"
                                "s = CpuGradScaler()\n"
                                "s.scale(p.sum()).backward()\n"
                                "s.step(Stepper())\n"
                                "s.update()'";
    ASSERT_EQ(record("foreign", foreign), 0) << err();
    tuneup::test::SqliteQuery f(db("foreign"));
    EXPECT_EQ(values(f, "tuneup.amp.skipped"), "-1");
}

TEST_F(PythonBootstrapTest, AnOptimizerItCannotReadIsWarnedAboutOnceAndWorks) {
    // A foreach setting that cannot be read as a bool: the bootstrap says so once, the program goes on.
    const std::string odd = "-c 'import torch\n"
                            "class Odd:\n"
                            "    def __bool__(self):\n"
                            "        raise ValueError(\"odd\")\n"
                            "p = [torch.zeros(2, requires_grad=True)]\n"
                            "for _ in range(3):\n"
                            "    opt = torch.optim.SGD(p, lr=0.1, foreach=Odd())\n"
                            "print(\"made\", len(opt.param_groups))'";
    ASSERT_EQ(record("odd", odd), 0) << err();
    EXPECT_NE(readFile(m_dir + "/out.txt").find("made 1"), std::string::npos) << readFile(m_dir + "/out.txt");
    const std::string warning = "tuneup: Python bootstrap: reading the optimizer's settings: odd";
    const size_t first = err().find(warning);
    EXPECT_NE(first, std::string::npos) << err();
    EXPECT_EQ(err().find(warning, first + 1), std::string::npos) << "once: " << err();
}

TEST_F(PythonBootstrapTest, BatchSizeAndTheBatchNormLayersDdpWraps) {
    // The batch size of each DataLoader iterated: its batch_size, then a batch_sampler's; a loader of
    // batch_size=None says nothing. DDP over gloo (one process): the world size and the model's BatchNorm
    // layers, plain and SyncBatchNorm, also for the model DDP then refuses (SyncBatchNorm on the CPU).
    const std::string script
        = "-c 'import os, torch, torch.distributed as dist\n"
          "from torch.utils.data import DataLoader, BatchSampler, SequentialSampler\n"
          "data = list(range(20))\n"
          "next(iter(DataLoader(data, batch_size=6)))\n"
          "next(iter(DataLoader(data, batch_sampler=BatchSampler(SequentialSampler(data), 5, "
          "False))))\n"
          "next(iter(DataLoader(data, batch_size=None)))\n"
          "os.environ.update(MASTER_ADDR=\"127.0.0.1\", MASTER_PORT=\"29531\")\n"
          "dist.init_process_group(\"gloo\", rank=0, world_size=1)\n"
          "nn = torch.nn\n"
          "model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), "
          "nn.Flatten(), nn.Linear(36, 8), nn.BatchNorm1d(8))\n"
          "model(torch.zeros(2, 3, 5, 5))\n"
          "nn.parallel.DistributedDataParallel(model)\n"
          "try:\n"
          "    nn.parallel.DistributedDataParallel(nn.SyncBatchNorm.convert_sync_batchnorm(model))\n"
          "except ValueError as error:\n"
          "    print(\"refused:\", error)\n"
          "dist.destroy_process_group()'";
    ASSERT_EQ(record("bn", script), 0) << err();
    EXPECT_NE(readFile(m_dir + "/out.txt").find("refused: SyncBatchNorm"), std::string::npos)
        << readFile(m_dir + "/out.txt");
    tuneup::test::SqliteQuery q(db("bn"));
    ASSERT_TRUE(q.ok()) << q.error();
    const auto values = [&](const std::string& name) {
        std::string all;
        for (const auto& row : q.rows("SELECT m.payload FROM nvtx_marks m JOIN strings s ON s.id = m.name_id WHERE "
                                      "s.value = '"
                 + name + "' ORDER BY m.ts_ns"))
            all += (all.empty() ? "" : ",") + (row[0] ? *row[0] : std::string("NULL"));
        return all;
    };
    EXPECT_EQ(values("tuneup.dataloader.batch_size"), "6,5");
    EXPECT_EQ(values("tuneup.ddp.world_size"), "1");
    EXPECT_EQ(values("tuneup.ddp.batchnorm_layers"), "2,0");
    EXPECT_EQ(values("tuneup.ddp.sync_batchnorm_layers"), "0,2");
    EXPECT_EQ(err().find("tuneup: Python bootstrap"), std::string::npos) << err();

    // A model whose layers cannot be listed: said once, and DDP goes on as it would.
    const std::string odd = "-c 'import os, torch, torch.distributed as dist\n"
                            "class Odd(torch.nn.Linear):\n"
                            "    def modules(self):\n"
                            "        raise RuntimeError(\"odd\")\n"
                            "os.environ.update(MASTER_ADDR=\"127.0.0.1\", MASTER_PORT=\"29532\")\n"
                            "dist.init_process_group(\"gloo\", rank=0, world_size=1)\n"
                            "for _ in range(2):\n"
                            "    try:\n"
                            "        torch.nn.parallel.DistributedDataParallel(Odd(2, 2))\n"
                            "    except RuntimeError as error:\n"
                            "        print(\"ddp:\", error)\n"
                            "dist.destroy_process_group()'";
    ASSERT_EQ(record("odd", odd), 0) << err();
    const std::string warning
        = "tuneup: Python bootstrap: reading the BatchNorm layers of the model DistributedDataParallel wraps: odd";
    const size_t first = err().find(warning);
    EXPECT_NE(first, std::string::npos) << err();
    EXPECT_EQ(err().find(warning, first + 1), std::string::npos) << "once: " << err();
}

TEST_F(PythonBootstrapTest, DataLoaderWorkersWriteTheirOwnFilesWithTheBatchesTheyMade) {
    ASSERT_EQ(train("workers", "--workers 2 --load-ms 5"), 0) << err();
    std::vector<std::string> workerFiles;
    for (const auto& entry : fs::directory_iterator(m_dir)) {
        const std::string name = entry.path().filename().string();
        if (name.starts_with("workers.pid") && name.ends_with(".db")) workerFiles.push_back(entry.path().string());
        // Workers end with os._exit, or the parent's SIGTERM: their files are closed all the same.
        EXPECT_FALSE(name.ends_with("-wal") || name.ends_with("-shm")) << name;
    }
    ASSERT_EQ(workerFiles.size(), 2u) << err();
    int64_t batches = 0;
    std::set<std::string> ids;
    for (const std::string& file : workerFiles) {
        tuneup::test::SqliteQuery q(file);
        ASSERT_TRUE(q.ok()) << q.error();
        // The worker said so through the bootstrap: its file, its process row and its domain name say so.
        EXPECT_EQ(q.meta("role"), "dataloader-worker");
        EXPECT_EQ(q.text("SELECT role FROM processes"), "dataloader-worker");
        EXPECT_EQ(q.text("SELECT s.value FROM nvtx_domains d JOIN strings s ON s.id = d.name_id"), "tuneup")
            << "the domain created in the parent is named in the child's file";
        ids.insert(fact(q, "tuneup.dataloader.worker_id"));
        batches += ranges(q, "tuneup.dataloader.fetch");
    }
    EXPECT_EQ(ids, (std::set<std::string> { "0", "1" }));
    EXPECT_EQ(batches, 6); // every batch, made once, by one of the workers
    tuneup::test::SqliteQuery main(db("workers"));
    EXPECT_EQ(ranges(main, "tuneup.dataloader.fetch"), 0);
    EXPECT_EQ(fact(main, "tuneup.dataloader.worker_id"), "");

    // `tuneup advise run*.db` analyses the training process alone: the workers are not ranks.
    const std::string out = m_dir + "/advice.json", notes = m_dir + "/advise.err";
    const std::string command = std::string(TUNEUP_BINARY) + " advise " + db("workers") + " " + workerFiles[0] + " "
        + workerFiles[1] + " --format json -o " + out + " 2> " + notes;
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    rapidjson::Document advice;
    advice.Parse(readFile(out).c_str());
    ASSERT_TRUE(advice.IsObject()) << readFile(out);
    EXPECT_EQ(advice["inputs"].Size(), 1u) << readFile(out).substr(0, 2000);
    EXPECT_NE(readFile(notes).find(workerFiles[0] + " (DataLoader worker)"), std::string::npos) << readFile(notes);
}

TEST_F(PythonBootstrapTest, DataLoaderStallSaysWhatTheMainThreadDidWhileItWaited) {
    // The agent samples the main thread: with workers it waits on their pipe; without, it makes each
    // batch itself, here sleeping (the sample's dataset sleeps --load-ms per sample, like slow storage).
    for (const auto& [workers, expected] :
        { std::pair { "2", "waiting to read (pipe, socket, file)" }, std::pair { "0", "sleeping" } }) {
        const std::string name = std::string("stall") + workers;
        ASSERT_EQ(train(name, std::string("--load-ms 5 --workers ") + workers), 0) << err();
        const std::string out = m_dir + "/" + name + ".json";
        const std::string command
            = std::string(TUNEUP_BINARY) + " advise " + db(name) + " --format json -o " + out + " 2>/dev/null";
        ASSERT_EQ(std::system(command.c_str()), 0) << command;
        rapidjson::Document advice;
        advice.Parse(readFile(out).c_str());
        ASSERT_TRUE(advice.IsObject()) << readFile(out);
        std::string sampled;
        for (const auto& f : advice["findings"].GetArray())
            if (std::string(f["rule"].GetString()) == "dataloader-stall"
                && f["evidence"]["facts"].HasMember("main thread during the waits (sampled)"))
                sampled = f["evidence"]["facts"]["main thread during the waits (sampled)"].GetString();
        // Mostly that activity: it comes first, with most of the time.
        EXPECT_EQ(sampled.find(std::string("% ") + expected), sampled.find('%')) << workers << ": " << sampled;
        EXPECT_NE(sampled.find('%'), std::string::npos) << workers << ": " << sampled;
        EXPECT_GE(std::atoi(sampled.c_str()), 60) << workers << ": " << sampled;
    }
}

TEST_F(PythonBootstrapTest, AdviseFindsStepsAndAnomalyDetection) {
    ASSERT_EQ(train("advise", "--anomaly"), 0) << err();
    const std::string out = m_dir + "/advice.json";
    const std::string command = std::string(TUNEUP_BINARY) + " advise " + db("advise") + " --format json -o " + out;
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    std::ifstream file(out);
    std::stringstream text;
    text << file.rdbuf();
    const std::string json = text.str();
    EXPECT_NE(json.find("\"rule\": \"debug-api-enabled\""), std::string::npos) << json.substr(0, 3000);
    EXPECT_NE(json.find("optimizer ranges"), std::string::npos) << json.substr(0, 3000);
}

TEST_F(PythonBootstrapTest, SwitchedOffLeavesNoTuneupRanges) {
    ASSERT_EQ(train("off", "", "TUNEUP_PYTHON_BOOTSTRAP=0"), 0) << err();
    tuneup::test::SqliteQuery q(db("off"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(q.scalar("SELECT count(*) FROM nvtx_ranges"), 0);
    EXPECT_EQ(q.scalar("SELECT count(*) FROM nvtx_marks"), 0);
}

TEST_F(PythonBootstrapTest, ChainsTheUsersSitecustomize) {
    fs::create_directory(m_dir + "/user");
    std::ofstream(m_dir + "/user/sitecustomize.py")
        << "open(" << '"' << m_dir << "/user/ran" << '"' << ", 'w').write('yes')\n";
    ASSERT_EQ(record("chain", "-c 'import sys; print(sys.argv)'", "PYTHONPATH=" + m_dir + "/user"), 0) << err();
    EXPECT_TRUE(fs::exists(m_dir + "/user/ran")) << err();
}

TEST_F(PythonBootstrapTest, TheProgramsOwnOutcomeIsKept) {
    // Its exit code, its exceptions (raised inside a wrapped call) and its stderr are its own.
    EXPECT_EQ(record("exit", "-c 'import torch; raise SystemExit(3)'"), 3) << err();
    const std::string failing
        = "-c 'import torch\nclass Boom(torch.optim.SGD):\n    def step(self, closure=None):\n        raise "
          "KeyError(\"mine\")\nopt = Boom([torch.zeros(1, requires_grad=True)], lr=0.1)\nopt.step()'";
    EXPECT_EQ(record("raise", failing), 1);
    EXPECT_NE(err().find("KeyError: 'mine'"), std::string::npos) << err();
    EXPECT_EQ(err().find("tuneup: Python bootstrap"), std::string::npos) << err();
}

// ---- GPU memory: the caching allocator after each optimizer step ----------------------------------

TEST_F(PythonBootstrapTest, GpuMemoryIsNotReadWithoutCuda) {
    // A CPU torch (Debian's) never initialises CUDA: nothing is read, nothing is said, max_memory_* are as torch
    // answers them.
    ASSERT_EQ(train("cpu", "--set-to-none 1"), 0) << err();
    ASSERT_EQ(record("cpu_max",
                  "-c 'import torch; print(torch.cuda.max_memory_allocated(0), "
                  "torch.cuda.max_memory_reserved(0), torch.cuda.is_initialized())'"),
        0)
        << err();
    EXPECT_NE(readFile(m_dir + "/out.txt").find("0 0 False"), std::string::npos) << readFile(m_dir + "/out.txt");
    tuneup::test::SqliteQuery q(db("cpu"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(ranges(q, "Optimizer.step#SGD.step"), 6);
    EXPECT_EQ(q.scalar("SELECT count(*) FROM memory_events"), 0);
    EXPECT_EQ(q.scalar("SELECT count(*) FROM memory_peaks"), 0);
    EXPECT_EQ(err().find("tuneup: Python bootstrap"), std::string::npos) << err();
}

// A program whose torch reports an initialised CUDA with a caching allocator (torch's own functions, over
// allocator statistics this script keeps: no GPU here): GPU 0 keeps 2 GB allocated between steps and peaks at
// 5, 6, 7, 8 GB within them, 12 GB reserved; GPU 1 is never used. It prints what its own calls answer.
const char* kFakeAllocator = R"PY(import torch, torch.cuda.memory as memory
GB = 1000 ** 3
stats = {0: [2 * GB, 12 * GB, 2 * GB, 12 * GB], 1: [0, 0, 0, 0]}  # current, reserved, their peaks
def nested(device):
    a, r, pa, pr = stats[device]
    return {"allocated_bytes": {"all": {"current": a, "peak": pa}}, "reserved_bytes": {"all": {"current": r, "peak": pr}}}
def reset(device):
    s = stats[device]
    s[2], s[3] = s[0], s[1]
torch._C._cuda_memoryStats = nested
torch._C._cuda_resetPeakMemoryStats = reset
torch.cuda.is_initialized = memory.is_initialized = lambda: True
torch.cuda.device_count = lambda: 2
w = torch.zeros(4, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for step in range(4):
    opt.zero_grad()
    stats[0][2] = max(stats[0][2], (5 + step) * GB)  # this step's activations
    (w * 2).sum().backward()
    opt.step()
print("peak", torch.cuda.max_memory_allocated(0) // GB, torch.cuda.max_memory_reserved(0) // GB)
torch.cuda.reset_peak_memory_stats(0)
print("after reset", torch.cuda.max_memory_allocated(0) // GB)
)PY";

TEST_F(PythonBootstrapTest, GpuMemoryIsReadAfterEachOptimizerStep) {
    std::ofstream(m_dir + "/fake_allocator.py") << kFakeAllocator;
    ASSERT_EQ(record("memory", m_dir + "/fake_allocator.py"), 0) << err();
    EXPECT_EQ(err().find("tuneup: Python bootstrap"), std::string::npos) << err();
    // The program's own max_memory_allocated still answers since its own last reset (8 GB, not the last
    // step's), and its reset is its own.
    EXPECT_NE(readFile(m_dir + "/out.txt").find("peak 8 12\nafter reset 2\n"), std::string::npos)
        << readFile(m_dir + "/out.txt");

    tuneup::test::SqliteQuery q(db("memory"));
    ASSERT_TRUE(q.ok()) << q.error();
    // One reading per step on GPU 0 (GPU 1 unused): the totals then, and the peaks since the last reading.
    const auto readings = q.rows("SELECT device_id, source, delta_bytes, delta_of, allocated_bytes, reserved_bytes, "
                                 "memory_kind, tid IS NOT NULL FROM memory_events ORDER BY ts_ns");
    ASSERT_EQ(readings.size(), 4u);
    for (const auto& row : readings)
        EXPECT_EQ(row,
            (std::vector<std::optional<std::string>> { "0", "2", "0", "1", "2000000000", "12000000000", "3", "1" }));
    const auto peaks = q.rows("SELECT device_id, allocated_bytes, reserved_bytes FROM memory_peaks ORDER BY end_ns");
    ASSERT_EQ(peaks.size(), 4u);
    for (int s = 0; s < 4; ++s)
        EXPECT_EQ(peaks[size_t(s)],
            (std::vector<std::optional<std::string>> { "0", std::to_string((5 + s) * 1000000000ll), "12000000000" }));
    // Each window begins where the previous one ended (the first when the bootstrap started), and ends after
    // its step's Optimizer.step range.
    EXPECT_EQ(q.scalar("SELECT count(*) FROM memory_peaks p WHERE start_ns < end_ns AND start_ns >= coalesce("
                       "(SELECT max(end_ns) FROM memory_peaks o WHERE o.end_ns < p.end_ns), 0)"),
        4);
    EXPECT_EQ(q.scalar("SELECT count(*) FROM memory_peaks p WHERE (SELECT count(*) FROM nvtx_ranges r JOIN strings "
                       "s ON s.id = r.name_id WHERE s.value = 'Optimizer.step#SGD.step' AND r.end_ns <= p.end_ns) = "
                       "(SELECT count(*) FROM memory_peaks o WHERE o.end_ns <= p.end_ns)"),
        4);

    // With the GPU CUPTI would have described (an H100 80GB), memory-headroom reads the steps' peaks: 12 GB
    // reserved of 85 GB, 2 GB kept, up to 8 GB allocated.
    q.rows("INSERT INTO devices (id, name, compute_major, compute_minor, sm_count, global_memory_bytes) VALUES "
           "(0, 'NVIDIA H100 80GB HBM3', 9, 0, 132, 85020000000)");
    const std::string out = m_dir + "/memory.json";
    const std::string command
        = std::string(TUNEUP_BINARY) + " advise " + db("memory") + " --all --format json -o " + out;
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    const std::string json = readFile(out);
    const size_t rule = json.find("\"rule\": \"memory-headroom\"");
    ASSERT_NE(rule, std::string::npos) << json.substr(0, 3000);
    const std::string finding = json.substr(rule, 4000);
    EXPECT_NE(finding.find("GPU memory peaks at 12 GB of 85 GB (14%) per step"), std::string::npos) << finding;
    EXPECT_NE(finding.find("max_memory_allocated"), std::string::npos) << finding;
}

} // namespace
