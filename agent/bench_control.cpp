#include "bench_control.h"

#include "interpose_resolve.h"
#include "process_guard.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <mutex>
#include <string>
#include <unistd.h>

namespace tuneup::agent {

namespace {

// at::Context's setters and the getters that tell whether a setter is needed (libtorch_cpu.so, torch
// 1.13 through 2.x; a torch without one reports the fix as not applied).
constexpr const char* kGlobalContext = "_ZN2at13globalContextEv";
constexpr const char* kBenchmarkCuDNN = "_ZNK2at7Context14benchmarkCuDNNEv";
constexpr const char* kSetBenchmarkCuDNN = "_ZN2at7Context17setBenchmarkCuDNNEb";
constexpr const char* kSetAllowTF32CuBLAS = "_ZN2at7Context18setAllowTF32CuBLASEb";
constexpr const char* kSetAllowTF32CuDNN = "_ZN2at7Context17setAllowTF32CuDNNEb";
constexpr const char* kAnomalyEnabled = "_ZN5torch8autograd11AnomalyMode8_enabledE"; // static bool

using ContextGetter = void* (*)();
using ContextFlag = bool (*)(const void*);
using ContextSetter = void (*)(void*, bool);

struct Settings {
    bool controlled = false;
    std::string report; // TUNEUP_BENCH_REPORT
    bool cudnnBenchmark = false, tf32 = false, anomalyOff = false;
    long stopAfter = 0; // 0: never
    std::string stepRange = "step";
};

bool listed(std::string_view list, std::string_view name) {
    while (!list.empty()) {
        const size_t comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        item = item.substr(0, item.find('=')); // a value is not part of the name
        while (!item.empty() && item.front() == ' ')
            item.remove_prefix(1);
        while (!item.empty() && item.back() == ' ')
            item.remove_suffix(1);
        if (item == name) return true;
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
    }
    return false;
}

const Settings& settings() {
    static const Settings s = [] {
        Settings r;
        const char* report = getenv("TUNEUP_BENCH_REPORT");
        // The Python interpreter exports its API from the executable: a Python process has it.
        if (!report || !*report || dlsym(RTLD_DEFAULT, "Py_IsInitialized")) return r;
        r.controlled = true;
        r.report = report;
        const char* fixes = getenv("TUNEUP_FIX");
        const std::string_view list = fixes ? fixes : "";
        r.cudnnBenchmark = listed(list, "cudnn-benchmark");
        r.tf32 = listed(list, "tf32");
        r.anomalyOff = listed(list, "anomaly-off");
        if (const char* stop = getenv("TUNEUP_BENCH_STOP_AFTER")) r.stopAfter = std::max(0L, strtol(stop, nullptr, 10));
        if (const char* range = getenv("TUNEUP_BENCH_STEP_RANGE"); range && *range) r.stepRange = range;
        return r;
    }();
    return s;
}

// One JSON line, appended with one write (lines of several processes never interleave). Values are
// tuneup's own words: no escaping needed.
void writeLine(const char* format, const char* a = "", const char* b = "") {
    char line[512];
    const int n = snprintf(line, sizeof line, format, a, b, long(getpid()));
    if (n <= 0 || size_t(n) >= sizeof line) return;
    const int fd = open(settings().report.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return;
    ssize_t written;
    while ((written = write(fd, line, size_t(n))) < 0 && errno == EINTR) { }
    close(fd);
}

void reportFix(const char* fix, bool applied, const char* detail) {
    writeLine(applied
            ? "{\"event\": \"fix\", \"fix\": \"%s\", \"status\": \"applied\", \"detail\": \"%s\", \"pid\": %ld}\n"
            : "{\"event\": \"fix\", \"fix\": \"%s\", \"status\": \"not-applied\", \"detail\": \"%s\", "
              "\"pid\": %ld}\n",
        fix, detail);
}

struct Switches {
    ContextGetter globalContext = nullptr;
    ContextFlag benchmark = nullptr;
    ContextSetter setBenchmark = nullptr, setTf32Cublas = nullptr, setTf32Cudnn = nullptr;
    bool* anomaly = nullptr;
};

std::once_flag s_resolveOnce;
std::atomic<bool> s_resolved { false };
Switches s_switches;
std::atomic<bool> s_reportedBenchmark { false }, s_reportedTf32 { false }, s_reportedAnomaly { false };

// Resolves the switches once libtorch is loaded (it is from the first push of a linked program).
const Switches* switches() {
    if (s_resolved.load(std::memory_order_acquire)) return &s_switches;
    const std::string path = findLoadedLibrary({ "libtorch_cpu.so" });
    if (path.empty()) return nullptr;
    std::call_once(s_resolveOnce, [&path] {
        void* library = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
        Switches& s = s_switches;
        if (library) {
            s.globalContext = reinterpret_cast<ContextGetter>(dlsym(library, kGlobalContext));
            s.benchmark = reinterpret_cast<ContextFlag>(dlsym(library, kBenchmarkCuDNN));
            s.setBenchmark = reinterpret_cast<ContextSetter>(dlsym(library, kSetBenchmarkCuDNN));
            s.setTf32Cublas = reinterpret_cast<ContextSetter>(dlsym(library, kSetAllowTF32CuBLAS));
            s.setTf32Cudnn = reinterpret_cast<ContextSetter>(dlsym(library, kSetAllowTF32CuDNN));
        }
        // The program's copy of the flag (a copy relocation) when it has one, as the probes read it.
        s.anomaly = static_cast<bool*>(dlsym(RTLD_DEFAULT, kAnomalyEnabled));
        if (!s.anomaly && library) s.anomaly = static_cast<bool*>(dlsym(library, kAnomalyEnabled));
        const Settings& want = settings();
        if (want.cudnnBenchmark && !(s.globalContext && s.setBenchmark))
            reportFix("cudnn-benchmark", false, "this LibTorch has no at::Context::setBenchmarkCuDNN");
        if (want.tf32 && !(s.globalContext && s.setTf32Cublas && s.setTf32Cudnn))
            reportFix("tf32", false, "this LibTorch has no at::Context::setAllowTF32CuBLAS/CuDNN");
        if (want.anomalyOff && !s.anomaly)
            reportFix("anomaly-off", false, "this LibTorch has no torch::autograd::AnomalyMode flag");
        s_resolved.store(true, std::memory_order_release);
    });
    return &s_switches;
}

// Setters can throw (c10::Error) in torch versions that refuse a mix of APIs: the fix then did not apply.
void applySwitches() {
    const Settings& want = settings();
    if (!want.cudnnBenchmark && !want.tf32 && !want.anomalyOff) return;
    const Switches* s = switches();
    if (!s) return;
    void* context = s->globalContext ? s->globalContext() : nullptr;
    try {
        if (want.cudnnBenchmark && context && s->setBenchmark && !(s->benchmark && s->benchmark(context))) {
            s->setBenchmark(context, true);
            if (!s_reportedBenchmark.exchange(true))
                reportFix("cudnn-benchmark", true, "at::globalContext().setBenchmarkCuDNN(true)");
        }
        if (want.tf32 && context && s->setTf32Cublas && s->setTf32Cudnn) {
            s->setTf32Cublas(context, true);
            s->setTf32Cudnn(context, true);
            if (!s_reportedTf32.exchange(true))
                reportFix("tf32", true, "at::globalContext().setAllowTF32CuBLAS(true), setAllowTF32CuDNN(true)");
        }
    } catch (...) {
        reportFix(want.cudnnBenchmark ? "cudnn-benchmark" : "tf32", false, "the LibTorch setter threw");
    }
    if (want.anomalyOff && s->anomaly && *static_cast<volatile bool*>(s->anomaly)) {
        *static_cast<volatile bool*>(s->anomaly) = false; // what AnomalyMode::set_enabled(false) does
        if (!s_reportedAnomaly.exchange(true))
            reportFix("anomaly-off", true, "torch::autograd::AnomalyMode turned off");
    }
}

bool matchesStepRange(std::string_view name) {
    const std::string_view wanted = settings().stepRange;
    return name == wanted || (name.size() > wanted.size() && name.starts_with(wanted) && name[wanted.size()] == '#');
}

__attribute__((tls_model("initial-exec"))) thread_local int t_stepDepth = -1;
std::atomic<long> s_steps { 0 };

} // namespace

bool benchControlled() {
    return settings().controlled;
}

void benchNotePush(std::string_view name, int depth) {
    applySwitches();
    if (t_stepDepth < 0 && settings().stopAfter > 0 && matchesStepRange(name)) t_stepDepth = depth;
}

void benchNotePop(int depth) {
    if (depth < 0 || depth != t_stepDepth) return;
    t_stepDepth = -1;
    const long steps = s_steps.fetch_add(1) + 1;
    if (steps < settings().stopAfter) return;
    char count[24];
    snprintf(count, sizeof count, "%ld", steps);
    writeLine("{\"event\": \"stop\", \"steps\": %s%s, \"pid\": %ld}\n", count);
    fflush(nullptr);
    exitWithoutHandlers(0); // the file is finished first; no destructor of the program runs
}

} // namespace tuneup::agent
