// The analysis done on several threads gives what one thread gives: parallelFor itself (every piece once,
// the first exception in piece order), TraceBuilder::finish sorting the GPU's and the host's tables side
// by side (orders, key lookups and links checked against plain loops on a trace large enough to take
// that path), kernel names classified on two threads, and a rank's rules evaluated side by side (the same
// report as one at a time, on a real HTA trace). The tsan preset runs these ("threads" label).

#include "advise/advisor.h"
#include "advise/rule_context.h"
#include "all_rules.h"
#include "import/importer.h"
#include "model/parallel_for.h"
#include "model/trace_builder.h"
#include "report/report.h"
#include "shared_traces.h"

#include <atomic>
#include <gtest/gtest.h>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

TEST(ParallelFor, RunsEveryPieceOnceOnEveryThreadCount) {
    for (unsigned threads : { 0u, 1u, 2u, 4u, 64u }) {
        std::vector<std::atomic<int>> runs(1000);
        parallelFor(runs.size(), threads, [&](size_t i) { ++runs[i]; });
        for (size_t i = 0; i < runs.size(); ++i)
            ASSERT_EQ(runs[i].load(), 1) << "piece " << i << " on " << threads << " threads";
    }
    parallelFor(0, 4, [](size_t) { FAIL() << "no piece to run"; });
}

TEST(ParallelFor, RethrowsTheFirstPiecesExceptionAfterAllFinished) {
    std::atomic<int> finished { 0 };
    try {
        parallelFor(200, 4, [&](size_t i) {
            if (i == 150) throw std::runtime_error("piece 150");
            if (i == 40) throw std::runtime_error("piece 40");
            ++finished;
        });
        FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "piece 40") << "the lowest piece's, as a loop would have thrown";
    }
    EXPECT_EQ(finished.load(), 198) << "the other pieces still ran";
}

TEST(ParallelFor, UsefulThreadsStayWithinPiecesAndLimit) {
    EXPECT_EQ(usefulThreads(1, 4), 1u);
    EXPECT_EQ(usefulThreads(0, 4), 0u);
    EXPECT_LE(usefulThreads(100, 2), 2u);
    EXPECT_GE(usefulThreads(100, 2), 1u);
    EXPECT_EQ(usefulThreads(100, 0), 1u) << "a limit of 0 still leaves this thread";
}

// ---- TraceBuilder::finish on two threads ----------------------------------------------------------

// A trace of a few threads, above the size from which finish() sorts on two threads: rows in a shuffled
// order, ids out of time order and spread over more than 32 bits, ids shared by several rows, calls whose
// external id names no op (linked by nesting, as in HTA's traces), annotations nested in time.
TraceModel largeTrace() {
    TraceBuilder b(SourceFormat::Unknown, "synthetic");
    std::mt19937_64 random(7);
    const ThreadIndex threads[] = { b.thread(1, 1), b.thread(1, 2), b.thread(1, 3) };
    const StringId names[] = { b.intern("a"), b.intern("b"), b.intern("c") };
    constexpr int kOps = 6000;
    std::vector<CpuOp> ops;
    std::vector<ApiCall> calls;
    std::vector<Kernel> kernels;
    for (int i = 0; i < kOps; ++i) {
        const ThreadIndex t = threads[i % 3];
        const int64_t start = 1'000'000 + int64_t(i / 3) * 1000;
        CpuOp outer;
        outer.startNs = start, outer.endNs = start + 800, outer.thread = t, outer.name = names[0];
        outer.externalId = uint64_t(i) * 2 + 1;
        CpuOp inner;
        inner.startNs = start + 100, inner.endNs = start + 500, inner.thread = t, inner.name = names[1];
        inner.externalId = uint64_t(i) * 2 + 2;
        ops.push_back(outer);
        ops.push_back(inner);
        ApiCall call;
        // Some calls start with their op, to the nanosecond.
        call.startNs = i % 5 == 0 ? inner.startNs : start + 200 + int64_t(random() % 200);
        call.endNs = call.startNs + 50, call.thread = t;
        call.name = names[2];
        // Ids far apart (past 32 bits) and, for one call in eight, shared with another call.
        call.correlation = uint64_t(i % 8 == 7 ? i : i + 1) * 1'000'003;
        // One call in four names no op by its external id: linked by nesting instead.
        call.externalId = i % 4 == 0 ? 999'999'999 : inner.externalId;
        calls.push_back(call);
        Kernel k;
        k.startNs = start + 300 + int64_t(random() % 5000), k.endNs = k.startNs + 100;
        k.correlation = call.correlation, k.name = names[i % 3];
        kernels.push_back(k);
    }
    std::shuffle(ops.begin(), ops.end(), random);
    std::shuffle(calls.begin(), calls.end(), random);
    std::shuffle(kernels.begin(), kernels.end(), random);
    for (const CpuOp& op : ops)
        b.addCpuOp(op);
    for (const ApiCall& call : calls)
        b.addApiCall(call);
    for (const Kernel& k : kernels)
        b.addKernel(k);
    for (int i = 0; i < 300; ++i) { // 150 ranges, each with one inside
        Annotation a;
        a.startNs = 1'000'000 + int64_t(i / 2) * 20'000 + (i % 2) * 5'000;
        a.endNs = a.startNs + (i % 2 ? 3'000 : 15'000);
        a.thread = threads[0], a.name = names[0];
        b.addAnnotation(a);
    }
    return b.finish();
}

