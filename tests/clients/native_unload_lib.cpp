// A library native_unload loads, runs and unloads again and again: its code and unwind tables are unmapped while the
// agent may be unwinding a sample taken in it.

#include <cmath>

extern "C" __attribute__((visibility("default"), noinline)) double spinInLoadedLibrary(double x, int rounds) {
    double sum = 0;
    for (int i = 0; i < rounds; ++i)
        sum += std::sin(x + i);
    return sum;
}
