// The torch probes (torch_probe.h) against a stand-in of torch 2.9+'s libtorch_cpu.so built from the real
// declarations (torch2_standin.cpp): TF32 is read through float32Precision(backend, op), whichever API set
// it, and the legacy getters -- which throw there -- are never what decides. Torch 1.13 itself is tested
// for real (tests/samples). Each case runs in a forked child: the probes resolve once per process.

#include "torch_probe.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace tuneup::agent {
namespace {

enum { kNone = 0, kIeee = 1, kTf32 = 2, kBf16 = 3, kDefault = 4 };

// In a child: loads the stand-in, sets its state, reads the flags; returns "benchmark,tf32.cublas,tf32.cudnn".
std::string readInChild(int benchmark, int matmul, int conv, int generic) {
    int fds[2];
    if (pipe(fds) != 0) return "pipe";
    const pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        std::string out = "no flags";
        if (void* torch = dlopen(TUNEUP_TORCH2_STANDIN, RTLD_NOW | RTLD_LOCAL)) {
            auto set = reinterpret_cast<void (*)(int, int, int, int)>(dlsym(torch, "standin_set"));
            set(benchmark, matmul, conv, generic);
            TorchFlags flags {};
            if (readTorchFlags(flags))
                out = std::to_string(flags.values[0]) + "," + std::to_string(flags.values[2]) + ","
                    + std::to_string(flags.values[3]);
        } else {
            out = dlerror();
        }
        if (write(fds[1], out.data(), out.size()) < 0) _exit(2);
        _exit(0);
    }
    close(fds[1]);
    std::string said;
    char chunk[256];
    for (ssize_t n; (n = read(fds[0], chunk, sizeof chunk)) > 0;)
        said.append(chunk, size_t(n));
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? said : "child died: " + said;
}

TEST(TorchProbeTorch2, Tf32FromFloat32Precision) {
    // set_float32_matmul_precision("high") / matmul.fp32_precision = "tf32"; cuDNN left at its default (tf32).
    EXPECT_EQ(readInChild(0, kTf32, kTf32, kIeee), "0,1,1");
    // matmul "ieee" (the default "highest"), cudnn.conv.fp32_precision = "ieee".
    EXPECT_EQ(readInChild(1, kIeee, kIeee, kIeee), "1,0,0");
}

TEST(TorchProbeTorch2, UnsetOpFallsBackToTheGenericPrecision) {
    EXPECT_EQ(readInChild(0, kNone, kNone, kTf32), "0,1,1");
    // Nothing set anywhere, torch 2.9+'s default for matmul: torch itself reads it as no TF32
    // (torch.backends.cuda.matmul.allow_tf32 is False; seen on torch 2.13).
    EXPECT_EQ(readInChild(0, kNone, kNone, kNone), "0,0,0");
}

TEST(TorchProbeTorch2, Bf16IsNoTf32AndTorchsInternalDefaultIsUnknown) {
    // matmul left at torch 2.13's internal DEFAULT (never what torch answers): unknown; conv "bf16": not TF32.
    EXPECT_EQ(readInChild(0, kDefault, kBf16, kNone), "0,-1,0");
}

} // namespace
} // namespace tuneup::agent
