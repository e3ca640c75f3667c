// The events of a Kineto trace are cut into windows, parsed on several threads and merged: any window
// size and any number of threads give the same model, and errors keep their offsets.

#include "kineto_test_support.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace tuneup::analysis;
using namespace tuneup::test::kineto;

// ---- windows: the events are cut into windows, parsed on several threads and merged ---------------------

namespace {

// Everything a model holds, as text (columns byte for byte): two imports agree when these do.
std::string modelText(const TraceModel& m) {
    std::ostringstream out;
    auto table = [&out](const char* name, const auto& t) {
        out << name << ' ' << t.size() << '\n';
        t.forEachColumn([&out](const auto& column) {
            out.write(reinterpret_cast<const char*>(column.data()),
                static_cast<std::streamsize>(column.size() * sizeof(column[0])));
        });
    };
    table("kernels", m.kernels);
    table("memcpys", m.memcpys);
    table("memsets", m.memsets);
    table("syncs", m.syncs);
    table("apiCalls", m.apiCalls);
    table("cpuOps", m.cpuOps);
    table("annotations", m.annotations);
    table("gpuAnnotations", m.gpuAnnotations);
    table("collectives", m.collectives);
    table("flows", m.flows);
    table("counterRanges", m.counterRanges);
    table("counterValues", m.counterValues);
    table("pythonFunctions", m.pythonFunctions);
    table("memoryEvents", m.memoryEvents);
    for (StringId id = 0; id < m.strings.size(); ++id)
        out << m.str(id) << '\n';
    for (const auto& t : m.threads)
        out << "thread " << t.pid << ' ' << t.tid << ' ' << t.name << '\n';
    for (const auto& p : m.processes)
        out << "process " << p.pid << ' ' << p.name << ' ' << p.labels << '\n';
    for (const auto& d : m.devices)
        out << "device " << d.id << ' ' << d.name << '\n';
    for (const auto& w : m.info.profilerWindows)
        out << "window " << w.startNs << ' ' << w.endNs << '\n';
    for (const auto& [k, v] : m.info.metadata)
        out << "meta " << k << '=' << v << '\n';
    out << "vendor " << int(m.info.vendor) << " base " << m.info.baseTimeNs.value_or(-1) << " legacy "
        << m.info.legacyArrayForm << " events " << m.stats.eventsRead << " bytes " << m.stats.bytesRead << '\n';
    for (const auto& e : m.stats.entries())
        out << "stat " << e.name << ' ' << e.value << '\n';
    for (const auto& [k, v] : m.stats.unknownCategories)
        out << "unknown " << k << ' ' << v << '\n';
    for (const auto& n : m.stats.notes)
        out << "note " << n << '\n';
    return out.str();
}

// Flows whose halves are far apart (in other windows), names given after the events they name and
// again later, string and numeric flow ids, and events of every kind.
std::string tracePartsMustMeet(int events) {
    std::string text = R"({"traceEvents": [)";
    for (int i = 0; i < events; ++i) {
        const std::string n = std::to_string(i), ts = std::to_string(i * 10) + ".5";
        text += R"({"ph": "X", "cat": "kernel", "name": "k)" + std::to_string(i % 13)
            + R"(", "pid": 0, "tid": 7, "ts": )" + ts
            + R"(, "dur": 2, "args": {"device": 0, "stream": 7, "correlation": )" + n + "}},\n";
        text += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": )"
            + std::to_string(i % 3) + R"(, "ts": )" + ts + R"(, "dur": 1, "args": {"correlation": )" + n + "}},";
        text += R"({"ph": "X", "cat": "cpu_op", "name": "op)" + std::to_string(i % 7)
            + R"(", "pid": 1, "tid": "main", "ts": )" + ts + R"(, "dur": 5, "args": {"Input Dims": [[)" + n
            + R"(, 2], []], "Input type": ["float"]}},)";
        if (i % 5 == 0)
            text += R"({"ph": "s", "id": )" + std::to_string(i / 5) + R"(, "pid": 1, "tid": 1, "ts": )" + ts
                + R"(, "cat": "ac2g"},)";
        if (i % 5 == 0 && i >= 100)
            text += R"({"ph": "f", "id": )" + std::to_string(i / 5 - 20) + R"(, "pid": 0, "tid": 7, "ts": )" + ts
                + R"(, "cat": "ac2g", "bp": "e"},)";
        if (i % 97 == 0)
            text += R"({"ph": "f", "id": "s)" + std::to_string(i)
                + R"(", "pid": 0, "tid": 7, "ts": 1, "cat": "fwdbwd"},)"
                + R"({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 0, "ts": )" + ts
                + R"(, "dur": 1, "args": {"Collective name": "allreduce", "dtype": "Float"}},)"
                + R"({"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL", "pid": 0, "tid": 8, "ts": )"
                + ts + R"(, "dur": 1},)";
        if (i % 211 == 0)
            text += R"({"ph": "M", "name": "thread_name", "pid": 1, "tid": )" + std::to_string(i % 3)
                + R"(, "args": {"name": "thread )" + n + R"("}},)"
                + R"({"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "python )" + n + R"("}},)"
                + R"({"ph": "X", "cat": "cuda_profiler_range", "name": "k1", "pid": 0, "tid": 7, "ts": )" + ts
                + R"(, "dur": 1, "args": {"metric.sum": )" + n + "}},";
    }
    text += R"({"ph": "s", "id": "s0", "pid": 1, "tid": 1, "ts": 2, "cat": "fwdbwd"}], "baseTimeNanoseconds": 1000})";
    return text;
}

} // namespace