template <class Table> void expectSortedByTime(const Table& table, const char* what) {
    for (size_t i = 1; i < table.size(); ++i) {
        const bool ordered = table.startNs[i - 1] < table.startNs[i]
            || (table.startNs[i - 1] == table.startNs[i] && table.endNs[i - 1] >= table.endNs[i]);
        ASSERT_TRUE(ordered) << what << " row " << i;
    }
}

// Nesting per thread: each row's parent is the innermost earlier row of its thread that encloses it (the
// trace's rows of one thread are nested or apart, never partly overlapping), and its depth that parent's + 1.
template <class Table> void expectNesting(const Table& table, const char* what) {
    for (size_t i = 0; i < table.size(); ++i) {
        RowIndex expected = kNoRow;
        for (size_t j = i; j-- > 0;)
            if (table.thread[j] == table.thread[i] && table.startNs[j] <= table.startNs[i]
                && table.endNs[j] >= table.endNs[i]) {
                expected = RowIndex(j);
                break;
            }
        ASSERT_EQ(table.parent[i], expected) << what << " row " << i;
        ASSERT_EQ(table.depth[i], expected == kNoRow ? 0 : table.depth[size_t(expected)] + 1) << what << " row " << i;
    }
}

// The first row, in the sorted table, whose key is `key` (kNoRow for none or for 0).
RowIndex firstWithKey(const std::vector<uint64_t>& keys, uint64_t key) {
    if (key == 0) return kNoRow;
    for (size_t i = 0; i < keys.size(); ++i)
        if (keys[i] == key) return RowIndex(i);
    return kNoRow;
}

