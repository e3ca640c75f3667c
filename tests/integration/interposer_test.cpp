// The GEMM and convolution interposers in real processes: tests/clients/library_client loads
// library_calls (linked against the toolkit's real cuBLAS, cuBLASLt and cuDNN) RTLD_GLOBAL or RTLD_LOCAL,
// as Python loads torch, and calls them with the shapes of tests/clients/library_cases.h under the agent.
// No GPU: every call fails inside the real library (no handle), after the agent saw its arguments. Checked:
// every recorded field, the returned status, outermost calls only (cuBLAS's and cuDNN's logging callbacks
// run calls from inside library calls), the RTLD_LOCAL case, a disabled agent, and the agent's exports.

#include "injection.h"
#include "library_cases.h"
#include "sqlite_query.h"

#include <algorithm>
#include <cstdio>
#include <cudnn.h>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sstream>

using namespace tuneup::test;
using namespace std::chrono_literals;

namespace {

// The status of a cuDNN call without a handle, as cuDNN's headers number it.
const std::string kBadParam = std::to_string(CUDNN_STATUS_BAD_PARAM);

std::optional<std::string> value(int64_t v) {
    return v == kNone ? std::nullopt : std::optional<std::string>(std::to_string(v));
}

// "word word ... N" lines of the client's output, by their leading words.
std::map<std::string, std::vector<std::string>> outputLines(const std::string& out) {
    std::map<std::string, std::vector<std::string>> lines;
    std::istringstream in(out);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string first, second;
        words >> first >> second;
        std::vector<std::string> rest;
        for (std::string w; words >> w;)
            rest.push_back(w);
        lines[first + " " + second] = rest;
    }
    return lines;
}

class InterposerTest : public ::testing::Test {
protected:
    // Runs the client under the agent; expects exit code 0. Returns its stdout.
    std::string run(const std::string& mode, const std::vector<std::string>& scenarios,
        const InjectOptions& options = {}, const std::string& label = "run") {
        std::vector<std::string> argv { TUNEUP_TEST_LIBRARY_CLIENT, TUNEUP_TEST_LIBRARY_CALLS, mode };
        argv.insert(argv.end(), scenarios.begin(), scenarios.end());
        m_before = monotonicNs();
        InjectedProcess process(m_dir, argv, options, label);
        EXPECT_TRUE(process.wait(120s));
        m_after = monotonicNs();
        EXPECT_EQ(process.exitCode(), 0) << process.err();
        m_pid = process.pid();
        m_err = process.err();
        return process.out();
    }

    std::unique_ptr<SqliteQuery> open() {
        auto q = std::make_unique<SqliteQuery>(m_dir.base());
        EXPECT_TRUE(q->ok()) << q->error();
        return q;
    }

    // Every GEMM row matches library_cases.h and the status the client saw.
    void expectGemmRows(SqliteQuery& q, const std::string& out) {
        const auto printed = outputLines(out);
        const auto rows = q.rows("SELECT s.value, g.api, transa, transb, m, n, k, batch, a_type, b_type, c_type, "
                                 "compute_type, lda, ldb, ldc, stride_a, stride_b, stride_c, epilogue, external_id, "
                                 "status, tid FROM gemm_calls g JOIN strings s ON s.id = g.name_id ORDER BY g.id");
        const size_t gemms = std::size(kGemmCases), lts = std::size(kLtCases);
        ASSERT_EQ(rows.size(), gemms + lts);
        for (size_t i = 0; i < gemms; ++i) {
            const GemmCase& c = kGemmCases[i];
            const auto status = printed.find(std::string("gemm ") + c.function);
            ASSERT_NE(status, printed.end()) << c.function;
            EXPECT_EQ(rows[i],
                (Row { c.function, "1", value(c.transa), value(c.transb), value(c.m), value(c.n), value(c.k),
                    value(c.batch), value(c.aType), value(c.bType), value(c.cType), value(c.computeType), value(c.lda),
                    value(c.ldb), value(c.ldc), value(c.strideA), value(c.strideB), value(c.strideC), std::nullopt,
                    std::nullopt, status->second.at(0), std::to_string(m_pid) }))
                << c.function;
        }
        for (size_t i = 0; i < lts; ++i) {
            const LtCase& c = kLtCases[i];
            const auto status = printed.find(std::string("lt ") + c.what);
            ASSERT_NE(status, printed.end()) << c.what;
            EXPECT_EQ(rows[gemms + i],
                (Row { "cublasLtMatmul", "2", value(c.transa), value(c.transb), value(c.m), value(c.n), value(c.k),
                    value(c.batch), value(c.aType), value(c.bType), value(c.cType), value(c.computeType), value(c.lda),
                    value(c.ldb), value(c.ldc), value(c.strideA), value(c.strideB), value(c.strideC), value(c.epilogue),
                    std::nullopt, status->second.at(0), std::to_string(m_pid) }))
                << c.what;
        }
        // Times: within the run, on the one clock, never negative.
        EXPECT_EQ(q.scalar("SELECT count(*) FROM gemm_calls WHERE end_ns < start_ns OR start_ns < "
                      + std::to_string(m_before) + " OR end_ns > " + std::to_string(m_after)),
            0);
        EXPECT_EQ(q.scalar("SELECT count(*) FROM gemm_calls g JOIN gemm_apis a ON a.code = g.api "
                           "JOIN data_types t ON t.code = g.a_type"),
            int64_t(gemms + lts))
            << "every code has a name in the lookup tables";
    }

