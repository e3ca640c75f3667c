#include "torch_probe.h"

#include "interpose_resolve.h"
#include "log.h"

#include <atomic>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <new>
#include <string>

namespace tuneup::agent {

namespace {

// Mangled names from libtorch_cpu.so (nm -D), stable from torch 1.13 through 2.x unless noted.
constexpr const char* kGlobalContext = "_ZN2at13globalContextEv";
constexpr const char* kBenchmarkCuDNN = "_ZNK2at7Context14benchmarkCuDNNEv";
constexpr const char* kDeterministicCuDNN = "_ZNK2at7Context18deterministicCuDNNEv";
// TF32, the newest API first. Torch 2.9+: Float32Precision float32Precision(Float32Backend, Float32Op)
// const, the precision each (backend, op) resolves to, whichever API the program used
// (torch.backends.cuda.matmul.fp32_precision, set_float32_matmul_precision, allow_tf32).
constexpr const char* kFloat32Precision = "_ZNK2at7Context16float32PrecisionENS_14Float32BackendENS_9Float32OpE";
enum : int { kBackendCuda = 1, kOpConv = 1, kOpMatmul = 3 }; // at::Float32Backend, at::Float32Op
// at::Float32Precision. NONE is what torch 2.9+ resolves an unset matmul to by default ("highest"): torch's own
// allow_tf32 reads it, as IEEE and BF16 (which CUDA does not take for float32), as "no TF32". DEFAULT
// (2.13+) is internal to torch and never the answer; a value past it is unknown.
enum : int { kPrecisionNone = 0, kPrecisionIeee = 1, kPrecisionTf32 = 2, kPrecisionBf16 = 3 };
// Torch 1.13-2.8: the legacy getters (allowTF32CuBLAS follows set_float32_matmul_precision since 1.12).
// On 2.7+ they throw (c10::Error) when the program mixed the old and new APIs: caught, TF32 unknown.
constexpr const char* kAllowTF32CuBLAS = "_ZNK2at7Context15allowTF32CuBLASEv";
constexpr const char* kAllowTF32CuDNN = "_ZNK2at7Context14allowTF32CuDNNEv";
constexpr const char* kAnomalyEnabled = "_ZN5torch8autograd11AnomalyMode8_enabledE"; // static bool
constexpr const char* kAutocastEnabled = "_ZN2at8autocast10is_enabledEv"; // torch < 2.4
constexpr const char* kAutocastEnabledFor = "_ZN2at8autocast19is_autocast_enabledEN3c1010DeviceTypeE";
constexpr const char* kProfilerEnabled = "_ZN5torch8profiler4impl15profilerEnabledEv";
constexpr int8_t kDeviceTypeCuda = 1; // c10::DeviceType::CUDA

using ContextGetter = void* (*)();
using ContextFlag = bool (*)(const void* context);
using Flag = bool (*)();
using FlagForDevice = bool (*)(int8_t deviceType);
using Precision = int (*)(const void* context, int backend, int op);

struct Symbols {
    ContextGetter globalContext = nullptr;
    ContextFlag benchmark = nullptr, deterministic = nullptr, tf32Cublas = nullptr, tf32Cudnn = nullptr;
    Precision precision = nullptr;
    const bool* anomaly = nullptr;
    Flag autocast = nullptr;
    FlagForDevice autocastFor = nullptr;
    Flag profiler = nullptr;
};

enum class State { Searching, Resolved };
std::atomic<State> s_state { State::Searching };
std::mutex s_resolveMutex;
Symbols s_symbols;

template <class T> T resolve(void* library, const char* symbol) {
    return reinterpret_cast<T>(dlsym(library, symbol));
}

bool tryResolve() {
    std::lock_guard lock(s_resolveMutex);
    if (s_state.load(std::memory_order_acquire) == State::Resolved) return true;
    const std::string path = findLoadedLibrary({ "libtorch_cpu.so" });
    if (path.empty()) return false;
    // RTLD_NOLOAD: a handle on the copy already loaded (torch may be RTLD_LOCAL), never a load.
    void* library = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (!library) return false;
    Symbols& s = s_symbols;
    s.globalContext = resolve<ContextGetter>(library, kGlobalContext);
    s.benchmark = resolve<ContextFlag>(library, kBenchmarkCuDNN);
    s.deterministic = resolve<ContextFlag>(library, kDeterministicCuDNN);
    s.precision = resolve<Precision>(library, kFloat32Precision);
    if (!s.precision) {
        s.tf32Cublas = resolve<ContextFlag>(library, kAllowTF32CuBLAS);
        s.tf32Cudnn = resolve<ContextFlag>(library, kAllowTF32CuDNN);
    }
    // A data symbol: a program linked against LibTorch has its own copy of it (a copy relocation) that
    // every reference, libtorch's included, uses; the global scope finds that copy. Torch loaded
    // RTLD_LOCAL (Python) has none, and its own definition is the live one.
    s.anomaly = resolve<const bool*>(RTLD_DEFAULT, kAnomalyEnabled);
    if (!s.anomaly) s.anomaly = resolve<const bool*>(library, kAnomalyEnabled);
    s.autocast = resolve<Flag>(library, kAutocastEnabled);
    if (!s.autocast) s.autocastFor = resolve<FlagForDevice>(library, kAutocastEnabledFor);
    s.profiler = resolve<Flag>(library, kProfilerEnabled);
    TUNEUP_LOG(Info, "torch probes: %s (context %s, cuDNN flags %s, TF32 %s, anomaly %s, autocast %s, profiler %s)",
        path.c_str(), s.globalContext ? "yes" : "no", s.benchmark ? "yes" : "no",
        s.precision        ? "float32Precision"
            : s.tf32Cublas ? "legacy"
                           : "no",
        s.anomaly ? "yes" : "no", s.autocast || s.autocastFor ? "yes" : "no", s.profiler ? "yes" : "no");
    s_state.store(State::Resolved, std::memory_order_release);
    return true;
}

// Torch's getters may throw (c10::Error): the flag then reads as unknown, and the exception stops here.
int8_t readFlag(ContextFlag flag, const void* context) {
    try {
        return flag && context ? int8_t(flag(context)) : -1;
    } catch (...) {
        return -1;
    }
}

int8_t readTf32(const Symbols& s, ContextFlag legacy, int op, const void* context) {
    if (!s.precision) return readFlag(legacy, context);
    try {
        const int precision = context ? s.precision(context, kBackendCuda, op) : -1;
        if (precision == kPrecisionTf32) return 1;
        const bool notTf32 = precision == kPrecisionNone || precision == kPrecisionIeee || precision == kPrecisionBf16;
        return notTf32 ? 0 : -1;
    } catch (...) {
        return -1;
    }
}

} // namespace

bool readTorchFlags(TorchFlags& out) {
    if (s_state.load(std::memory_order_acquire) != State::Resolved && !tryResolve()) return false;
    const Symbols& s = s_symbols;
    const void* context = s.globalContext ? s.globalContext() : nullptr;
    out.values[0] = readFlag(s.benchmark, context);
    out.values[1] = readFlag(s.deterministic, context);
    out.values[2] = readTf32(s, s.tf32Cublas, kOpMatmul, context);
    out.values[3] = readTf32(s, s.tf32Cudnn, kOpConv, context);
    out.values[4] = s.anomaly ? int8_t(*static_cast<const volatile bool*>(s.anomaly)) : -1;
    out.values[5] = s.autocast ? int8_t(s.autocast()) : s.autocastFor ? int8_t(s.autocastFor(kDeviceTypeCuda)) : -1;
    out.values[6] = s.profiler ? int8_t(s.profiler()) : -1;
    return true;
}

void resetTorchProbeAfterFork() {
    new (&s_resolveMutex) std::mutex;
}

} // namespace tuneup::agent
