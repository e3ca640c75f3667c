#include "interpose_resolve.h"

#include "log.h"

#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <vector>

namespace tuneup::agent {

namespace {

struct Search {
    std::vector<std::string> names; // every loaded object's path, in load order
};

int collect(dl_phdr_info* info, size_t, void* data) {
    if (info->dlpi_name && *info->dlpi_name) static_cast<Search*>(data)->names.emplace_back(info->dlpi_name);
    return 0;
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

} // namespace

std::string findLoadedLibrary(std::initializer_list<const char*> prefixes) {
    // Paths are copied out and the libraries opened afterwards: dlopen inside the callback would run
    // under the loader's lock.
    Search search;
    dl_iterate_phdr(collect, &search);
    for (const char* prefix : prefixes)
        for (const std::string& name : search.names)
            if (startsWith(name, prefix)) return name;
    return {};
}

void* resolveReal(const char* symbol, const char* const* libraries) {
    void* found = dlsym(RTLD_NEXT, symbol);
    if (found && !isAgentSymbol(found)) return found;
    Search search;
    dl_iterate_phdr(collect, &search);
    for (const char* const* prefix = libraries; prefix && *prefix; ++prefix)
        for (const std::string& name : search.names) {
            if (!startsWith(name, *prefix)) continue;
            void* library = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
            if (!library) continue;
            found = dlsym(library, symbol);
            if (found && !isAgentSymbol(found)) {
                TUNEUP_LOG(Debug, "%s from %s (not in the global scope: loaded RTLD_LOCAL)", symbol, name.c_str());
                return found;
            }
        }
    return nullptr;
}

} // namespace tuneup::agent
