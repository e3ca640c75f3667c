#pragma once
// Finding the real library function behind one the agent interposes, for each caller. Every call of an
// interposed function reaches the agent (the preload comes first in every lookup), and a process may
// hold two copies of a library -- a toolkit's libcublas.so.12 beside a wheel's libcublas.so.13, each
// used by the framework that brought it. So a call goes on to the definition the caller's own
// reference would bind to without the agent, looked up as the dynamic loader does: with the symbol
// version the caller needs, first in the global scope after the agent, then among the caller's own
// dependencies (a library dlopen'ed RTLD_LOCAL with its CUDA libraries, as Python loads torch).
// dlsym(RTLD_NEXT) alone would take the first copy in the global scope whatever its version, and
// finds nothing when the caller's copy came in RTLD_LOCAL. Resolved once per calling library; a call
// then costs a load and a compare or two. Which copy served whom is recorded (library_copies.h).

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace tuneup::agent {

// A library the agent interposes, in all its copies and parts.
struct LibraryFamily {
    const char* name; // "cublas": meta library.cublas
    const char* const* prefixes; // file-name prefixes of its libraries, null-terminated; the main one first
};

// The path of a loaded object whose file name starts with one of `prefixes` ("libtorch_cpu.so" matches
// libtorch_cpu.so and libtorch_cpu.so.1.13), trying the prefixes in order; "" when none is loaded.
std::string findLoadedLibrary(std::initializer_list<const char*> prefixes);

// A resolution, and the addresses it holds for: the calling object's (or, for resolveBeside, the
// library copy's) mapped range; for a caller in no loaded object (generated code), its one address.
struct Resolved {
    void* function = nullptr;
    uintptr_t begin = 0, size = 0;
};

// The real `symbol` for a call that returns to `caller` (the interposer's __builtin_return_address(0)),
// as described above; last, the first copy of `family` among the loaded objects. Never one of the
// agent's own functions; null when none is loaded. The libraries found are kept loaded.
Resolved resolveForCaller(const char* symbol, const LibraryFamily& family, const void* caller);

// `symbol` from the library copy that holds `sibling`, one of its functions: the agent's own calls on
// behalf of an interposed call (descriptor getters) go to the copy that call went to.
Resolved resolveBeside(const char* symbol, const void* sibling);

// Resolutions by address range, filled once each and read without a lock.
class ResolvedCache {
public:
    void* find(uintptr_t address) const {
        const uint32_t n = m_count.load(std::memory_order_acquire);
        for (uint32_t i = 0; i < n; ++i)
            if (address - m_slots[i].begin < m_slots[i].size) [[likely]]
                return m_slots[i].function;
        return nullptr;
    }
    // Keeps `r` unless the table is full or another thread is adding (then the next call resolves again).
    void add(const Resolved& r);

private:
    static constexpr uint32_t kSlots = 8; // calling libraries of one function: a few at most
    Resolved m_slots[kSlots] {};
    std::atomic<uint32_t> m_count { 0 };
    std::atomic_flag m_adding {};
};

// Records that `function` served a call of `caller` (library_copies.cpp).
void noteLibraryCopy(const LibraryFamily& family, const void* function, const void* caller);

// One interposed function's real counterparts, resolved on first use by each calling library. A failed
// resolution is retried on the next call (the library may be loaded later); the caller then returns the
// library's error status.
template <class Fn> class RealFunction {
public:
    constexpr RealFunction(const char* symbol, const LibraryFamily& family)
        : m_symbol(symbol)
        , m_family(family) { }

    // For a call that returns to `caller`: pass the exported function's __builtin_return_address(0).
    Fn get(const void* caller) {
        if (void* f = m_callers.find(reinterpret_cast<uintptr_t>(caller))) [[likely]]
            return reinterpret_cast<Fn>(f);
        return resolve(caller);
    }
    // The same library copy's function as `sibling` (the real function of the call being recorded).
    Fn beside(const void* sibling) {
        if (void* f = m_siblings.find(reinterpret_cast<uintptr_t>(sibling))) [[likely]]
            return reinterpret_cast<Fn>(f);
        const Resolved r = resolveBeside(m_symbol, sibling);
        if (r.function) m_siblings.add(r);
        return reinterpret_cast<Fn>(r.function);
    }

private:
    __attribute__((noinline)) Fn resolve(const void* caller) {
        const Resolved r = resolveForCaller(m_symbol, m_family, caller);
        if (!r.function) return nullptr;
        m_callers.add(r);
        noteLibraryCopy(m_family, r.function, caller);
        return reinterpret_cast<Fn>(r.function);
    }

    ResolvedCache m_callers, m_siblings;
    const char* m_symbol;
    const LibraryFamily& m_family;
};

// Where the interposed call returns to, for RealFunction::get. Read in the exported function itself:
// inside a function inlined into it, GCC may give that function's own caller instead.
#define TUNEUP_CALLER __builtin_return_address(0)

// The interposed libraries, for RealFunction.
inline constexpr const char* kCublasPrefixes[] = { "libcublas.so", nullptr };
inline constexpr const char* kCublasLtPrefixes[] = { "libcublasLt.so", nullptr };
// cuDNN 9: libcudnn.so is a shim over the sub-libraries, which a program may also link directly.
inline constexpr const char* kCudnnPrefixes[]
    = { "libcudnn.so", "libcudnn_graph.so", "libcudnn_cnn.so", "libcudnn_ops.so", nullptr };
inline constexpr LibraryFamily kCublas { "cublas", kCublasPrefixes };
inline constexpr LibraryFamily kCublasLt { "cublasLt", kCublasLtPrefixes };
inline constexpr LibraryFamily kCudnn { "cudnn", kCudnnPrefixes };

} // namespace tuneup::agent