TEST(TraceBuilderOnTwoThreads, SortsLooksUpAndLinksAsPlainLoopsDo) {
    const TraceModel m = largeTrace();
    ASSERT_EQ(m.cpuOps.size(), 12000u);
    expectSortedByTime(m.cpuOps, "cpuOps");
    expectSortedByTime(m.apiCalls, "apiCalls");
    expectSortedByTime(m.kernels, "kernels");
    expectSortedByTime(m.annotations, "annotations");

    // Lookups: the first row with the id, ids spread over more than 32 bits.
    for (size_t i = 0; i < m.apiCalls.size(); i += 7) {
        const uint64_t id = m.apiCalls.correlation[i];
        EXPECT_EQ(m.apiCallByCorrelation(id).value_or(kNoRow), firstWithKey(m.apiCalls.correlation, id));
        EXPECT_EQ(m.kernelByCorrelation(id).value_or(kNoRow), firstWithKey(m.kernels.correlation, id));
    }
    for (size_t i = 0; i < m.cpuOps.size(); i += 11)
        EXPECT_EQ(m.cpuOpByExternalId(m.cpuOps.externalId[i]).value_or(kNoRow), RowIndex(i));
    EXPECT_EQ(m.apiCallByCorrelation(1), std::nullopt);
    EXPECT_EQ(m.kernelByCorrelation(uint64_t(1) << 40), std::nullopt);

    expectNesting(m.cpuOps, "cpuOps");
    expectNesting(m.annotations, "annotations");
    size_t nestedAnnotations = 0;
    for (size_t i = 0; i < m.annotations.size(); ++i)
        nestedAnnotations += m.annotations.parent[i] != kNoRow;
    EXPECT_EQ(nestedAnnotations, 150u);

    // Calls: by external id, else the innermost op of their thread that encloses them.
    size_t byNesting = 0;
    for (size_t i = 0; i < m.apiCalls.size(); ++i) {
        RowIndex expected = firstWithKey(m.cpuOps.externalId, m.apiCalls.externalId[i]);
        if (expected == kNoRow) {
            ++byNesting;
            for (size_t j = m.cpuOps.size(); j-- > 0;)
                if (m.cpuOps.thread[j] == m.apiCalls.thread[i] && m.cpuOps.startNs[j] <= m.apiCalls.startNs[i]) {
                    expected = RowIndex(j);
                    break;
                }
            while (expected != kNoRow && m.cpuOps.endNs[size_t(expected)] < m.apiCalls.endNs[i])
                expected = m.cpuOps.parent[size_t(expected)];
        }
        ASSERT_EQ(m.apiCalls.cpuOp[i], expected) << "call " << i;
    }
    EXPECT_EQ(byNesting, 1500u);
    // Kernels: their call by correlation, their op by their call.
    for (size_t i = 0; i < m.kernels.size(); ++i) {
        const RowIndex call = firstWithKey(m.apiCalls.correlation, m.kernels.correlation[i]);
        ASSERT_NE(call, kNoRow) << "kernel " << i;
        ASSERT_EQ(m.kernels.apiCall[i], call) << "kernel " << i;
        ASSERT_EQ(m.kernels.cpuOp[i], m.apiCalls.cpuOp[size_t(call)]) << "kernel " << i;
    }
}

TEST(TraceBuilderOnTwoThreads, CountsRepairsOfBothSides) {
    TraceBuilder b(SourceFormat::Unknown, "synthetic");
    const ThreadIndex t = b.thread(1, 1);
    for (int i = 0; i < 12000; ++i) {
        CpuOp op;
        op.startNs = 1000 + i * 10, op.endNs = op.startNs + (i % 1000 == 0 ? -5 : 5), op.thread = t;
        b.addCpuOp(op);
        Kernel k;
        k.startNs = 1000 + i * 10, k.endNs = k.startNs + 5;
        if (i % 2000 == 0) k.startNs = int64_t(1) << 62; // implausible: left out
        if (i % 3000 == 1) k.endNs = k.startNs - 1; // ends before it starts: clamped
        b.addKernel(k);
    }
    const TraceModel m = b.finish();
    EXPECT_EQ(m.kernels.size(), 12000u - 6);
    EXPECT_EQ(m.stats.value("times.out_of_range"), 6);
    EXPECT_EQ(m.stats.value("times.end_before_start"), 12 + 4) << "ops and kernels together";
}

// ---- kernel classes, names split between threads ----------------------------------------------

TEST(KernelClassesSideBySide, EachKernelGetsItsNamesClass) {
    TraceBuilder b(SourceFormat::Unknown, "synthetic");
    const char* families[] = { "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "ampere_sgemm_128x64_nn",
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
        "cudnn::bn_fw_tr_1C11_kernel_NCHW", "void implicit_convolve_sgemm<float>", "triton_poi_fused_add_0",
        "flash_fwd_kernel", "void at::native::reduce_kernel<512, 1>", "my_custom_kernel" };
    std::vector<std::string> names;
    for (int i = 0; i < 300; ++i)
        names.push_back(std::string(families[i % 9]) + "_" + std::to_string(i));
    for (int copy = 0; copy < 3; ++copy)
        for (const std::string& name : names) {
            Kernel k;
            k.startNs = int64_t(copy) * 1000000 + int64_t(&name - names.data()) * 100, k.endNs = k.startNs + 50;
            k.name = b.intern(name);
            b.addKernel(k);
        }
    const TraceModel m = b.finish();
    const std::vector<KernelClass> classes = classifyKernels(m);
    ASSERT_EQ(classes.size(), m.kernels.size());
    std::set<KernelClass> seen;
    for (size_t i = 0; i < classes.size(); ++i) {
        ASSERT_EQ(classes[i], classifyKernel(m.str(m.kernels.name[i]))) << m.str(m.kernels.name[i]);
        seen.insert(classes[i]);
    }
    EXPECT_GE(seen.size(), 7u) << "the families fall in different classes";
}

