// Cost of one NVTX range (push + pop) as the training thread sees it. Run it twice: plain (NVTX
// calls are no-ops) and with NVTX_INJECTION64_PATH pointing at the agent (scripts/bench-agent.sh).
// BM_TwoClockReads is the yardstick: the agent's target is at most 1.5x its time per recorded range.

#include <benchmark/benchmark.h>
#include <chrono>
#include <ctime>
#include <nvtx3/nvToolsExt.h>
#include <thread>

static void BM_NvtxPushPop(benchmark::State& state) {
    for (auto _ : state) {
        nvtxRangePushA("forward");
        nvtxRangePop();
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NvtxPushPop);

// Bursts of 5000 ranges (they fit the thread's buffer at the default 1 MiB) with a pause before each,
// not timed, in which the agent's writer empties the buffer: the cost of a range that is recorded,
// not dropped. BM_NvtxPushPop, in a tight loop, outruns the writer and measures mostly drops.
static void BM_NvtxPushPopRecorded(benchmark::State& state) {
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
    for (auto _ : state) {
        nvtxRangePushA("forward");
        nvtxRangePop();
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NvtxPushPopRecorded)->Iterations(5000)->Repetitions(30)->ReportAggregatesOnly(true);

// Bursts of 100 000 ranges (9.6 MB, well past the thread's spare segment) after a pause in which the writer
// empties and unmaps what the last burst filled: the cost of a range while the thread's buffer grows,
// mapping new segments from the budget as it goes.
static void BM_NvtxPushPopGrowing(benchmark::State& state) {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    for (auto _ : state) {
        nvtxRangePushA("forward");
        nvtxRangePop();
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NvtxPushPopGrowing)->Iterations(100000)->Repetitions(10)->ReportAggregatesOnly(true);

static void BM_NvtxDomainPushPopRegistered(benchmark::State& state) {
    nvtxDomainHandle_t domain = nvtxDomainCreateA("bench");
    nvtxStringHandle_t name = nvtxDomainRegisterStringA(domain, "step");
    nvtxEventAttributes_t attributes {};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    attributes.message.registered = name;
    for (auto _ : state) {
        nvtxDomainRangePushEx(domain, &attributes);
        nvtxDomainRangePop(domain);
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_NvtxDomainPushPopRegistered);

static void BM_TwoClockReads(benchmark::State& state) {
    timespec a, b;
    for (auto _ : state) {
        clock_gettime(CLOCK_MONOTONIC, &a);
        clock_gettime(CLOCK_MONOTONIC, &b);
        benchmark::DoNotOptimize(a);
        benchmark::DoNotOptimize(b);
    }
}
BENCHMARK(BM_TwoClockReads);

BENCHMARK_MAIN();
