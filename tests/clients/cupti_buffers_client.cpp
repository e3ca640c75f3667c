// Fills CUPTI's activity buffers as a GPU program would, with the stand-in libcupti (cupti_standin.cpp):
//   cupti_buffers_client STANDIN KERNELS
// Starts GPU capture as the CUDA driver does in cuInit (InitializeInjection; the agent loads STANDIN as
// its libcupti through TUNEUP_CUPTI_PATH), records an NVTX range (this thread's event buffer takes its
// part of the agent's budget), then has the stand-in make KERNELS kernel records and returns.

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>

int main(int argc, char** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s STANDIN KERNELS\n", argv[0]);
        return 2;
    }
    using Init = int (*)();
    const auto init = reinterpret_cast<Init>(dlsym(RTLD_DEFAULT, "InitializeInjection"));
    if (!init) {
        fprintf(stderr, "InitializeInjection not found: is the agent preloaded?\n");
        return 4;
    }
    init();
    nvtxRangePushA("before-kernels");
    nvtxRangePop();
    void* standin = dlopen(argv[1], RTLD_NOW | RTLD_NOLOAD);
    using Kernels = void (*)(int);
    const auto kernels = standin ? reinterpret_cast<Kernels>(dlsym(standin, "tuneup_standin_kernels")) : nullptr;
    if (!kernels) {
        fprintf(stderr, "the agent did not load %s\n", argv[1]);
        return 5;
    }
    kernels(atoi(argv[2]));
    return 0;
}
