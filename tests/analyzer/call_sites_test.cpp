// Which line of the user's Python code a finding's events come from (advise/call_sites.h), on small traces
// built in the test; the real BERT trace is job_test's.

#include "advise/call_sites.h"
#include "model/trace_builder.h"

#include <gtest/gtest.h>

using namespace tuneup::analysis;

TEST(CallSites, FramesAsTheProfilerNamesThem) {
    const auto frame = parsePythonFrame("transformers/models/bert/modeling_bert.py(412): forward");
    ASSERT_TRUE(frame);
    EXPECT_EQ(frame->file, "transformers/models/bert/modeling_bert.py");
    EXPECT_EQ(frame->line, 412);
    EXPECT_EQ(frame->function, "forward");
    const auto odd = parsePythonFrame("/home/me/my (copy)/train.py(7): <lambda>");
    ASSERT_TRUE(odd);
    EXPECT_EQ(odd->file, "/home/me/my (copy)/train.py");
    EXPECT_EQ(odd->function, "<lambda>");
    for (const char* notAFrame : { "<built-in method item of Tensor object at 0x7f00>", "nn.Module: BertModel_0",
             "train.py(x): f", "train.py(-3): f", "(12): f", "" })
        EXPECT_FALSE(parsePythonFrame(notAFrame)) << notAFrame;
}

TEST(CallSites, UserFramesAreNeitherPyTorchNorPythonsOwn) {
    for (const char* user : { "train.py", "/home/me/project/train.py", "transformers/models/bert/modeling_bert.py",
             "moca/library/profiling/profile.py", "data/augment.py" })
        EXPECT_TRUE(isUserFrame(user)) << user;
    for (const char* library :
        { "torch/nn/modules/module.py", "torchvision/transforms/functional.py", "triton/runtime/jit.py", "inspect.py",
            "enum.py", "threading.py", "importlib/__init__.py", "<frozen os>", "<string>",
            "/usr/lib/python3.11/json/decoder.py", "/opt/venv/lib/python3.12/site-packages/numpy/core/fromnumeric.py" })
        EXPECT_FALSE(isUserFrame(library)) << library;
}

namespace {

// Python frames and CPU ops on two threads.
class Trace {
public:
    Trace& frame(const char* name, int64_t start, int64_t end, int tid = 1) {
        PythonFunction f;
        f.startNs = start;
        f.endNs = end;
        f.thread = m_b.thread(1, tid);
        f.name = m_b.intern(name);
        m_b.addPythonFunction(f);
        return *this;
    }
    Trace& op(const char* name, int64_t start, int tid = 1) {
        CpuOp o;
        o.startNs = start;
        o.endNs = start + 1;
        o.thread = m_b.thread(1, tid);
        o.name = m_b.intern(name);
        o.externalId = ++m_externalId;
        m_b.addCpuOp(o);
        return *this;
    }
    // A kernel launched by the last op.
    Trace& kernel(int64_t start) {
        Kernel k;
        k.startNs = start;
        k.endNs = start + 10;
        k.name = m_b.intern("vectorized_elementwise_kernel");
        k.externalId = m_externalId;
        m_b.addKernel(k);
        return *this;
    }
    TraceModel model() { return m_b.finish(); }

private:
    TraceBuilder m_b { SourceFormat::KinetoJson, "synthetic" };
    uint64_t m_externalId = 0;
};

} // namespace

TEST(CallSites, EachEventGoesToTheInnermostUserFrameAroundIt) {
    const TraceModel m = Trace()
                             .frame("train.py(40): main", 0, 1000)
                             .frame("train.py(57): train_step", 100, 900)
                             .frame("torch/_tensor.py(30): item", 110, 130) // PyTorch's: skipped
                             .op("aten::item", 120)
                             .kernel(500)
                             .frame("train.py(60): log", 200, 220) // ended before the next op
                             .op("aten::item", 300)
                             .kernel(600)
                             .frame("train.py(90): evaluate", 950, 990)
                             .op("aten::item", 960)
                             .op("aten::item", 2000) // outside every frame
                             .op("aten::item", 150, 2) // another thread, no frames there
                             .model();
    Evidence evidence;
    for (size_t i = 0; i < m.cpuOps.size(); ++i)
        evidence.events.push_back({ EventTable::CpuOp, RowIndex(i) });
    evidence.events.push_back({ EventTable::Kernel, 0 }); // launched by the op at 120: train_step
    const auto sites = CallSites(m).of(evidence);
    ASSERT_EQ(sites.size(), 2u);
    EXPECT_EQ(sites[0].file, "train.py");
    EXPECT_EQ(sites[0].line, 57);
    EXPECT_EQ(sites[0].function, "train_step");
    EXPECT_EQ(sites[0].events, 3u); // the ops at 120 and 300, the kernel
    EXPECT_DOUBLE_EQ(sites[0].share, 0.75);
    EXPECT_EQ(sites[1].line, 90);
    EXPECT_EQ(sites[1].events, 1u);

    EXPECT_EQ(CallSites(m).of(evidence, 1).size(), 1u);
    EXPECT_TRUE(CallSites(Trace().op("aten::item", 5).model()).of(evidence).empty()); // no Python stacks
}
