#include "interpose_resolve.h"

#include "log.h"
#include "symbol_version.h"

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <vector>

namespace tuneup::agent {

namespace {

int collect(dl_phdr_info* info, size_t, void* data) {
    if (info->dlpi_name && *info->dlpi_name)
        static_cast<std::vector<std::string>*>(data)->emplace_back(info->dlpi_name);
    return 0;
}

// Every loaded object's path, in load order. Paths are copied out and the libraries opened afterwards:
// dlopen inside the callback would run under the loader's lock.
std::vector<std::string> loadedObjects() {
    std::vector<std::string> names;
    dl_iterate_phdr(collect, &names);
    return names;
}

bool startsWith(const std::string& path, const char* prefix) {
    const size_t slash = path.rfind('/');
    const char* base = path.c_str() + (slash == std::string::npos ? 0 : slash + 1);
    return strncmp(base, prefix, strlen(prefix)) == 0;
}

// The agent's own load address: a symbol found there is one of ours, never the real one.
const void* agentBase() {
    static const void* base = [] {
        Dl_info info {};
        return dladdr(reinterpret_cast<const void*>(&agentBase), &info) ? info.dli_fbase : nullptr;
    }();
    return base;
}

bool isAgentSymbol(void* symbol) {
    Dl_info info {};
    return symbol && dladdr(symbol, &info) && info.dli_fbase == agentBase();
}

// `symbol` at `version` ("" for the default one) in the scope `handle` stands for, never the agent's.
void* lookup(void* handle, const char* symbol, const std::string& version) {
    void* found = version.empty() ? dlsym(handle, symbol) : dlvsym(handle, symbol, version.c_str());
    return found && !isAgentSymbol(found) ? found : nullptr;
}

// The object holding `address` (its link map), null when none does or it is the agent.
link_map* objectAt(const void* address) {
    Dl_info info {};
    link_map* object = nullptr;
    if (!address || !dladdr1(address, &info, reinterpret_cast<void**>(&object), RTLD_DL_LINKMAP)) return nullptr;
    return info.dli_fbase == agentBase() ? nullptr : object;
}

// The span of an object's loaded segments.
struct Span {
    const link_map* object;
    uintptr_t begin = UINTPTR_MAX, end = 0;
};

int spanOf(dl_phdr_info* info, size_t, void* data) {
    auto* span = static_cast<Span*>(data);
    if (info->dlpi_addr != span->object->l_addr
        || strcmp(info->dlpi_name ? info->dlpi_name : "", span->object->l_name) != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_LOAD) {
            const uintptr_t start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
            span->begin = std::min(span->begin, start);
            span->end = std::max(span->end, uintptr_t(start + info->dlpi_phdr[i].p_memsz));
        }
    return 1;
}

// Where `address` belongs: its object's span, or the address alone (code in no object).
void setRange(Resolved& r, const link_map* object, const void* address) {
    Span span { object };
    if (object) dl_iterate_phdr(spanOf, &span);
    if (span.begin < span.end) {
        r.begin = span.begin;
        r.size = span.end - span.begin;
    } else {
        r.begin = reinterpret_cast<uintptr_t>(address);
        r.size = 1;
    }
}

// A library's handle for lookups in it and its dependencies, without loading anything. Never closed:
// a library the agent resolved from stays loaded, so that no cached function outlives its code.
void* openLoaded(const char* path) {
    return path && *path ? dlopen(path, RTLD_LAZY | RTLD_NOLOAD) : nullptr;
}

} // namespace

std::string findLoadedLibrary(std::initializer_list<const char*> prefixes) {
    const std::vector<std::string> names = loadedObjects();
    for (const char* prefix : prefixes)
        for (const std::string& name : names)
            if (startsWith(name, prefix)) return name;
    return {};
}

Resolved resolveForCaller(const char* symbol, const LibraryFamily& family, const void* caller) {
    Resolved r;
    const link_map* object = objectAt(caller);
    const std::string version = versionNeeded(object, symbol);
    setRange(r, object, caller);
    // The loader looks in the global scope first: the program, its preloads and libraries, and those
    // dlopen'ed RTLD_GLOBAL. RTLD_NEXT is that scope after the agent.
    r.function = lookup(RTLD_NEXT, symbol, version);
    if (r.function) return r;
    // Then in the caller's own dependencies, when it was dlopen'ed RTLD_LOCAL with them (python's torch).
    if (object && *object->l_name)
        if (void* self = openLoaded(object->l_name); self && (r.function = lookup(self, symbol, version))) {
            TUNEUP_LOG(Debug, "%s for %s (not in the global scope: loaded RTLD_LOCAL)", symbol, object->l_name);
            return r;
        }
    // A caller that is no object or does not refer to the symbol itself: the first loaded copy.
    for (const char* const* prefix = family.prefixes; prefix && *prefix; ++prefix)
        for (const std::string& name : loadedObjects())
            if (startsWith(name, *prefix))
                if (void* library = openLoaded(name.c_str());
                    library && (r.function = lookup(library, symbol, version))) {
                    TUNEUP_LOG(Debug, "%s from %s (not in the global scope: loaded RTLD_LOCAL)", symbol, name.c_str());
                    return r;
                }
    return r;
}

Resolved resolveBeside(const char* symbol, const void* sibling) {
    Resolved r;
    const link_map* library = objectAt(sibling);
    if (!library) return r;
    // The main program's handle is the global scope: none of the agent's functions is looked up this way.
    void* handle = *library->l_name ? openLoaded(library->l_name) : dlopen(nullptr, RTLD_LAZY);
    if (handle) r.function = lookup(handle, symbol, "");
    setRange(r, library, sibling);
    return r;
}

void ResolvedCache::add(const Resolved& r) {
    // A lock-free reader sees a slot only once m_count covers it; writers take turns, and a writer
    // that finds the table busy leaves the slot to a later call rather than wait (never blocks, even
    // in a child forked while another thread was adding).
    if (m_adding.test_and_set(std::memory_order_acquire)) return;
    const uint32_t n = m_count.load(std::memory_order_relaxed);
    bool known = false;
    for (uint32_t i = 0; i < n; ++i)
        known = known || (m_slots[i].begin == r.begin && m_slots[i].size == r.size);
    if (!known && n < kSlots) {
        m_slots[n] = r;
        m_count.store(n + 1, std::memory_order_release);
    }
    m_adding.clear(std::memory_order_release);
}

} // namespace tuneup::agent