    TempDir m_dir;
    uint64_t m_before = 0, m_after = 0;
    pid_t m_pid = 0;
    std::string m_err;
};

// The shape columns of conv_calls, in the order of the rows below.
const char* kConvColumns = "SELECT s.value, c.api, call_kind, direction, n, c, d, h, w, k, filter_c, t, r, s, pad_h, "
                           "pad_w, stride_h, stride_w, dilation_h, dilation_w, groups, data_type, compute_type, "
                           "math_type, layout, algo, algo_source, plan_id, status FROM conv_calls c "
                           "JOIN strings s ON s.id = c.name_id ";

Row convRow(const std::string& function, int api, int kind, int direction, const ConvCase& c, int mathType, int layout,
    const std::optional<std::string>& algo, int source, const std::optional<std::string>& plan,
    const std::string& status) {
    auto v = [](int64_t x) { return std::optional<std::string>(std::to_string(x)); };
    return Row { function, v(api), v(kind), v(direction), v(c.n), v(c.c), std::nullopt, v(c.h), v(c.w), v(c.k),
        v(c.c / c.groups), std::nullopt, v(c.r), v(c.s), v(c.padH), v(c.padW), v(c.strideH), v(c.strideW),
        v(c.dilationH), v(c.dilationW), v(c.groups), v(2), v(0), mathType < 0 ? std::nullopt : v(mathType), v(layout),
        algo, v(source), plan, status };
}

} // namespace

TEST_F(InterposerTest, GemmCallsAreRecordedWithEveryField) {
    const std::string out = run("global", { "gemm", "lt" });
    auto q = open();
    expectGemmRows(*q, out);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM conv_calls"), 0);
    EXPECT_EQ(q->stat("events.dropped"), 0);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM threads WHERE tid = " + std::to_string(m_pid)), 1);
}

TEST_F(InterposerTest, LibrariesLoadedRtldLocalAreRecordedToo) {
    // dlsym(RTLD_NEXT) cannot see them: the agent finds them among the loaded objects.
    const std::string out = run("local", { "gemm", "lt" }, { true, true, { { "TUNEUP_LOG", "debug" } } });
    EXPECT_NE(m_err.find("(not in the global scope: loaded RTLD_LOCAL)"), std::string::npos) << m_err;
    auto q = open();
    expectGemmRows(*q, out);
}

