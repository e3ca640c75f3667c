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
    // A call the Python bootstrap watched, made from `name`'s line (tuneup recordings).
    Trace& call(const char* call, const char* name, int64_t start, int64_t end) {
        PythonFunction f;
        f.startNs = start;
        f.endNs = end;
        f.thread = m_b.thread(1, 1);
        f.name = m_b.intern(name);
        f.call = m_b.intern(call);
        m_b.addPythonFunction(f);
        return *this;
    }
    // A sample of the main thread's Python.
    Trace& sample(const char* name, int64_t time) {
        m_b.addPythonSample({ time, m_b.thread(1, 1), m_b.intern(name) });
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

TEST(CallSites, WatchedCallsGiveTheLinesTheyWereMadeFrom) {
    // Recorded frames are the user's by construction, wherever the user keeps the code (a path isUserFrame
    // would take for Python's own library).
    const TraceModel m
        = Trace()
              .call("torch.autograd.set_detect_anomaly", "/home/me/lib/python_tools/train.py(12): main", 10, 20)
              .call("torch.autograd.detect_anomaly", "/home/me/lib/python_tools/train.py(30): step", 100, 200)
              .call("torch.autograd.detect_anomaly", "/home/me/lib/python_tools/train.py(30): step", 300, 400)
              .call("Tensor.item", "/home/me/lib/python_tools/train.py(31): step", 150, 160)
              .op("aten::item", 155)
              .model();
    const CallSites sites(m);
    const auto anomaly = sites.ofCalls({ "torch.autograd.set_detect_anomaly", "torch.autograd.detect_anomaly" });
    ASSERT_EQ(anomaly.size(), 2u);
    EXPECT_EQ(anomaly[0].line, 30);
    EXPECT_EQ(anomaly[0].events, 2u);
    EXPECT_EQ(anomaly[0].call, "torch.autograd.detect_anomaly");
    EXPECT_EQ(anomaly[1].line, 12);
    EXPECT_EQ(anomaly[1].call, "torch.autograd.set_detect_anomaly");
    EXPECT_FALSE(anomaly[0].sampled);
    EXPECT_TRUE(sites.ofCalls({ "torch.autograd.gradcheck" }).empty()); // never called
    EXPECT_TRUE(sites.ofCalls({}).empty());

    // An event inside a watched call goes to its line: the innermost frame around it.
    Evidence evidence;
    evidence.events.push_back({ EventTable::CpuOp, 0 });
    const auto item = sites.of(evidence);
    ASSERT_EQ(item.size(), 1u);
    EXPECT_EQ(item[0].file, "/home/me/lib/python_tools/train.py");
    EXPECT_EQ(item[0].line, 31);
    EXPECT_TRUE(item[0].call.empty());
}

TEST(CallSites, SampledSitesCountTheSamplesInsideTheSpansOnce) {
    const TraceModel m = Trace()
                             .sample("data/augment.py(88): resize", 5) // before every span
                             .sample("data/augment.py(88): resize", 10)
                             .sample("data/augment.py(88): resize", 20)
                             .sample("train.py(57): train_step", 25)
                             .sample("data/augment.py(88): resize", 40) // between the spans
                             .sample("train.py(57): train_step", 55)
                             .sample("data/augment.py(88): resize", 60) // the span's end is not in it
                             .model();
    // Spans out of order and overlapping, as rules hand them over (biggest first).
    const SampledSites sampled = sampledSites(m, { { 50, 60 }, { 10, 30 }, { 15, 28 } });
    EXPECT_EQ(sampled.samples, 4u);
    ASSERT_EQ(sampled.sites.size(), 2u);
    EXPECT_EQ(sampled.sites[0].file, "data/augment.py");
    EXPECT_EQ(sampled.sites[0].line, 88);
    EXPECT_EQ(sampled.sites[0].function, "resize");
    EXPECT_EQ(sampled.sites[0].events, 2u);
    EXPECT_DOUBLE_EQ(sampled.sites[0].share, 0.5);
    EXPECT_TRUE(sampled.sites[0].sampled);
    EXPECT_EQ(sampled.sites[1].line, 57);
    EXPECT_EQ(describeSampledSites(sampled, 1), "50% data/augment.py:88 in resize (4 samples)");

    EXPECT_TRUE(sampledSites(m, {}).sites.empty());
    EXPECT_TRUE(sampledSites(m, { { 100, 200 } }).sites.empty());
    EXPECT_EQ(describeSampledSites(sampledSites(m, { { 100, 200 } })), "");
    EXPECT_TRUE(sampledSites(Trace().op("aten::item", 5).model(), { { 0, 100 } }).sites.empty()); // no samples
}

// A native program's samples can name one line under two functions (an inlined function, and its caller where the
// debug information says so): one site, named by the function with the most samples, and ranked by all of them
// (here above a line with as many samples as the larger name alone).
TEST(CallSites, SampledSitesAreLinesWhateverTheFunctionNamesThem) {
    const TraceModel m = Trace()
                             .sample("/src/loader.cpp(21): decode", 1)
                             .sample("/src/loader.cpp(21): decode", 2)
                             .sample("/src/loader.cpp(21): SlowDataset::get(unsigned long)", 3)
                             .sample("/src/train.cpp(82): train(int, char**)", 4)
                             .sample("/src/train.cpp(82): train(int, char**)", 5)
                             .model();
    const SampledSites sampled = sampledSites(m, { { 0, 10 } });
    ASSERT_EQ(sampled.sites.size(), 2u);
    EXPECT_EQ(sampled.sites[0].file, "/src/loader.cpp");
    EXPECT_EQ(sampled.sites[0].line, 21);
    EXPECT_EQ(sampled.sites[0].function, "decode");
    EXPECT_EQ(sampled.sites[0].events, 3u);
    EXPECT_DOUBLE_EQ(sampled.sites[0].share, 0.6);
    EXPECT_EQ(sampled.sites[1].line, 82);
    EXPECT_EQ(sampledSites(m, { { 0, 10 } }, 1).sites.size(), 1u);
}
