// A small CUDA program for scripts/gpu-check.sh that needs no nvcc and no CUDA headers: it reaches
// the driver through dlopen, JIT-compiles a PTX kernel and does each kind of work the agent records:
// kernel launches, pageable and pinned host-to-device copies, a device-to-host copy, a memset and
// context/stream synchronisation.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <vector>

namespace {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUstream = void*;
using CUdeviceptr = unsigned long long;

// y[i] = a * x[i] + y[i] for i < n
const char* kSaxpyPtx = R"(
.version 6.0
.target sm_50
.address_size 64
.visible .entry saxpy(.param .u64 x, .param .u64 y, .param .f32 a, .param .u32 n)
{
  .reg .pred p; .reg .b32 r<5>; .reg .f32 f<4>; .reg .b64 rd<8>;
  ld.param.u64 rd1, [x]; ld.param.u64 rd2, [y]; ld.param.f32 f1, [a]; ld.param.u32 r1, [n];
  mov.u32 r2, %ctaid.x; mov.u32 r3, %ntid.x; mov.u32 r4, %tid.x; mad.lo.s32 r2, r2, r3, r4;
  setp.ge.u32 p, r2, r1; @p bra done;
  cvta.to.global.u64 rd3, rd1; cvta.to.global.u64 rd4, rd2; mul.wide.u32 rd5, r2, 4;
  add.s64 rd6, rd3, rd5; add.s64 rd7, rd4, rd5; ld.global.f32 f2, [rd6]; ld.global.f32 f3, [rd7];
  fma.rn.f32 f3, f1, f2, f3; st.global.f32 [rd7], f3;
done:
  ret;
}
)";

template <typename F> F load(void* lib, const char* name) {
    void* symbol = dlsym(lib, name);
    if (!symbol) {
        fprintf(stderr, "cuda_check: %s not found in libcuda\n", name);
        exit(3);
    }
    return reinterpret_cast<F>(symbol);
}

#define CHECK(call)                                                                                                    \
    do {                                                                                                               \
        CUresult rc = (call);                                                                                          \
        if (rc != 0) {                                                                                                 \
            fprintf(stderr, "cuda_check: %s failed with CUDA error %d\n", #call, rc);                                  \
            return 1;                                                                                                  \
        }                                                                                                              \
    } while (0)

} // namespace

int main() {
    void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!cuda) {
        fprintf(stderr, "cuda_check: no CUDA driver (libcuda.so.1): %s\n", dlerror());
        return 2;
    }
    auto cuInit = load<CUresult (*)(unsigned)>(cuda, "cuInit");
    auto cuDeviceGet = load<CUresult (*)(CUdevice*, int)>(cuda, "cuDeviceGet");
    auto cuCtxCreate = load<CUresult (*)(CUcontext*, unsigned, CUdevice)>(cuda, "cuCtxCreate_v2");
    auto cuModuleLoadData = load<CUresult (*)(CUmodule*, const void*)>(cuda, "cuModuleLoadData");
    auto cuModuleGetFunction = load<CUresult (*)(CUfunction*, CUmodule, const char*)>(cuda, "cuModuleGetFunction");
    auto cuMemAlloc = load<CUresult (*)(CUdeviceptr*, size_t)>(cuda, "cuMemAlloc_v2");
    auto cuMemAllocHost = load<CUresult (*)(void**, size_t)>(cuda, "cuMemAllocHost_v2");
    auto cuMemcpyHtoD = load<CUresult (*)(CUdeviceptr, const void*, size_t)>(cuda, "cuMemcpyHtoD_v2");
    auto cuMemcpyDtoH = load<CUresult (*)(void*, CUdeviceptr, size_t)>(cuda, "cuMemcpyDtoH_v2");
    auto cuMemsetD8 = load<CUresult (*)(CUdeviceptr, unsigned char, size_t)>(cuda, "cuMemsetD8_v2");
    auto cuStreamCreate = load<CUresult (*)(CUstream*, unsigned)>(cuda, "cuStreamCreate");
    auto cuStreamSynchronize = load<CUresult (*)(CUstream)>(cuda, "cuStreamSynchronize");
    auto cuCtxSynchronize = load<CUresult (*)()>(cuda, "cuCtxSynchronize");
    auto cuLaunchKernel = load<CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
        unsigned, CUstream, void**, void**)>(cuda, "cuLaunchKernel");
    auto cuCtxDestroy = load<CUresult (*)(CUcontext)>(cuda, "cuCtxDestroy_v2");

    CHECK(cuInit(0));
    CUdevice device;
    CHECK(cuDeviceGet(&device, 0));
    CUcontext context;
    CHECK(cuCtxCreate(&context, 0, device));
    CUmodule module;
    CHECK(cuModuleLoadData(&module, kSaxpyPtx));
    CUfunction saxpy;
    CHECK(cuModuleGetFunction(&saxpy, module, "saxpy"));
    CUstream stream;
    CHECK(cuStreamCreate(&stream, 0));

    const unsigned n = 1 << 20;
    const size_t bytes = n * sizeof(float);
    std::vector<float> pageable(n, 1.0f);
    float* pinned = nullptr;
    CHECK(cuMemAllocHost(reinterpret_cast<void**>(&pinned), bytes));
    for (unsigned i = 0; i < n; ++i)
        pinned[i] = 2.0f;
    CUdeviceptr x, y;
    CHECK(cuMemAlloc(&x, bytes));
    CHECK(cuMemAlloc(&y, bytes));
    CHECK(cuMemcpyHtoD(x, pageable.data(), bytes)); // pageable -> device
    CHECK(cuMemcpyHtoD(y, pinned, bytes)); // pinned -> device
    CHECK(cuMemsetD8(y, 0, bytes / 2));
    float a = 3.0f;
    unsigned count = n;
    void* args[] = { &x, &y, &a, &count };
    for (int i = 0; i < 10; ++i)
        CHECK(cuLaunchKernel(saxpy, (n + 255) / 256, 1, 1, 256, 1, 1, 0, stream, args, nullptr));
    CHECK(cuStreamSynchronize(stream));
    CHECK(cuMemcpyDtoH(pageable.data(), y, bytes));
    CHECK(cuCtxSynchronize());
    const bool correct = pageable[0] == 30.0f && pageable[n - 1] == 32.0f;
    printf("cuda_check: 10 saxpy kernels, 2 HtoD copies (pageable, pinned), 1 DtoH, 1 memset: %s\n",
        correct ? "results correct" : "WRONG RESULTS");
    CHECK(cuCtxDestroy(context));
    return correct ? 0 : 1;
}
