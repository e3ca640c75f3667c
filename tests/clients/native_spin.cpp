// A native program whose main thread spends its CPU time in one place of its own code, called through libm: the
// agent's sampled native stacks must name this file and the line marked below (tests/integration/
// native_stacks_test.cpp). Built with debug information, without frame pointers: the agent unwinds with the
// unwind tables. Argument: how long to spin, in ms of CPU time (default 400); "fork": a child spins too, and marks an
// event through the agent when it is there, so that it records (its own file, its own samples).

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

volatile double g_sink = 0;

__attribute__((noinline)) double spinInUserCode(double x) {
    double sum = 0;
    for (int i = 0; i < 20000; ++i)
        sum += std::sin(x + i); // native-spin: the hot line
    return sum;
}

// `ms` of this thread's CPU time, the sampler's clock: as many samples on a loaded machine as on an idle one.
double cpuMs() {
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

void spinFor(int ms) {
    const double end = cpuMs() + ms;
    for (double x = 0; cpuMs() < end; x += 1)
        g_sink = g_sink + spinInUserCode(x);
}

} // namespace

int main(int argc, char** argv) {
    const bool fork = argc > 2 && std::strcmp(argv[2], "fork") == 0;
    const int ms = argc > 1 ? std::atoi(argv[1]) : 400;
    const pid_t child = fork ? ::fork() : -1;
    if (child == 0)
        if (const auto mark = reinterpret_cast<void (*)(const char*, int64_t)>(dlsym(RTLD_DEFAULT, "tuneup_mark")))
            mark("native_spin.child", 1);
    spinFor(ms);
    if (child == 0) _exit(0);
    int status = 0;
    if (child > 0 && (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0))
        return 1; // the child did not end well
    return 0;
}
