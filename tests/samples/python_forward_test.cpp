// The Python bootstrap's forward marker and torch-version probes on real PyTorch (Debian's python3-torch
// 1.13, CPU): a depth per thread, only the top module, no transforms or batch-making modules, nothing while
// torch.compile traces; and TF32 as the program set it.

#include "sqlite_query.h"
#include "temp_dir.h"

#include <cstdlib>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace {

class PythonForwardTest : public ::testing::Test {
protected:
    // Records `script` (Python source) under `tuneup record`; returns the exit code.
    int record(const std::string& name, const std::string& script) {
        const std::string file = m_dir + "/" + name + ".py";
        std::ofstream(file) << script;
        const std::string command = std::string(TUNEUP_BINARY) + " record -o " + db(name) + " -- " + TUNEUP_PYTHON + " "
            + file + " > " + m_dir + "/out.txt 2> " + m_dir + "/err.txt";
        const int status = std::system(command.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
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
    static int64_t forwardRanges(tuneup::test::SqliteQuery& q) {
        return q.scalar("SELECT count(*) FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id WHERE s.value LIKE "
                        "'tuneup.forward#%'");
    }
    static std::string flag(tuneup::test::SqliteQuery& q, const std::string& name) {
        const auto rows = q.rows("SELECT coalesce(f.value, 'NULL') FROM framework_flags f JOIN strings s ON s.id = "
                                 "f.name_id WHERE s.value = '"
            + name + "' ORDER BY f.ts_ns DESC LIMIT 1");
        return rows.empty() || !rows[0][0] ? "" : *rows[0][0];
    }

    tuneup::test::TempDir m_tmp { "tuneup_python_forward" };
    std::string m_dir = m_tmp.path();
};

TEST_F(PythonForwardTest, DepthIsPerThread) {
    // Thread B is inside its model when the main thread runs and finishes its own; B's layer called
    // afterwards is still inside B's model, not a forward pass (one counter for all threads marked it).
    ASSERT_EQ(record("threads", R"(
import threading, torch
from torch import nn
inside, go = threading.Event(), threading.Event()
class Slow(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        inside.set()
        go.wait()
        return self.lin(x)
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        return self.lin(x)
x = torch.randn(2, 4)
b = threading.Thread(target=lambda: Slow()(x))
b.start()
inside.wait()
Model()(x)
go.set()
b.join()
)"),
        0)
        << err();
    tuneup::test::SqliteQuery q(db("threads"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(ranges(q, "tuneup.forward#Slow"), 1);
    EXPECT_EQ(ranges(q, "tuneup.forward#Model"), 1);
    EXPECT_EQ(ranges(q, "tuneup.forward#Linear"), 0);
    EXPECT_EQ(q.scalar("SELECT count(DISTINCT tid) FROM nvtx_ranges"), 2);
}

TEST_F(PythonForwardTest, TransformsReplicasAndBatchModulesAreNotForwards) {
    ASSERT_EQ(record("transforms", R"(
import threading, torch
from torch import nn
class Normalize(nn.Module):  # as torchvision.transforms.v2 defines its transforms
    def forward(self, x):
        return (x - x.mean()) / (x.std() + 1)
Normalize.__module__ = "torchvision.transforms.v2._misc"
class Jitter(nn.Module):  # the program's own augmentation, run while a batch is made
    def forward(self, x):
        return x + 0.01
class Data(torch.utils.data.Dataset):
    def __len__(self):
        return 8
    def __getitem__(self, i):
        return Jitter()(torch.full((4,), float(i)))
model = nn.Sequential(nn.Linear(4, 4))
for batch in torch.utils.data.DataLoader(Data(), batch_size=4):
    model(Normalize()(batch))
replica = model._replicate_for_data_parallel()  # what DataParallel runs on its worker threads
t = threading.Thread(target=lambda: replica(torch.randn(2, 4)))
t.start()
t.join()
)"),
        0)
        << err();
    tuneup::test::SqliteQuery q(db("transforms"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(ranges(q, "tuneup.forward#Sequential"), 2) << "the model, once per batch";
    EXPECT_EQ(forwardRanges(q), 2);
    EXPECT_EQ(ranges(q, "tuneup.dataloader.fetch"), 2);
}

TEST_F(PythonForwardTest, NothingWhileTorchCompileTraces) {
    // torch 1.13 has no torch.compiler: a stand-in module is what the bootstrap finds at `import torch`.
    ASSERT_EQ(record("compiling", R"(
import sys, types
compiling = [False]
compiler = types.ModuleType("torch.compiler")
compiler.is_compiling = lambda: compiling[0]
sys.modules["torch.compiler"] = compiler
import torch
from torch import nn
model = nn.Sequential(nn.Linear(4, 4))
x = torch.randn(2, 4)
model(x)
compiling[0] = True
model(x)
model(x)
compiling[0] = False
model(x)
)"),
        0)
        << err();
    tuneup::test::SqliteQuery q(db("compiling"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(ranges(q, "tuneup.forward#Sequential"), 2);
}

TEST_F(PythonForwardTest, WithoutTorchCompilerEveryCallIsMarked) {
    ASSERT_EQ(record("plain", R"(
import torch
from torch import nn
assert not hasattr(torch, "compiler") or hasattr(torch.compiler, "is_compiling")
model = nn.Sequential(nn.Linear(4, 4))
for _ in range(3):
    model(torch.randn(2, 4))
)"),
        0)
        << err();
    tuneup::test::SqliteQuery q(db("plain"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(ranges(q, "tuneup.forward#Sequential"), 3);
    EXPECT_EQ(err().find("tuneup: Python bootstrap"), std::string::npos) << err();
}

TEST_F(PythonForwardTest, Tf32AsTheProgramSetIt) {
    // torch 1.13: the legacy getters, which follow set_float32_matmul_precision.
    ASSERT_EQ(record("tf32", R"(
import torch
from torch import nn
torch.set_float32_matmul_precision("high")
torch.backends.cudnn.allow_tf32 = False
nn.Sequential(nn.Linear(4, 4))(torch.randn(2, 4))
)"),
        0)
        << err();
    tuneup::test::SqliteQuery q(db("tf32"));
    ASSERT_TRUE(q.ok()) << q.error();
    EXPECT_EQ(flag(q, "tf32.cublas"), "1");
    EXPECT_EQ(flag(q, "tf32.cudnn"), "0");
}

} // namespace