TEST_F(InterposerTest, LegacyConvolutionsWithHowTheirAlgorithmWasChosen) {
    const std::string out = run("local", { "legacy" });
    const auto printed = outputLines(out);
    auto q = open();
    const auto rows = q->rows(std::string(kConvColumns) + "ORDER BY c.id");
    ASSERT_EQ(rows.size(), 14u);
    const ConvCase& c = kLegacyConv;
    const std::string& bad = kBadParam; // no handle
    // Runs: the algorithm is passed in (given).
    EXPECT_EQ(rows[0], convRow("cudnnConvolutionForward", 1, 1, 1, c, 1, 1, "1", 3, std::nullopt, bad));
    EXPECT_EQ(rows[1], convRow("cudnnConvolutionBackwardData", 1, 1, 2, c, 1, 1, "1", 3, std::nullopt, bad));
    EXPECT_EQ(rows[2], convRow("cudnnConvolutionBackwardFilter", 1, 1, 3, c, 1, 1, "1", 3, std::nullopt, bad));
    EXPECT_EQ(rows[3], convRow("cudnnConvolutionBiasActivationForward", 1, 1, 1, c, 1, 1, "1", 3, std::nullopt, bad));
    // The autotuner's search (failed: no result, no algorithm).
    const char* finds[] = { "cudnnFindConvolutionForwardAlgorithm", "cudnnFindConvolutionForwardAlgorithmEx",
        "cudnnFindConvolutionBackwardDataAlgorithm", "cudnnFindConvolutionBackwardDataAlgorithmEx",
        "cudnnFindConvolutionBackwardFilterAlgorithm", "cudnnFindConvolutionBackwardFilterAlgorithmEx" };
    for (int i = 0; i < 6; ++i)
        EXPECT_EQ(rows[size_t(4 + i)], convRow(finds[i], 1, 2, 1 + i / 2, c, 1, 1, std::nullopt, 1, std::nullopt, bad))
            << finds[i];
    // The heuristics answer (from a zeroed handle): their first pick is recorded.
    const std::pair<const char*, const char*> heuristics[]
        = { { "cudnnGetConvolutionForwardAlgorithm_v7", "heuristic forward" },
              { "cudnnGetConvolutionBackwardDataAlgorithm_v7", "heuristic backward_data" },
              { "cudnnGetConvolutionBackwardFilterAlgorithm_v7", "heuristic backward_filter" } };
    for (int i = 0; i < 3; ++i) {
        const auto& answer = printed.at(heuristics[i].second); // status, results, first pick
        ASSERT_EQ(answer.size(), 3u);
        EXPECT_EQ(rows[size_t(10 + i)],
            convRow(heuristics[i].first, 1, 3, 1 + i, c, 1, 1, answer[2], 2, std::nullopt, answer[0]));
    }
    // Grouped, dilated, channels last.
    EXPECT_EQ(rows[13], convRow("cudnnConvolutionForward", 1, 1, 1, kGroupedConv, 1, 2, "0", 3, std::nullopt, bad));
    EXPECT_EQ(q->scalar("SELECT count(*) FROM gemm_calls"), 0);
}

TEST_F(InterposerTest, BackendPlansAreRecordedWithTheirEngineAndPlan) {
    run("local", { "backend" });
    auto q = open();
    const auto rows = q->rows(std::string(kConvColumns) + "ORDER BY c.id");
    ASSERT_EQ(rows.size(), 4u) << "the heuristics query and three runs; the bare plan is no convolution";
    const ConvCase& c = kBackendConv;
    EXPECT_EQ(rows[0], convRow("cudnnBackendFinalize", 2, 3, 1, c, -1, 1, std::nullopt, 2, std::nullopt, "0"));
    const std::string e0 = std::to_string(kBackendEngines[0]), e1 = std::to_string(kBackendEngines[1]);
    EXPECT_EQ(rows[1], convRow("cudnnBackendExecute", 2, 1, 1, c, -1, 1, e0, 3, "1", kBadParam));
    EXPECT_EQ(rows[2], convRow("cudnnBackendExecute", 2, 1, 1, c, -1, 1, e1, 3, "2", kBadParam));
    EXPECT_EQ(rows[3], convRow("cudnnBackendExecute", 2, 1, 1, c, -1, 1, e1, 3, "2", kBadParam));
}

TEST_F(InterposerTest, OnlyTheOutermostCallOnAThreadIsRecorded) {
    // cuBLAS's logger and cuDNN's callback run inside their library calls; library_calls makes calls from
    // there (a cuBLASLt matmul inside cublasSgemm; a cublasSgemm and a matmul inside cudnnConvolutionForward).
    const auto printed = outputLines(run("local", { "nested" }));
    ASSERT_EQ(printed.at("nested blas"), (std::vector<std::string> { "1", "1" })) << "one call made inside";
    ASSERT_EQ(printed.at("nested cudnn"), (std::vector<std::string> { kBadParam, "2" })) << "two calls made inside";
    auto q = open();
    EXPECT_EQ(q->rows("SELECT s.value, m, n, k FROM gemm_calls g JOIN strings s ON s.id = g.name_id"),
        (std::vector<Row> { { "cublasSgemm_v2", "7", "7", "7" } }));
    EXPECT_EQ(q->rows("SELECT s.value, algo FROM conv_calls c JOIN strings s ON s.id = c.name_id"),
        (std::vector<Row> { { "cudnnConvolutionForward", "7" } }));
}

TEST_F(InterposerTest, DisabledOrDeselectedAgentOnlyForwards) {
    const std::string plain = run("local", { "gemm", "lt", "legacy", "backend" }, { false, true, {} }, "plain");
    const std::string disabled
        = run("local", { "gemm", "lt", "legacy", "backend" }, { true, true, { { "TUNEUP_DISABLE", "1" } } }, "off");
    EXPECT_EQ(disabled, plain) << "the same statuses, through the agent";
    EXPECT_TRUE(m_dir.traceFiles().empty());
    const std::string nvtxOnly
        = run("local", { "gemm", "lt", "legacy", "backend" }, { true, true, { { "TUNEUP_TRACE", "nvtx" } } }, "nvtx");
    EXPECT_EQ(nvtxOnly, plain);
    auto q = open();
    EXPECT_EQ(q->scalar("SELECT count(*) FROM gemm_calls"), 0);
    EXPECT_EQ(q->scalar("SELECT count(*) FROM conv_calls"), 0);
}

