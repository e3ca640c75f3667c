// rank-straggler on real multi-rank jobs. Expected figures come from a throw-away Python script over
// the JSON (not from our importer): per ProfilerStep#N, on the GPU with the most kernel time, the time
// covered by kernels whose name contains "nccl" (spans merged), median over the steps (element n/2 of
// the sorted values). The straggler is the rank with the least; the others' wait is their excess.

#include "rule_test_support.h"

using namespace tuneup;
using namespace tuneup::analysis;

namespace {

const std::string kTbData = "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/";

} // namespace

TEST(RankStraggler, ResnetDdpRankOneWaitsForItsDataLoader) {
    // NCCL per step: rank 0 489.661 1051.603 1142.809 750.558 ms -> 1051.603; rank 1 229.286 205.639
    // 204.278 211.744 -> 211.744. Rank 0 waits 839.859 ms per step for rank 1, whose DataLoader waits
    // are longer (MANIFEST: both load in the main process). Median step: 1925.746 ms.
    TUNEUP_REQUIRE_SHARED_TRACE(w0, kTbData + "resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz");
    TUNEUP_REQUIRE_SHARED_TRACE(w1, kTbData + "resnet50_newAPI_ddp/worker1_span1.pt.trace.json.gz");
    const auto r = ruletest::runRule("rank-straggler", { w0, w1 });
    ASSERT_EQ(r.report.outcomes.size(), 1u); // job-wide: evaluated once
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    const Finding& f = r.outcome.findings.at(0);
    EXPECT_EQ(f.rank, 1); // no distributedInfo: ranks by file order
    ASSERT_TRUE(f.gain);
    EXPECT_NEAR(double(f.gain->perStepNs), 839'859'000.0, 2'000.0);
    EXPECT_NEAR(f.gain->stepShare, 839'859.0 / 1'925'746.0, 0.001);
    EXPECT_EQ(f.gain->confidence, "medium");
    EXPECT_EQ(f.severity, Severity::Error);
    EXPECT_NE(f.title.find("rank 1 is the straggler"), std::string::npos) << f.title;
    EXPECT_NE(f.title.find("DataLoader"), std::string::npos) << f.title;
    EXPECT_NE(f.fixPython.find("num_workers"), std::string::npos);
}

TEST(RankStraggler, DlrmEightRanksRankSevenArrivesLast) {
    // NCCL per rank (us), one step each: 5798 11336 3492 9774 6587 6251 3558 1746 (rank 7, from
    // distributedInfo). The others' waits: 4052 9590 1746 8028 4841 4505 1812 -> median 4505 us; median
    // step over the ranks 17797 us. One step per rank: low confidence.
    std::vector<std::string> paths;
    for (const char* relative :
        { "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker2_step_12.1694128201554.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker3_step_12.1694128201557.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker4_step_12.1694128201547.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker5_step_12.1694128201549.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker6_step_12.1694128201553.pt.trace.json",
            "param/et_replay/tests/inputs/dlrm_kineto/worker7_step_12.1694128201553.pt.trace.json" }) {
        TUNEUP_REQUIRE_SHARED_TRACE(path, relative);
        paths.push_back(path);
    }
    const auto r = ruletest::runRule("rank-straggler", paths);
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    const Finding& f = r.outcome.findings.at(0);
    EXPECT_EQ(f.rank, 7);
    ASSERT_TRUE(f.gain);
    EXPECT_NEAR(double(f.gain->perStepNs), 4'505'000.0, 2'000.0);
    EXPECT_NEAR(f.gain->stepShare, 4505.0 / 17797.0, 0.001);
    EXPECT_EQ(f.gain->confidence, "low");
    EXPECT_NE(f.title.find("the other 7 ranks wait"), std::string::npos) << f.title;
    EXPECT_NE(f.detail.find("record more steps"), std::string::npos);
}

TEST(RankStraggler, QuietWhenRanksAreBalanced) {
    // BERT DDP: NCCL 1414.087 vs 1412.758 ms per step (0.1% apart). HTA trace_filter ranks 0 and 1
    // of 128: 200.9 vs 211.0 ms (the sampled traces differ by 2% of a 620 ms step).
    TUNEUP_REQUIRE_SHARED_TRACE(b0, kTbData + "bert_newAPI_fp16_ddp_4dataloader/worker0_round1.pt.trace.json.gz");
    TUNEUP_REQUIRE_SHARED_TRACE(b1, kTbData + "bert_newAPI_fp16_ddp_4dataloader/worker1_round1.pt.trace.json.gz");
    const auto bert = ruletest::runRule("rank-straggler", { b0, b1 });
    EXPECT_EQ(bert.outcome.status, RuleStatus::Clean) << bert.outcome.reason;
    TUNEUP_REQUIRE_SHARED_TRACE(s0, "hta/tests/data/trace_filter/sampled_rank-0.json.gz");
    TUNEUP_REQUIRE_SHARED_TRACE(s1, "hta/tests/data/trace_filter/sampled_rank-1.json.gz");
    const auto sampled = ruletest::runRule("rank-straggler", { s0, s1 });
    EXPECT_EQ(sampled.outcome.status, RuleStatus::Clean) << sampled.outcome.reason;
}

TEST(RankStraggler, NotEvaluatedWithOneRank) {
    TUNEUP_REQUIRE_SHARED_TRACE(path, kTbData + "resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz");
    const auto r = ruletest::runRule("rank-straggler", { path });
    EXPECT_EQ(r.outcome.status, RuleStatus::NotEvaluated);
    EXPECT_NE(r.outcome.reason.find("two or more ranks"), std::string::npos) << r.outcome.reason;
}

namespace {

// A synthetic rank: 4 steps of 20 ms; `computeNs` of compute, then an all-reduce that ends at 18 ms
// into the step (collectives finish together), starting when this rank arrives.
TraceModel syntheticRank(int rank, int64_t computeNs, bool withCollective = true) {
    auto b = ruletest::syntheticTrace(4, 20'000'000);
    b.info().rank = rank;
    for (int s = 0; s < 4; ++s) {
        const int64_t t0 = 1'000'000 + s * 20'000'000;
        Kernel k;
        k.startNs = t0 + 500'000;
        k.endNs = k.startNs + computeNs;
        k.device = rank;
        k.stream = 7;
        k.name = b.intern("volta_sgemm_128x64_nn");
        b.addKernel(k);
        if (!withCollective) continue;
        Kernel c = k;
        c.startNs = k.endNs;
        c.endNs = t0 + 18'000'000;
        c.stream = 20;
        c.name = b.intern("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)");
        b.addKernel(c);
    }
    return b.finish();
}

} // namespace

TEST(RankStraggler, SyntheticComputeStraggler) {
    // Ranks 0, 1, 3 compute 8 ms; rank 2 computes 14 ms: the others wait 6 ms per step for it.
    std::vector<TraceModel> models;
    for (int rank = 0; rank < 4; ++rank)
        models.push_back(syntheticRank(rank, rank == 2 ? 14'000'000 : 8'000'000));
    const auto r = ruletest::runRuleOnModels("rank-straggler", std::move(models));
    ASSERT_EQ(r.outcome.status, RuleStatus::Raised) << r.outcome.reason;
    const Finding& f = r.outcome.findings.at(0);
    EXPECT_EQ(f.rank, 2);
    EXPECT_EQ(f.gain->perStepNs, 6'000'000);
    EXPECT_NE(f.title.find("GPU compute takes it 6 ms longer"), std::string::npos) << f.title;
    EXPECT_EQ(f.gain->confidence, "medium");
}

TEST(RankStraggler, SyntheticNotApplicableWithoutCollectives) {
    std::vector<TraceModel> models;
    models.push_back(syntheticRank(0, 8'000'000, false));
    models.push_back(syntheticRank(1, 12'000'000, false));
    const auto r = ruletest::runRuleOnModels("rank-straggler", std::move(models));
    EXPECT_EQ(r.outcome.status, RuleStatus::NotApplicable) << r.outcome.reason;
}
