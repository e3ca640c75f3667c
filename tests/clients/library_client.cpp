// Loads tests/clients/library_calls (linked against the real cuBLAS, cuBLASLt and cuDNN) the way a program
// or Python would, and runs its calls:
//   library_client LIBRARY global|local SCENARIO...
// `local` dlopens it RTLD_LOCAL, as Python loads torch: the CUDA libraries are then outside the global
// scope, where dlsym(RTLD_NEXT) cannot see them. SCENARIO: gemm, lt, legacy, backend, nested or all.

#include <cstdio>
#include <cstring>
#include <dlfcn.h>

int main(int argc, char** argv) {
    if (argc < 4 || (strcmp(argv[2], "global") != 0 && strcmp(argv[2], "local") != 0)) {
        fprintf(stderr, "usage: %s LIBRARY global|local SCENARIO...\n", argv[0]);
        return 2;
    }
    const int mode = RTLD_NOW | (strcmp(argv[2], "local") == 0 ? RTLD_LOCAL : RTLD_GLOBAL);
    void* library = dlopen(argv[1], mode);
    if (!library) {
        fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
        return 1;
    }
    using Run = int (*)(const char*);
    const auto run = reinterpret_cast<Run>(dlsym(library, "tuneup_library_calls"));
    if (!run) {
        fprintf(stderr, "dlsym tuneup_library_calls: %s\n", dlerror());
        return 1;
    }
    setvbuf(stdout, nullptr, _IOLBF, 0);
    for (int i = 3; i < argc; ++i)
        if (int rc = run(argv[i])) return rc;
    return 0;
}
