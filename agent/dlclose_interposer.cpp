// dlclose, defined by the agent when it is LD_PRELOADed so that the program's calls reach it first (built into
// libtuneup-agent.so only): a library is not unloaded while the native stack sampler unwinds through it
// (module_unload_lock.h). The wait is one drain's unwinding at most, a few milliseconds, and only while a sample
// is being unwound.

#include "module_unload_lock.h"

#include <dlfcn.h>

namespace {

using Dlclose = int (*)(void*);

Dlclose realDlclose() {
    return reinterpret_cast<Dlclose>(dlsym(RTLD_NEXT, "dlclose"));
}

Dlclose s_realDlclose = nullptr;

__attribute__((constructor(101))) void resolveRealDlclose() {
    s_realDlclose = realDlclose();
}

} // namespace

extern "C" __attribute__((visibility("default"))) int dlclose(void* handle) {
    // Called before the constructor above (from another library's constructor): resolve now.
    if (!s_realDlclose) s_realDlclose = realDlclose();
    if (!s_realDlclose) return 0; // never: libc defines it. Unloading nothing is safe; crashing is not.
    tuneup::agent::ModuleUnloadsHeld held;
    return s_realDlclose(handle);
}
