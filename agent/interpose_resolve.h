#pragma once
// Finding the real library function behind one the agent interposes. dlsym(RTLD_NEXT) finds it when the
// library is in the global scope. When the library came in with dlopen(RTLD_LOCAL) -- Python loads torch so,
// and torch's CUDA libraries with it -- calls still reach the agent (the preload comes first in every lookup)
// but RTLD_NEXT finds nothing: the library is then found among the loaded objects (dl_iterate_phdr) and
// opened with dlopen(RTLD_NOLOAD), which never loads anything. Each function is resolved once and cached.

#include <atomic>
#include <initializer_list>
#include <string>

namespace tuneup::agent {

// The path of a loaded object whose file name starts with one of `prefixes` ("libtorch_cpu.so" matches
// libtorch_cpu.so and libtorch_cpu.so.1.13), trying the prefixes in order; "" when none is loaded.
std::string findLoadedLibrary(std::initializer_list<const char*> prefixes);

// The real `symbol`: dlsym(RTLD_NEXT), else from a loaded library whose file name starts with one of
// `libraries` (a null-terminated list). Never one of the agent's own functions; null when not found.
void* resolveReal(const char* symbol, const char* const* libraries);

// One interposed function's real counterpart, resolved on first use. A failed resolution is retried on
// the next call (the library may be loaded later); the caller then returns the library's error status.
template <class Fn> class RealFunction {
public:
    constexpr RealFunction(const char* symbol, const char* const* libraries)
        : m_symbol(symbol)
        , m_libraries(libraries) { }
    Fn get() {
        if (Fn f = m_function.load(std::memory_order_acquire)) [[likely]]
            return f;
        Fn f = reinterpret_cast<Fn>(resolveReal(m_symbol, m_libraries));
        if (f) m_function.store(f, std::memory_order_release);
        return f;
    }

private:
    std::atomic<Fn> m_function { nullptr };
    const char* m_symbol;
    const char* const* m_libraries;
};

// Library file-name prefixes, for RealFunction.
inline constexpr const char* kCublasLibraries[] = { "libcublas.so", nullptr };
inline constexpr const char* kCublasLtLibraries[] = { "libcublasLt.so", nullptr };
// cuDNN 9: libcudnn.so is a shim over the sub-libraries, which a program may also link directly.
inline constexpr const char* kCudnnLibraries[]
    = { "libcudnn.so", "libcudnn_graph.so", "libcudnn_cnn.so", "libcudnn_ops.so", nullptr };

} // namespace tuneup::agent
