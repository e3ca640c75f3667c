// What DataLoader worker processes did, from their own recordings: when each made a batch, when it
// lived, and their share of busy time over the main process's waits.

#include "model/trace_builder.h"
#include "steps/loader_workers.h"

#include <gtest/gtest.h>

using namespace tuneup::analysis;

namespace {

struct Fetch {
    int64_t startNs, endNs;
};

// A worker's recording as the agent writes it: meta pid, parent_pid, start_ns and end_ns (unless it was
// killed), its fetch ranges and, optionally, sampled states of its thread.
TraceModel workerRecording(int64_t pid, int64_t parent, std::optional<TimeSpan> meta, const std::vector<Fetch>& fetches,
    const std::vector<ThreadState>& states = {}) {
    TraceBuilder b(SourceFormat::TuneupDb, "run.pid" + std::to_string(pid) + ".db");
    b.info().machine = "x86_64";
    b.info().metadata
        = { { "pid", std::to_string(pid) }, { "parent_pid", std::to_string(parent) }, { "role", "dataloader-worker" } };
    if (meta) {
        b.info().metadata.emplace_back("start_ns", std::to_string(meta->startNs));
        b.info().metadata.emplace_back("end_ns", std::to_string(meta->endNs));
    }
    const ThreadIndex thread = b.thread(pid, pid);
    for (const Fetch& f : fetches)
        b.addAnnotation(
            { .startNs = f.startNs, .endNs = f.endNs, .thread = thread, .name = b.intern("tuneup.dataloader.fetch") });
    b.addAnnotation({ .startNs = 5, .endNs = 6, .thread = thread, .name = b.intern("something.else") });
    for (ThreadState s : states) {
        s.thread = thread;
        b.addThreadState(s);
    }
    return b.finish();
}

} // namespace

TEST(LoaderWorkers, AWorkersRecordingGivesItsBatchesAndItsLife) {
    const TraceModel m = workerRecording(77, 7, TimeSpan { 0, 1000 }, { { 100, 200 }, { 150, 300 }, { 500, 600 } },
        { { .timeNs = 0, .state = 'R', .syscall = -1 }, { .timeNs = 300, .state = 'S', .syscall = 0 } });
    const LoaderWorker w = loaderWorkerActivity(m);
    EXPECT_EQ(w.pid, 77);
    EXPECT_EQ(w.parentPid, 7);
    EXPECT_EQ(w.life.startNs, 0);
    EXPECT_EQ(w.life.endNs, 1000);
    ASSERT_EQ(w.fetching.size(), 2u) << "overlapping fetches merged, other ranges left out";
    EXPECT_EQ(w.fetching[0].startNs, 100);
    EXPECT_EQ(w.fetching[0].endNs, 300);
    EXPECT_EQ(w.fetching[1].startNs, 500);
    EXPECT_FALSE(w.states.empty());
}

TEST(LoaderWorkers, AKilledWorkerLivedUntilItsLastEvent) {
    // No end_ns in meta (killed before it wrote it): alive from its first event to its last.
    const LoaderWorker w = loaderWorkerActivity(workerRecording(8, 1, std::nullopt, { { 100, 200 }, { 700, 900 } }));
    EXPECT_EQ(w.life.startNs, 5);
    EXPECT_EQ(w.life.endNs, 900);
    EXPECT_EQ(w.parentPid, 1);
}

TEST(LoaderWorkers, BusyShareCountsEachWorkerWhileItLived) {
    // Waits [0,100) and [200,300). Worker A lives throughout, fetching [0,100): busy 100 of 200.
    // Worker B lives from 250 only, fetching [250,300): busy 50 of 50. Worker C lived before the waits.
    std::vector<LoaderWorker> workers;
    workers.push_back(loaderWorkerActivity(workerRecording(1, 9, TimeSpan { -50, 400 }, { { 0, 100 } })));
    workers.push_back(loaderWorkerActivity(workerRecording(2, 9, TimeSpan { 250, 400 }, { { 250, 300 } })));
    workers.push_back(loaderWorkerActivity(workerRecording(3, 9, TimeSpan { -500, -100 }, { { -400, -300 } })));
    const LoaderWorkersDuring d = loaderWorkersDuring(workers, { { 0, 100 }, { 200, 300 } });
    EXPECT_EQ(d.workers, 2u);
    EXPECT_EQ(d.aliveNs, 250);
    EXPECT_EQ(d.fetchingNs, 150);
    EXPECT_DOUBLE_EQ(d.fetchingShare(), 0.6);
}

TEST(LoaderWorkers, TheirSampledStatesAddUp) {
    std::vector<LoaderWorker> workers;
    workers.push_back(loaderWorkerActivity(workerRecording(1, 9, TimeSpan { 0, 1000 }, { { 0, 10 } },
        { { .timeNs = 0, .state = 'R', .syscall = -1 }, { .timeNs = 50, .state = 'S', .syscall = 0 } })));
    const LoaderWorkersDuring d = loaderWorkersDuring(workers, { { 0, 100 } });
    EXPECT_EQ(d.states[size_t(HostActivity::Running)], 50);
    EXPECT_EQ(d.states[size_t(HostActivity::Pipe)], 50);
}

TEST(LoaderWorkers, AWorkerWithoutBatchesSaysNothing) {
    // Recorded without the Python bootstrap's fetch ranges: when it worked is unknown, so it is not counted
    // (as idle it would make the main process look slow).
    std::vector<LoaderWorker> workers;
    workers.push_back(loaderWorkerActivity(workerRecording(1, 9, TimeSpan { 0, 1000 }, {})));
    const LoaderWorkersDuring d = loaderWorkersDuring(workers, { { 0, 100 } });
    EXPECT_EQ(d.workers, 0u);
    EXPECT_EQ(d.aliveNs, 0);
    EXPECT_DOUBLE_EQ(d.fetchingShare(), 0.0);
}

TEST(LoaderWorkers, UnreadableMetaFallsBackToTheEvents) {
    TraceModel m = workerRecording(4, 2, std::nullopt, { { 100, 200 } });
    m.info.metadata.emplace_back("start_ns", "soon");
    m.info.metadata.emplace_back("end_ns", "-9999999999999999999999");
    m.info.metadata[1].second = "x"; // parent_pid
    const LoaderWorker w = loaderWorkerActivity(m);
    EXPECT_EQ(w.parentPid, 0);
    EXPECT_EQ(w.life.startNs, 5);
    EXPECT_EQ(w.life.endNs, 200);
}
