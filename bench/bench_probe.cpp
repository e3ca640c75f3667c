// Cost of the torch probes (agent/torch_probe.h): a reading of every flag once libtorch is loaded,
// and the search for libtorch while it is not (each done at most every 200 ms per recording thread).
//   bench_probe [--libtorch PATH]   (default: libtorch_cpu.so from the loader's path)

#include "torch_probe.h"

#include <benchmark/benchmark.h>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <string>

namespace {

std::string s_libtorch = "libtorch_cpu.so";

void BM_SearchWhileTorchIsNotLoaded(benchmark::State& state) {
    tuneup::agent::TorchFlags flags;
    for (auto _ : state)
        benchmark::DoNotOptimize(tuneup::agent::readTorchFlags(flags));
}

void BM_ReadAllFlags(benchmark::State& state) {
    if (!dlopen(s_libtorch.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
        state.SkipWithError(("cannot load " + s_libtorch + ": " + dlerror()).c_str());
        return;
    }
    tuneup::agent::TorchFlags flags;
    if (!tuneup::agent::readTorchFlags(flags)) {
        state.SkipWithError("the probes did not find libtorch");
        return;
    }
    for (auto _ : state) {
        tuneup::agent::readTorchFlags(flags);
        benchmark::DoNotOptimize(flags);
    }
}

// In this order: the search first, while torch is not loaded.
BENCHMARK(BM_SearchWhileTorchIsNotLoaded);
BENCHMARK(BM_ReadAllFlags);

} // namespace

int main(int argc, char** argv) {
    for (int i = 1; i + 1 < argc; ++i)
        if (!strcmp(argv[i], "--libtorch")) {
            s_libtorch = argv[i + 1];
            memmove(argv + i, argv + i + 2, sizeof(char*) * size_t(argc - i - 1));
            argc -= 2;
            break;
        }
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
