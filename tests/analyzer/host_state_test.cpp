// What the main thread did, from the agent's sampled thread states: system call names by machine,
// the state that covers a span, time per activity, and the few words an idle gap gets.

#include "model/trace_builder.h"
#include "steps/breakdown.h"
#include "steps/host_state.h"

#include <gtest/gtest.h>

using namespace tuneup::analysis;

namespace {

// One thread sampled on x86-64: running from 0, in futex from 100, in read from 400, running from 700.
TraceModel sampledTrace(std::string machine = "x86_64") {
    TraceBuilder b(SourceFormat::TuneupDb, "synthetic");
    b.info().machine = std::move(machine);
    const ThreadIndex main = b.thread(10, 10), other = b.thread(10, 11);
    b.addThreadState({ .timeNs = 0, .thread = main, .state = 'R', .syscall = -1 });
    b.addThreadState({ .timeNs = 100, .thread = main, .state = 'S', .syscall = 202 });
    b.addThreadState({ .timeNs = 400, .thread = main, .state = 'S', .syscall = 0 });
    b.addThreadState({ .timeNs = 700, .thread = main, .state = 'R', .syscall = -1 });
    b.addThreadState({ .timeNs = 50, .thread = other, .state = 'S', .syscall = 35 }); // fewer rows: not followed
    return b.finish();
}

} // namespace

TEST(HostState, SystemCallsAreNamedForTheRecordingMachine) {
    EXPECT_EQ(syscallName("x86_64", 202), "futex");
    EXPECT_EQ(syscallName("aarch64", 98), "futex");
    EXPECT_EQ(syscallName("x86_64", 98), "");
    EXPECT_EQ(syscallName("aarch64", 7), ""); // poll does not exist there
    EXPECT_EQ(syscallName("ppc64le", 202), ""); // a machine this analysis does not number
    EXPECT_EQ(classifyHostState("x86_64", 'S', 7), HostActivity::Pipe);
    EXPECT_EQ(classifyHostState("aarch64", 'S', 73), HostActivity::Pipe);
    EXPECT_EQ(classifyHostState("x86_64", 'S', 61), HostActivity::Child);
    EXPECT_EQ(classifyHostState("x86_64", 'D', 16), HostActivity::Driver);
    EXPECT_EQ(classifyHostState("x86_64", 'S', 999), HostActivity::OtherWait);
    EXPECT_EQ(classifyHostState("x86_64", 'R', 202), HostActivity::Running); // runnable inside a call
    EXPECT_EQ(classifyHostState("x86_64", 'S', -1), HostActivity::Running);
    EXPECT_EQ(classifyHostState("x86_64", '?', -2), HostActivity::Unknown);
}

TEST(HostState, DescribedInAFewWords) {
    EXPECT_EQ(describeHostState({ HostActivity::Lock, 202 }, "x86_64"), "waiting (futex)");
    EXPECT_EQ(describeHostState({ HostActivity::Sleep, 35 }, "x86_64"), "sleeping (nanosleep)");
    EXPECT_EQ(describeHostState({ HostActivity::OtherWait, 999 }, "x86_64"), "waiting (system call 999)");
    EXPECT_EQ(describeHostState({ HostActivity::Running, -1 }, "x86_64"), "running");
    EXPECT_EQ(describeHostState({}, "x86_64"), "unknown");
}

TEST(HostState, TheMostSampledThreadIsFollowedAsAStepFunction) {
    const TraceModel m = sampledTrace();
    const HostStateTimeline t(m);
    ASSERT_FALSE(t.empty());
    EXPECT_EQ(m.threads[t.thread()].tid, 10);
    EXPECT_EQ(t.dominant({ 0, 100 }), (HostState { HostActivity::Running, -1 }));
    EXPECT_EQ(t.dominant({ 90, 300 }), (HostState { HostActivity::Lock, 202 }));
    EXPECT_EQ(t.dominant({ 350, 650 }), (HostState { HostActivity::Pipe, 0 })); // 50 futex, 250 read
    EXPECT_EQ(t.dominant({ 5000, 6000 }), (HostState { HostActivity::Running, -1 })); // the last sample holds
    const HostTime ns = t.timeIn({ { 50, 150 }, { 350, 800 } });
    EXPECT_EQ(ns[size_t(HostActivity::Running)], 50 + 100);
    EXPECT_EQ(ns[size_t(HostActivity::Lock)], 50 + 50);
    EXPECT_EQ(ns[size_t(HostActivity::Pipe)], 300);
    EXPECT_EQ(describeHostTime(ns), "55% waiting to read (pipe, socket, file), 27% running, 18% waiting on a lock");
    EXPECT_TRUE(explainHostTime(ns).starts_with("The main thread mostly waited to read from a pipe, socket or file"));
    // No activity with half of the time: nothing to say.
    EXPECT_EQ(explainHostTime(t.timeIn({ { 50, 700 } })), ""); // 46% lock, 46% pipe, 8% running
    EXPECT_TRUE(explainHostTime(t.timeIn({ { 50, 450 } })).starts_with("The main thread mostly waited on a lock"));
}