// ---- a rank's rules side by side ------------------------------------------------------------------

std::string jsonReport(const TraceModel& model, unsigned ruleThreads) {
    const RuleSet rules = rules::builtinRules();
    AdviseOptions options;
    options.ruleThreads = ruleThreads;
    RankAdvice advice = adviseRank(model, 0, 1, rules, options);
    std::vector<RankSummary> summaries;
    summaries.push_back(std::move(advice.summary));
    std::vector<std::vector<RuleOutcome>> outcomes;
    outcomes.push_back(std::move(advice.outcomes));
    const AdviceReport report = finishAdvice(std::move(summaries), std::move(outcomes), rules);
    std::ostringstream out;
    writeJsonReport(out, report, ReportContext {});
    return out.str();
}

TEST(RulesSideBySide, GiveTheReportOfOneThreadOnARealTrace) {
    const std::filesystem::path root = TUNEUP_SHARED_TRACES;
    TUNEUP_REQUIRE_SHARED_TRACES(root);
    const TraceModel model = importTrace((root / "hta/tests/data/trace_diff/control/control.json.gz").string());
    const std::string one = jsonReport(model, 1);
    EXPECT_NE(one.find("\"severity\""), std::string::npos) << "the trace raises findings";
    for (unsigned threads : { 2u, 4u, 16u })
        EXPECT_EQ(jsonReport(model, threads), one) << threads << " threads";
}

class ThrowingRule : public Rule {
public:
    ThrowingRule(std::string id, bool throws, std::atomic<int>& evaluated)
        : m_id(std::move(id))
        , m_throws(throws)
        , m_evaluated(evaluated) {
        m_info.id = m_id;
        m_info.title = "a test rule";
    }
    const RuleInfo& info() const override { return m_info; }
    void evaluate(const RuleContext&, RuleOutcome& outcome) const override {
        ++m_evaluated;
        if (m_throws) throw std::runtime_error(m_id + " failed");
        Finding f;
        f.title = m_id;
        outcome.findings.push_back(std::move(f));
    }

private:
    std::string m_id;
    bool m_throws;
    std::atomic<int>& m_evaluated;
    RuleInfo m_info;
};

TEST(RulesSideBySide, KeepRuleOrderAndRethrowTheFirstFailure) {
    TraceBuilder b(SourceFormat::Unknown, "synthetic");
    Kernel k;
    k.startNs = 0, k.endNs = 10;
    b.addKernel(k);
    const TraceModel model = b.finish();
    std::atomic<int> evaluated { 0 };
    RuleSet rules;
    for (int i = 0; i < 12; ++i)
        rules.push_back(std::make_unique<ThrowingRule>("rule-" + std::to_string(i), false, evaluated));
    AdviseOptions options;
    options.ruleThreads = 4;
    const RankAdvice advice = adviseRank(model, 0, 1, rules, options);
    ASSERT_EQ(advice.outcomes.size(), 12u);
    for (size_t i = 0; i < 12; ++i) {
        EXPECT_EQ(advice.outcomes[i].ruleId, "rule-" + std::to_string(i));
        ASSERT_EQ(advice.outcomes[i].findings.size(), 1u);
        EXPECT_EQ(advice.outcomes[i].findings[0].ruleId, "rule-" + std::to_string(i));
    }
    EXPECT_EQ(evaluated.load(), 12);

    rules.push_back(std::make_unique<ThrowingRule>("late", true, evaluated));
    rules.insert(rules.begin() + 3, std::make_unique<ThrowingRule>("early", true, evaluated));
    evaluated = 0;
    try {
        adviseRank(model, 0, 1, rules, options);
        FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "early failed") << "the first failing rule's, as one thread would throw it";
    }
    EXPECT_EQ(evaluated.load(), 14);
}

} // namespace