TEST(KinetoJsonWindows, AnyWindowSizeGivesTheSameModel) {
    // Windows of one element each on small traces; on real ones, windows of a few events and the default.
    struct Input {
        std::string name, bytes;
        std::vector<size_t> windowBytes;
    };
    std::vector<Input> inputs = { { "synthetic.json", std::string(kSynthetic), { 1, 100, 0 } },
        { "parts.json", tracePartsMustMeet(500), { 1, 1000 } },
        { "parts.json.gz", gzipBytes(tracePartsMustMeet(3000)), { 5000, 0 } } };
    if (fs::is_directory(kTraces))
        for (const char* relative :
            { "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz",
                "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json",
                "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/"
                "worker0_span1.pt.trace.json.gz",
                "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz" })
            inputs.push_back({ relative, readFile(kTraces / relative), { 5000, 0 } });
    for (const auto& [name, bytes, sizes] : inputs) {
        SCOPED_TRACE(name);
        KinetoImportOptions whole; // one window, read on this thread: as the importer read before windows
        whole.background = false;
        whole.windowBytes = size_t(1) << 40;
        const std::string expected = modelText(importKinetoJsonBytes(bytes, name, whole));
        EXPECT_GT(expected.size(), 1000u);
        for (size_t windowBytes : sizes)
            for (int threads : { 0, 1, 3 }) {
                KinetoImportOptions options;
                options.windowBytes = windowBytes;
                options.background = threads > 0;
                options.parsingThreads = threads;
                EXPECT_EQ(modelText(importKinetoJsonBytes(bytes, name, options)), expected)
                    << windowBytes << " bytes per window, " << threads << " threads";
            }
    }
    const TraceModel m = importKinetoJsonBytes(tracePartsMustMeet(3000), "parts.json");
    EXPECT_EQ(m.flows.size(), 580u + 1u); // starts 0..579 met their ends 100 events later; "s0" at the end
    EXPECT_EQ(m.stats.value("flows_unpaired"), 20 + 30); // starts 580..599, string ends but "s0"
    EXPECT_EQ(m.processes.at(0).name, "python 2954"); // the last name given
    EXPECT_EQ(m.cpuOps.size(), 3000u + 31u);
}

