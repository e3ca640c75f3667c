// Cost of a GEMM call as the training thread sees it, with and without the agent's interposers. Run it
// plain and with LD_PRELOAD pointing at the agent (scripts/bench-agent.sh). There is no GPU here: the real
// cuBLAS and cuBLASLt return NOT_INITIALIZED for the null handle at once, so the difference between the
// two runs is the interposer's own cost (resolution is cached; the call is timed, its descriptors looked
// up, its record written to the thread's ring).
//   BM_LtMatmul          cublasLtMatmul on descriptors made once (the descriptor cache's hot path)
//   BM_LtMatmulTorchStyle  what PyTorch does per Linear: make 1 matmul descriptor + 2 attributes, 3
//                        layouts, run the matmul, destroy the 4 descriptors
//   BM_Sgemm             cublasSgemm_v2
// The *Recorded variants run bursts of 5000 calls with an untimed pause before each, in which the agent's
// writer empties the thread's buffer: the cost of a call that is recorded, not dropped.

#include <benchmark/benchmark.h>
#include <chrono>
#include <cublasLt.h>
#include <cublas_v2.h>
#include <thread>

namespace {

struct LtDescriptors {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    LtDescriptors() {
        cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
        const int32_t transposed = CUBLAS_OP_T;
        cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transposed, sizeof transposed);
        cublasLtMatrixLayoutCreate(&a, CUDA_R_16F, 1024, 1024, 1024);
        cublasLtMatrixLayoutCreate(&b, CUDA_R_16F, 1024, 512, 1024);
        cublasLtMatrixLayoutCreate(&d, CUDA_R_16F, 1024, 512, 1024);
    }
    ~LtDescriptors() {
        cublasLtMatmulDescDestroy(desc);
        cublasLtMatrixLayoutDestroy(a);
        cublasLtMatrixLayoutDestroy(b);
        cublasLtMatrixLayoutDestroy(d);
    }
};

const float kOne = 1;

inline cublasStatus_t matmul(const LtDescriptors& l) {
    return cublasLtMatmul(nullptr, l.desc, &kOne, nullptr, l.a, nullptr, l.b, &kOne, nullptr, l.d, nullptr, l.d,
        nullptr, nullptr, 0, nullptr);
}

// Before the timed loop (the timer starts at its first iteration): the writer empties the ring meanwhile.
void pauseForTheWriter() {
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
}

void BM_LtMatmul(benchmark::State& state) {
    const LtDescriptors l;
    for (auto _ : state)
        benchmark::DoNotOptimize(matmul(l));
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LtMatmul);

void BM_LtMatmulRecorded(benchmark::State& state) {
    const LtDescriptors l;
    pauseForTheWriter();
    for (auto _ : state)
        benchmark::DoNotOptimize(matmul(l));
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LtMatmulRecorded)->Iterations(5000)->Repetitions(30)->ReportAggregatesOnly(true);

void BM_LtMatmulTorchStyleRecorded(benchmark::State& state) {
    pauseForTheWriter();
    for (auto _ : state) {
        const LtDescriptors l;
        benchmark::DoNotOptimize(matmul(l));
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LtMatmulTorchStyleRecorded)->Iterations(5000)->Repetitions(30)->ReportAggregatesOnly(true);

inline cublasStatus_t sgemm() {
    return cublasSgemm_v2(
        nullptr, CUBLAS_OP_N, CUBLAS_OP_T, 1024, 512, 1024, &kOne, nullptr, 1024, nullptr, 512, &kOne, nullptr, 1024);
}

void BM_Sgemm(benchmark::State& state) {
    for (auto _ : state)
        benchmark::DoNotOptimize(sgemm());
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Sgemm);

void BM_SgemmRecorded(benchmark::State& state) {
    pauseForTheWriter();
    for (auto _ : state)
        benchmark::DoNotOptimize(sgemm());
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SgemmRecorded)->Iterations(5000)->Repetitions(30)->ReportAggregatesOnly(true);

} // namespace

BENCHMARK_MAIN();
