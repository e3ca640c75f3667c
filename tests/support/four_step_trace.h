#pragma once
// A small trace that the reports' tests share: four steps on one H100, each a 1 ms pageable copy, 5 ms of
// GEMM and 2 ms of fill, the rest idle: pageable-memcpy and gpu-idle fire on it.

#include "model/trace_builder.h"

#include <string>

namespace tuneup::test {

inline constexpr std::string_view kFillKernel
    = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, at::detail::Array<char*, 1> >"
      "(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)";

// Adds the GPU and the four steps of `stepNs` each (10 ms unless said) to `b`.
inline void addFourSteps(analysis::TraceBuilder& b, int64_t stepNs = 10'000'000) {
    using namespace analysis;
    constexpr int64_t kMs = 1'000'000;
    DeviceInfo gpu;
    gpu.id = 0;
    gpu.name = "NVIDIA H100";
    gpu.computeMajor = 9;
    b.addDevice(gpu);
    const ThreadIndex thread = b.thread(100, 100);
    const StringId gemm = b.intern("volta_sgemm_128x64_nn"), fill = b.intern(kFillKernel);
    for (int s = 0; s < 4; ++s) {
        const int64_t t0 = 1'000 * kMs + s * stepNs;
        Annotation step;
        step.startNs = t0;
        step.endNs = t0 + stepNs;
        step.thread = thread;
        step.name = b.intern("ProfilerStep#" + std::to_string(s));
        b.addAnnotation(step);
        Memcpy copy;
        copy.startNs = t0;
        copy.endNs = t0 + kMs;
        copy.device = 0;
        copy.stream = 7;
        copy.bytes = 4 << 20;
        copy.copyKind = CopyKind::HtoD;
        copy.srcKind = MemoryKind::Pageable;
        copy.dstKind = MemoryKind::Device;
        b.addMemcpy(copy);
        Kernel k;
        k.device = 0;
        k.stream = 7;
        k.startNs = t0 + kMs;
        k.endNs = k.startNs + 5 * kMs;
        k.name = gemm;
        b.addKernel(k);
        k.startNs = k.endNs;
        k.endNs = k.startNs + 2 * kMs;
        k.name = fill;
        b.addKernel(k);
    }
}

} // namespace tuneup::test
