// A native program that loads a library of its own, spends CPU time in it, unloads it and loads it again, for
// `ms` of CPU time (argument, default 1000): the agent's native stack sampler unwinds samples taken in that library
// on its writer thread while the library may be unloaded (tests/integration/native_stacks_test.cpp). Argument 2: the
// library's path.

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <dlfcn.h>

namespace {

double cpuMs() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

} // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: native_unload MS LIBRARY\n");
        return 2;
    }
    const double end = cpuMs() + std::atoi(argv[1]);
    volatile double sink = 0;
    int loads = 0;
    while (cpuMs() < end) {
        void* library = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
        if (!library) {
            std::fprintf(stderr, "native_unload: %s\n", dlerror());
            return 1;
        }
        using Spin = double (*)(double, int);
        const auto spin = reinterpret_cast<Spin>(dlsym(library, "spinInLoadedLibrary"));
        if (!spin) return 1;
        sink = sink + spin(loads, 3000); // about 0.1 ms
        if (dlclose(library) != 0) return 1;
        ++loads;
    }
    std::printf("native_unload: %d loads\n", loads);
    return 0;
}
