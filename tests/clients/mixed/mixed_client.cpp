// A process holding two copies of cuBLAS and cuDNN, each used by its own library (mixed_calls.cpp):
//   mixed_client CURRENT OLD global|local
// global: CURRENT (with libcublas.so.13 and libcudnn.so.9) is dlopen'ed RTLD_GLOBAL, then OLD (with
// libcublas.so.12 and libcudnn.so.8) RTLD_LOCAL; local: OLD first, then CURRENT, both RTLD_LOCAL (as
// Python loads two frameworks). Each cuBLAS copy logs the calls it receives to a callback of its own,
// so the output says which copy each library's GEMM reached:
//   old gemm <status> copy13=<calls> copy12=<calls>
//   old conv <status>

#include <cstdio>
#include <cstring>
#include <dlfcn.h>

namespace {

int s_calls[2]; // GEMM calls logged by libcublas.so.13, libcublas.so.12
const char* const kCopies[2] = { "libcublas.so.13", "libcublas.so.12" };

template <int Copy> void logged(const char* message) {
    if (strstr(message, "cublasSgemm_v2(") && strstr(message, " called")) ++s_calls[Copy];
}

template <int Copy> bool listen() {
    void* copy = dlopen(kCopies[Copy], RTLD_NOW | RTLD_NOLOAD);
    if (!copy) return fprintf(stderr, "%s is not loaded: %s\n", kCopies[Copy], dlerror()), false;
    using Configure = int (*)(int, int, int, const char*);
    using SetCallback = int (*)(void (*)(const char*));
    const auto configure = reinterpret_cast<Configure>(dlsym(copy, "cublasLoggerConfigure"));
    const auto setCallback = reinterpret_cast<SetCallback>(dlsym(copy, "cublasSetLoggerCallback"));
    return configure && setCallback && configure(1, 0, 0, nullptr) == 0 && setCallback(logged<Copy>) == 0;
}

void* load(const char* path, int mode) {
    void* library = dlopen(path, RTLD_NOW | mode);
    if (!library) fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    return library;
}

bool run(const char* name, void* library) {
    using Calls = void (*)(int*, int*);
    const auto calls = reinterpret_cast<Calls>(dlsym(library, "tuneup_mixed_calls"));
    if (!calls) return false;
    int gemm = -1, conv = -1;
    s_calls[0] = s_calls[1] = 0;
    calls(&gemm, &conv);
    printf("%s gemm %d copy13=%d copy12=%d\n%s conv %d\n", name, gemm, s_calls[0], s_calls[1], name, conv);
    return true;
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 4 || (strcmp(argv[3], "global") != 0 && strcmp(argv[3], "local") != 0)) {
        fprintf(stderr, "usage: %s CURRENT OLD global|local\n", argv[0]);
        return 2;
    }
    const bool global = strcmp(argv[3], "global") == 0;
    void *current = nullptr, *old = nullptr;
    if (global) {
        current = load(argv[1], RTLD_GLOBAL);
        old = load(argv[2], RTLD_LOCAL);
    } else {
        old = load(argv[2], RTLD_LOCAL);
        current = load(argv[1], RTLD_LOCAL);
    }
    if (!current || !old || !listen<0>() || !listen<1>()) return 1;
    setvbuf(stdout, nullptr, _IOLBF, 0);
    return run("old", old) && run("current", current) ? 0 : 1;
}