// Small enough for TSan (label "threads"): windows handed to three workers, parts merged in order,
// and a failing window among others in flight.
TEST(KinetoJsonThreads, WindowsOnSeveralThreadsAgree) {
    const std::string text = tracePartsMustMeet(1500);
    KinetoImportOptions whole;
    whole.background = false;
    whole.windowBytes = size_t(1) << 40;
    const std::string expected = modelText(importKinetoJsonBytes(text, "parts.json", whole));
    KinetoImportOptions threaded;
    threaded.windowBytes = 4096;
    threaded.parsingThreads = 3;
    EXPECT_EQ(modelText(importKinetoJsonBytes(gzipBytes(text), "parts.json", threaded)), expected);

    std::string bad = text;
    const size_t at = bad.find("\"ts\"", bad.size() / 2);
    bad[at + 4] = ' '; // "ts" 123: the first of several errors
    bad[bad.size() - 100] = '!';
    const ImportError e = expectImportError([&] { importKinetoJsonBytes(bad, "bad.json", threaded); });
    EXPECT_EQ(e.kind(), ImportError::Kind::Malformed) << e.what();
    EXPECT_EQ(e.offset(), at + 6) << e.what(); // at the value that follows without a colon
}

TEST(KinetoJsonWindows, ErrorsInALaterWindowKeepTheirOffset) {
    const std::string text = tracePartsMustMeet(20000);
    ASSERT_GT(text.size(), size_t(4) << 20);
    KinetoImportOptions small;
    small.windowBytes = 64 * 1024;
    for (bool gzip : { false, true }) {
        SCOPED_TRACE(gzip ? "gzip" : "plain");
        std::string bad = text;
        const size_t at = bad.find("\"cat\"", bad.size() * 3 / 4);
        bad[at + 5] = ';'; // "cat"; "kernel"
        const ImportError e
            = expectImportError([&] { importKinetoJsonBytes(gzip ? gzipBytes(bad) : bad, "bad.json", small); });
        EXPECT_EQ(e.kind(), ImportError::Kind::Malformed) << e.what();
        EXPECT_EQ(e.offset(), at + 5) << e.what();
        std::string before = bad.substr(at + 5 - 32, 32);
        std::replace(before.begin(), before.end(), '\n', ' '); // as messages show control bytes
        EXPECT_NE(std::string(e.what()).find(R"(near ")" + before + "<HERE>; "), std::string::npos) << e.what();

        const std::string cut = text.substr(0, text.size() * 2 / 3);
        const ImportError t
            = expectImportError([&] { importKinetoJsonBytes(gzip ? gzipBytes(cut) : cut, "cut.json", small); });
        EXPECT_EQ(t.kind(), ImportError::Kind::Truncated) << t.what();
        EXPECT_EQ(t.offset(), cut.size()) << t.what();
    }
    // A '}' in place of the array's ']': reported where it is, as by one parser reading all.
    std::string wrong = text;
    wrong[wrong.rfind(']')] = '}';
    const ImportError w = expectImportError([&] { importKinetoJsonBytes(wrong, "wrong.json", small); });
    EXPECT_EQ(w.kind(), ImportError::Kind::Malformed);
    EXPECT_EQ(w.offset(), text.rfind(']'));
    EXPECT_NE(std::string(w.what()).find("Missing a comma or ']' after an array element"), std::string::npos)
        << w.what();
}

TEST(KinetoJsonWindows, ProgressAboutOncePerMiB) {
    const std::string text = tracePartsMustMeet(20000);
    std::vector<uint64_t> seen;
    KinetoImportOptions options;
    options.progress = [&seen](uint64_t bytes) { seen.push_back(bytes); };
    importKinetoJsonBytes(gzipBytes(text), "progress.json.gz", options);
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back(), text.size());
    EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
    EXPECT_GE(seen.size(), text.size() >> 20);
    EXPECT_LE(seen.size(), (text.size() >> 20) + 3);
}