TEST_F(InterposerTest, RecordedFileReadsBackInTuneupInfo) {
    run("local", { "all" });
    FILE* pipe = popen((std::string(TUNEUP_TEST_CLI) + " info " + m_dir.base() + " 2>&1").c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string info;
    char buffer[4096];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe))
        info.append(buffer, n);
    EXPECT_EQ(pclose(pipe), 0) << info;
    const size_t gemms = std::size(kGemmCases) + std::size(kLtCases) + 1; // + nested's outer call
    auto countOf = [&](const std::string& table) -> long long {
        const size_t at = info.find("    " + table + " ");
        return at == std::string::npos ? -1 : std::stoll(info.substr(at + 4 + table.size()));
    };
    EXPECT_EQ(countOf("gemm_calls"), (long long)gemms) << info;
    EXPECT_EQ(countOf("conv_calls"), 19) << info; // legacy 14, backend 4, nested's outer call 1
}

TEST(AgentExports, OnlyEntryPointsAndInterposedFunctions) {
    FILE* pipe = popen(("nm -D --defined-only " + agentPath()).c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::set<std::string> exported;
    char line[512];
    while (fgets(line, sizeof line, pipe)) {
        std::istringstream words(line);
        std::string address, type, name;
        if (words >> address >> type >> name) exported.insert(name.substr(0, name.find('@')));
    }
    ASSERT_EQ(pclose(pipe), 0);
    std::set<std::string> expected { "InitializeInjection", "InitializeInjectionNvtx2", "tuneup_agent_flush",
        "tuneup_range_push", "tuneup_range_pop", "tuneup_mark", "_exit", "_Exit",
        // the Python bootstrap's call sites (python_sites.h)
        "tuneup_python_sample_ms", "tuneup_python_name", "tuneup_python_calls", "tuneup_python_samples",
        // and its readings of PyTorch's caching allocator
        "tuneup_memory_reading",
        // libc: signal dispositions and exec (libc_interposer.cpp)
        "sigaction", "signal", "bsd_signal", "sysv_signal", "execve", "execv", "execvp", "execvpe", "execl", "execle",
        "execlp", "fexecve", "execveat",
        // libc: no library unloaded while the native stack sampler unwinds through it (dlclose_interposer.cpp)
        "dlclose",
        // CUPTI set up by another client, torch.profiler (cupti_interposer.cpp)
        "cuptiSubscribe", "cuptiSubscribe_v2", "cuptiActivityRegisterCallbacks", "cuptiActivityEnable",
        "cuptiActivityDisable", "cuptiActivityRegisterTimestampCallback", "cuptiFinalize",
        // cuBLASLt descriptors and matmul
        "cublasLtMatmul", "cublasLtMatrixLayoutCreate", "cublasLtMatrixLayoutInit_internal",
        "cublasLtMatrixLayoutDestroy", "cublasLtMatrixLayoutSetAttribute", "cublasLtMatmulDescCreate",
        "cublasLtMatmulDescInit_internal", "cublasLtMatmulDescDestroy", "cublasLtMatmulDescSetAttribute",
        // cuDNN legacy
        "cudnnConvolutionForward", "cudnnConvolutionBackwardData", "cudnnConvolutionBackwardFilter",
        "cudnnConvolutionBiasActivationForward", "cudnnFindConvolutionForwardAlgorithm",
        "cudnnFindConvolutionForwardAlgorithmEx", "cudnnFindConvolutionBackwardDataAlgorithm",
        "cudnnFindConvolutionBackwardDataAlgorithmEx", "cudnnFindConvolutionBackwardFilterAlgorithm",
        "cudnnFindConvolutionBackwardFilterAlgorithmEx", "cudnnGetConvolutionForwardAlgorithm_v7",
        "cudnnGetConvolutionBackwardDataAlgorithm_v7", "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
        // cuDNN backend
        "cudnnBackendCreateDescriptor", "cudnnBackendDestroyDescriptor", "cudnnBackendSetAttribute",
        "cudnnBackendGetAttribute", "cudnnBackendFinalize", "cudnnBackendExecute" };
    for (const GemmCase& c : kGemmCases) // every cuBLAS GEMM the test client calls
        expected.insert(c.function);
    EXPECT_EQ(exported, expected);
}
