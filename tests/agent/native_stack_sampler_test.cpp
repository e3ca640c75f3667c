// The agent's sampler of native stacks (native_stack_sampler.h): which code is the user's, and a real sampler on
// this very thread, unwound through libm.

#include "native_stack_sampler.h"

#include <cmath>
#include <ctime>
#include <gtest/gtest.h>
#include <string>
#include <sys/syscall.h>
#include <unistd.h>

namespace tuneup::agent {
namespace {

TEST(IsUserCodeModule, TheProgramAndItsOwnLibrariesAre) {
    EXPECT_TRUE(isUserCodeModule("/home/ada/project/build/train"));
    EXPECT_TRUE(isUserCodeModule("/home/ada/project/build/libmodel.so"));
    EXPECT_TRUE(isUserCodeModule("/usr/local/bin/trainer"));
    EXPECT_TRUE(isUserCodeModule("/opt/app/lib/libaugment.so.2"));
}

TEST(IsUserCodeModule, TheSystemsPyTorchsCudasAndTuneupsAreNot) {
    for (const char* path : { "/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libm.so.6",
             "/usr/bin/python3.11", "/bin/bash", "/usr/local/cuda/lib64/libcublas.so.13",
             "/home/ada/venv/lib/python3.12/site-packages/torch/lib/libtorch_cpu.so",
             "/home/ada/venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudnn.so.9", "/opt/libtorch/lib/libc10.so",
             "/opt/libtorch/lib/libtorch_cuda.so", "/opt/tuneup/lib/libtuneup-agent.so", "/home/ada/libgomp.so.1",
             "[vdso]", "", "relative/libfoo.so" })
        EXPECT_FALSE(isUserCodeModule(path)) << path;
}

__attribute__((noinline)) double spinHere(double x) {
    double sum = 0;
    for (int i = 0; i < 5000; ++i)
        sum += std::sin(x + i);
    return sum;
}

TEST(NativeStackSampler, SamplesThisThreadInItsOwnCode) {
    std::string why;
    const auto sampler = NativeStackSampler::open(int(syscall(SYS_gettid)), 2'000'000, why);
    if (!sampler && why.starts_with("perf_event_open refused")) GTEST_SKIP() << why; // this kernel samples nothing
    ASSERT_TRUE(sampler) << why;
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ASSERT_GT(n, 0);
    const std::string self(exe, size_t(n));
    size_t frames = 0;
    const auto drain = [&] {
        sampler->drain([&](uint64_t timeNs, const UserFrame& frame) {
            ++frames;
            EXPECT_GT(timeNs, 0u);
            EXPECT_EQ(frame.module, self);
            EXPECT_GT(frame.address, 0u);
        });
    };
    // 100 ms of this thread's CPU time (the sampler's clock, whatever the machine's load), drained every 10 ms of it
    // as the writer drains: the kernel's buffer holds about 15 samples.
    const auto cpuMs = [] {
        timespec t;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
    };
    volatile double sink = 0;
    const double start = cpuMs();
    for (int slice = 1; slice <= 10; ++slice) {
        for (double x = 0; cpuMs() < start + 10 * slice; x += 1)
            sink = sink + spinHere(x);
        drain();
    }
    EXPECT_EQ(sampler->stats().lost, 0u);
    EXPECT_GE(sampler->stats().samples, 20u);
    EXPECT_EQ(frames, sampler->stats().withUserFrame);
    EXPECT_GE(frames * 4, sampler->stats().samples * 3) << "most samples reach this test's code";
    size_t again = 0;
    sampler->drain([&](uint64_t, const UserFrame&) { ++again; });
    // Each sample is read once: only one taken while the last drain ran (under a millisecond of CPU) can be left.
    EXPECT_LE(again, 1u);
}

} // namespace
} // namespace tuneup::agent
