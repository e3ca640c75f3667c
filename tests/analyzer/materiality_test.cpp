// The materiality floor (advise/materiality.h): findings about time under 0.5% of the step or 1 ms per
// step are not raised, --all shows them, correctness findings and findings without an estimate are
// raised whatever their size; every report format states each finding's share of the step; job
// summaries keep what the floor set aside. On made-up outcomes and on a real HTA trace.

#include "advise/materiality.h"
#include "all_rules.h"
#include "job/job.h"
#include "job/summary_file.h"
#include "report/report.h"
#include "shared_traces.h"
#include "temp_dir.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

using namespace tuneup;
using namespace tuneup::analysis;
namespace fs = std::filesystem;

namespace {

Finding timeFinding(int64_t perStepNs, double share, FindingKind kind = FindingKind::Performance) {
    Finding f;
    f.ruleId = "some-rule";
    f.kind = kind;
    f.title = "finding of " + std::to_string(perStepNs) + " ns";
    f.gain = Gain { perStepNs, share, "a model", "high" };
    return f;
}

RuleOutcome raised(std::vector<Finding> findings) {
    RuleOutcome o;
    o.ruleId = "some-rule";
    o.status = RuleStatus::Raised;
    o.findings = std::move(findings);
    return o;
}

TEST(MaterialityFloor, EitherLimitClearsIt) {
    const MaterialityFloor floor;
    EXPECT_TRUE(isMaterial(timeFinding(5'000'000, 0.05), floor));
    EXPECT_TRUE(isMaterial(timeFinding(900'000, 0.05), floor)) << "5% of a short step, under 1 ms";
    EXPECT_TRUE(isMaterial(timeFinding(2'000'000, 0.004), floor)) << "2 ms, 0.4% of a long step";
    EXPECT_FALSE(isMaterial(timeFinding(900'000, 0.004), floor)) << "under both";
    EXPECT_FALSE(isMaterial(timeFinding(3'000, 0.00002), floor)) << "three microseconds of pageable copies";
    EXPECT_FALSE(isMaterial(timeFinding(0, 0), floor)) << "a performance finding that claims nothing";
}

TEST(MaterialityFloor, WithoutStepsOnlyTheTimeIsJudged) {
    const MaterialityFloor floor;
    EXPECT_TRUE(isMaterial(timeFinding(27'000'000, 0), floor));
    EXPECT_FALSE(isMaterial(timeFinding(184'500, 0), floor));
}

TEST(MaterialityFloor, CorrectnessInformationAndUnestimatedFindingsStay) {
    const MaterialityFloor floor;
    EXPECT_TRUE(isMaterial(timeFinding(1'000, 0.0001, FindingKind::Correctness), floor));
    EXPECT_TRUE(isMaterial(timeFinding(1'000, 0.0001, FindingKind::Information), floor));
    Finding noEstimate;
    noEstimate.ruleId = "user-rule";
    EXPECT_TRUE(isMaterial(noEstimate, floor));
}

TEST(MaterialityFloor, ConfigurableAndAll) {
    EXPECT_TRUE(isMaterial(timeFinding(5'000, 0.3), MaterialityFloor {})) << "30% of a micro-benchmark's 17 us step";
    MaterialityFloor strict;
    strict.minStepShare = 0.10; // --min-gain 10 --min-gain-ms 10
    strict.minPerStepNs = 10'000'000;
    EXPECT_FALSE(isMaterial(timeFinding(5'000'000, 0.05), strict));
    MaterialityFloor all;
    all.showAll = true;
    EXPECT_TRUE(isMaterial(timeFinding(3'000, 0.00002), all));
    EXPECT_EQ(floorText(MaterialityFloor {}), "0.5% of the step and 1 ms per step");
}

TEST(MaterialityFloor, OutcomeLeftWithoutFindingsIsCleanAndSaysWhy) {
    std::vector<RuleOutcome> outcomes { raised({ timeFinding(81'000, 0.0026), timeFinding(40'000, 0.0013) }),
        raised({ timeFinding(5'000'000, 0.05), timeFinding(10'000, 0.0001) }) };
    EXPECT_EQ(applyMaterialityFloor(outcomes, MaterialityFloor {}), 3u);
    EXPECT_EQ(outcomes[0].status, RuleStatus::Clean);
    EXPECT_TRUE(outcomes[0].findings.empty());
    EXPECT_EQ(outcomes[0].belowFloor.size(), 2u);
    EXPECT_EQ(outcomes[0].reason,
        "2 findings under the materiality floor (0.5% of the step and 1 ms per step), the largest 81 us per step, "
        "0.3% of the step; --all shows them");
    EXPECT_EQ(outcomes[1].status, RuleStatus::Raised);
    ASSERT_EQ(outcomes[1].findings.size(), 1u);
    EXPECT_EQ(outcomes[1].findings[0].gain->perStepNs, 5'000'000);

    // A second pass with --all (a job summary merged with --all) brings them back.
    MaterialityFloor all;
    all.showAll = true;
    EXPECT_EQ(applyMaterialityFloor(outcomes, all), 0u);
    EXPECT_EQ(outcomes[0].status, RuleStatus::Raised);
    EXPECT_EQ(outcomes[0].findings.size(), 2u);
    EXPECT_TRUE(outcomes[0].reason.empty());
    EXPECT_EQ(outcomes[1].findings.size(), 2u);
}

// ---- on a real trace: HTA's cuda_event_sync (3.15 ms steps; sync-in-loop finds 81 us per step, 2.6%) ----

// --min-gain 5: the sync's 2.6% and 81 us are under both limits.
MaterialityFloor fivePercent() {
    MaterialityFloor floor;
    floor.minStepShare = 0.05;
    return floor;
}

const fs::path kTraces = TUNEUP_SHARED_TRACES;
const std::string kEventSync = "hta/tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz";

std::unique_ptr<Job> adviseEventSync(const MaterialityFloor& floor) {
    JobOptions options;
    options.builtinRules = rules::builtinRules;
    options.materiality = floor;
    return openJob({ (kTraces / kEventSync).string() }, options);
}

const RuleOutcome& outcomeOf(const Job& job, const std::string& rule) {
    const auto it = std::find_if(
        job.report.outcomes.begin(), job.report.outcomes.end(), [&](const RuleOutcome& o) { return o.ruleId == rule; });
    if (it == job.report.outcomes.end()) throw std::runtime_error("no outcome of " + rule);
    return *it;
}

TEST(MaterialityOnRealTrace, SyncUnderBothLimitsIsNotRaisedAndAllShowsIt) {
    TUNEUP_REQUIRE_SHARED_TRACES(kTraces);
    // By default its 2.6% of the step clears the floor.
    EXPECT_EQ(outcomeOf(*adviseEventSync(MaterialityFloor {}), "sync-in-loop").status, RuleStatus::Raised);
    const auto job = adviseEventSync(fivePercent());
    const RuleOutcome& sync = outcomeOf(*job, "sync-in-loop");
    EXPECT_EQ(sync.status, RuleStatus::Clean);
    EXPECT_NE(sync.reason.find("under the materiality floor"), std::string::npos) << sync.reason;
    EXPECT_EQ(job->report.findingsBelowFloor, 1u);
    // The GPU idling 96% of the step is well above it.
    EXPECT_EQ(outcomeOf(*job, "gpu-idle").status, RuleStatus::Raised);

    MaterialityFloor all = fivePercent();
    all.showAll = true;
    const auto everything = adviseEventSync(all);
    EXPECT_EQ(outcomeOf(*everything, "sync-in-loop").status, RuleStatus::Raised);
    EXPECT_EQ(everything->report.findingsBelowFloor, 0u);

    MaterialityFloor micro = fivePercent(); // --min-gain-ms 0.05: its 81 us clear the time limit
    micro.minPerStepNs = 50'000;
    EXPECT_EQ(outcomeOf(*adviseEventSync(micro), "sync-in-loop").status, RuleStatus::Raised);
}

TEST(MaterialityOnRealTrace, EveryFormatStatesTheShareAndWhatTheFloorLeftOut) {
    TUNEUP_REQUIRE_SHARED_TRACES(kTraces);
    const auto job = adviseEventSync(fivePercent());
    ReportContext context;
    context.inputs = { kEventSync };
    for (const ReportFormat& format : reportFormats()) {
        std::ostringstream out;
        format.write(out, job->report, context);
        const std::string text = out.str();
        if (format.name != "json") {
            EXPECT_NE(text.find("96% of the step"), std::string::npos) << format.name;
        }
        if (format.name == "json") {
            EXPECT_NE(text.find("\"step_share\": 0.958"), std::string::npos) << text;
            EXPECT_NE(text.find("\"findings_below\": 1"), std::string::npos) << text;
        } else if (format.name != "junit") {
            EXPECT_NE(text.find("1 finding under the materiality floor"), std::string::npos) << format.name << ":\n"
                                                                                             << text;
        }
    }
}

TEST(MaterialityOnRealTrace, SummaryKeepsWhatTheFloorSetAside) {
    TUNEUP_REQUIRE_SHARED_TRACES(kTraces);
    const auto job = adviseEventSync(fivePercent());
    const test::TempDir dir("materiality");
    const std::string summary = (fs::path(dir.path()) / "node0.json").string();
    {
        std::ofstream out(summary);
        writeJobSummary(out, job->report, "test");
    }
    JobOptions options;
    options.builtinRules = rules::builtinRules;
    options.materiality.showAll = true;
    const auto merged = openJob({ summary }, options);
    const RuleOutcome& sync = outcomeOf(*merged, "sync-in-loop");
    EXPECT_EQ(sync.status, RuleStatus::Raised);
    ASSERT_EQ(sync.findings.size(), 1u);
    EXPECT_EQ(sync.findings[0].kind, FindingKind::Performance);
    EXPECT_EQ(sync.findings[0].gain->perStepNs, 81'000);
}

} // namespace
