// A stand-in for torch 2.9+'s libtorch_cpu.so (torch 2.x cannot be installed here): the accessors the
// torch probes call, declared exactly as in PyTorch 2.11's headers (aten/src/ATen/Context.h,
// ATen/autocast_mode.h, torch/csrc/autograd/anomaly_mode.h, torch/csrc/profiler/api.h), so the symbol
// names are the compiler's mangling of the real declarations, not the probe's own spelling. The legacy
// TF32 getters throw, as torch's do once a program mixes the old and new precision APIs.

#include <cstdint>
#include <optional>
#include <stdexcept>

namespace c10 {
enum class DeviceType : int8_t { CPU = 0, CUDA = 1 };
} // namespace c10

namespace at {

enum class Float32Backend { GENERIC, CUDA, MKLDNN };
enum class Float32Op { ALL, CONV, RNN, MATMUL };
enum class Float32Precision { NONE, IEEE, TF32, BF16, DEFAULT }; // DEFAULT since torch 2.13

class __attribute__((visibility("default"))) Context {
public:
    bool benchmarkCuDNN() const;
    bool deterministicCuDNN() const;
    bool allowTF32CuDNN(std::optional<Float32Op> op = std::nullopt) const;
    bool allowTF32CuBLAS() const;
    Float32Precision float32Precision(Float32Backend backend, Float32Op op) const;

    bool benchmark = false;
    Float32Precision matmul = Float32Precision::NONE, conv = Float32Precision::TF32, all = Float32Precision::IEEE;
};

__attribute__((visibility("default"))) Context& globalContext() {
    static Context context;
    return context;
}

bool Context::benchmarkCuDNN() const {
    return benchmark;
}
bool Context::deterministicCuDNN() const {
    return false;
}
bool Context::allowTF32CuDNN(std::optional<Float32Op>) const {
    throw std::runtime_error("mix of the legacy and new APIs to set the TF32 status");
}
bool Context::allowTF32CuBLAS() const {
    throw std::runtime_error("mix of the legacy and new APIs to set the TF32 status");
}
// As torch resolves it: the op's own setting, else the backend's, else the generic one.
Float32Precision Context::float32Precision(Float32Backend backend, Float32Op op) const {
    if (backend != Float32Backend::CUDA) return all;
    const Float32Precision own = op == Float32Op::MATMUL ? matmul
        : op == Float32Op::CONV                          ? conv
                                                         : Float32Precision::NONE;
    return own != Float32Precision::NONE ? own : all;
}

namespace autocast {
__attribute__((visibility("default"))) bool is_autocast_enabled(c10::DeviceType device) {
    return device == c10::DeviceType::CUDA && false;
}
} // namespace autocast

} // namespace at

namespace torch::profiler::impl {
__attribute__((visibility("default"))) bool profilerEnabled() {
    return false;
}
} // namespace torch::profiler::impl

// What a test changes, as a program would through torch.backends.
extern "C" __attribute__((visibility("default"))) void standin_set(
    int benchmark, int matmulPrecision, int convPrecision, int generic) {
    at::Context& c = at::globalContext();
    c.benchmark = benchmark != 0;
    c.matmul = at::Float32Precision(matmulPrecision);
    c.conv = at::Float32Precision(convPrecision);
    c.all = at::Float32Precision(generic);
}