TEST(HostState, BeforeTheFirstSampleIsUnknown) {
    const HostStateTimeline t(sampledTrace());
    const HostTime ns = t.timeIn({ { -300, 100 } });
    EXPECT_EQ(ns[size_t(HostActivity::Unknown)], 300);
    EXPECT_EQ(ns[size_t(HostActivity::Running)], 100);
    EXPECT_EQ(describeHostTime(ns), "") << "mostly unsampled: no summary";
    EXPECT_EQ(describeHostTime({}), "");
    EXPECT_EQ(t.dominant({ -300, 100 }), (HostState { HostActivity::Running, -1 })) << "the sampled part decides";
}

TEST(HostState, AnUnsampledTraceHasNoTimeline) {
    TraceBuilder b(SourceFormat::KinetoJson, "synthetic");
    b.thread(1, 1);
    const TraceModel m = b.finish();
    const HostStateTimeline t(m);
    EXPECT_TRUE(t.empty());
    EXPECT_EQ(t.dominant({ 0, 100 }), HostState {});
}

TEST(HostState, IdleGapsAreDescribedByTheirLargestPartAndTheSampledState) {
    const IdleGap data { .span = { 0, 100 }, .dataNs = 80 };
    const IdleGap sync { .span = { 0, 100 }, .dataNs = 20, .afterSync = true };
    const IdleGap host { .span = { 0, 100 }, .dataNs = 20 };
    const HostState futex { HostActivity::Lock, 202 }, ioctl { HostActivity::Driver, 16 },
        running { HostActivity::Running, -1 };
    EXPECT_EQ(describeIdleGap(data, futex, "x86_64"), "main thread waiting (futex) for the DataLoader");
    EXPECT_EQ(describeIdleGap(data, {}, "x86_64"), "main thread waiting for the DataLoader");
    EXPECT_EQ(
        describeIdleGap(sync, ioctl, "x86_64"), "after a synchronisation with the GPU (main thread waiting (ioctl))");
    EXPECT_EQ(describeIdleGap(sync, {}, "x86_64"), "after a synchronisation with the GPU");
    EXPECT_EQ(describeIdleGap(host, running, "x86_64"), "launch and Python overhead (main thread running)");
    EXPECT_EQ(describeIdleGap(host, futex, "x86_64"), "main thread waiting (futex), not launching work");
    EXPECT_EQ(describeIdleGap(host, {}, "x86_64"), "launch and Python overhead");
}

TEST(HostState, StepAnalysisGivesEachGapTheStateThatCoversIt) {
    // Two 10 us steps: a kernel in the first 6 us of each, the rest idle; the main thread runs in step 1's
    // gap and waits on a lock in step 2's.
    TraceBuilder b(SourceFormat::TuneupDb, "synthetic");
    b.info().machine = "x86_64";
    const ThreadIndex main = b.thread(10, 10);
    for (int s = 0; s < 2; ++s) {
        const int64_t t0 = 100'000 + s * 10'000;
        b.addAnnotation({ .startNs = t0,
            .endNs = t0 + 10'000,
            .thread = main,
            .name = b.intern("ProfilerStep#" + std::to_string(s)) });
        b.addKernel({ .startNs = t0, .endNs = t0 + 6'000, .device = 0, .name = b.intern("k") });
    }
    b.addThreadState({ .timeNs = 100'000, .thread = main, .state = 'R', .syscall = -1 });
    b.addThreadState({ .timeNs = 116'000, .thread = main, .state = 'S', .syscall = 202 });
    const TraceModel m = b.finish();
    const StepAnalysis steps = analyzeSteps(m);
    ASSERT_EQ(steps.gaps.size(), 2u);
    ASSERT_FALSE(steps.hostStates.empty());
    EXPECT_EQ(steps.hostStateDuring(0).activity, HostActivity::Running);
    EXPECT_EQ(steps.hostStateDuring(1).activity, HostActivity::Lock);
    EXPECT_EQ(steps.hostStateDuring(2), HostState {}); // no such gap
}
