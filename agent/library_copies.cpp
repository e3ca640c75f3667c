// Which copy of each interposed library served which calling library: meta library.<family> and, when
// a process holds more than one copy, library.<family>.loaded (interpose_resolve.h says why and how
// a call's copy is chosen). Runs once per (function, calling library), never on the call path.

#include "agent.h"
#include "interpose_resolve.h"
#include "log.h"
#include "writer.h"

#include <algorithm>
#include <chrono>
#include <dlfcn.h>
#include <link.h>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace tuneup::agent {

namespace {

std::string objectPath(const void* address) {
    Dl_info info {};
    if (!address || !dladdr(address, &info) || !info.dli_fname) return {};
    return info.dli_fname;
}

std::string fileName(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The loaded copies of a family's main library (libcublas.so.12 and libcublas.so.13 alike).
std::vector<std::string> loadedCopies(const LibraryFamily& family) {
    struct Search {
        const char* prefix;
        std::vector<std::string> paths;
    } search { family.prefixes[0], {} };
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            auto* s = static_cast<Search*>(data);
            const std::string path = info->dlpi_name ? info->dlpi_name : "";
            if (fileName(path).starts_with(s->prefix)) s->paths.push_back(path);
            return 0;
        },
        &search);
    return search.paths;
}

struct Copies {
    std::map<std::string, std::set<std::string>> callersByCopy; // copy path -> calling libraries' file names
    size_t loadedReported = 0;
};

std::timed_mutex s_mutex;
std::map<std::string, Copies>* s_families = new std::map<std::string, Copies>; // never freed: used at exit

// "COPY (called from A, B); COPY2 (called from C)"
std::string describe(const Copies& copies) {
    std::string text;
    for (const auto& [copy, callers] : copies.callersByCopy) {
        text += (text.empty() ? "" : "; ") + copy + " (called from ";
        bool first = true;
        for (const std::string& caller : callers) {
            text += (first ? "" : ", ") + caller;
            first = false;
        }
        text += ")";
    }
    return text;
}

} // namespace

void noteLibraryCopy(const LibraryFamily& family, const void* function, const void* caller) {
    try {
        if (!ensureStarted()) return; // disabled: the interposers only forward
        const std::string copy = objectPath(function);
        std::string callerName = fileName(objectPath(caller));
        if (copy.empty()) return;
        if (callerName.empty()) callerName = "code outside any library";
        const std::vector<std::string> loaded = loadedCopies(family);
        std::string value, loadedValue;
        {
            // Bounded: a child forked while another thread held it must not wait forever.
            std::unique_lock lock(s_mutex, std::chrono::milliseconds(100));
            if (!lock) return;
            Copies& copies = (*s_families)[family.name];
            if (!copies.callersByCopy[copy].insert(callerName).second && loaded.size() <= copies.loadedReported) return;
            value = describe(copies);
            if (loaded.size() > 1 && loaded.size() > copies.loadedReported) {
                copies.loadedReported = loaded.size();
                for (const std::string& path : loaded)
                    loadedValue += (loadedValue.empty() ? "" : "; ") + path;
            }
        }
        const std::string key = std::string("library.") + family.name;
        Writer::setMeta(key, value);
        if (!loadedValue.empty()) {
            Writer::setMeta(key + ".loaded", loadedValue);
            TUNEUP_LOG(Info, "%zu copies of %s are loaded (%s); each caller's calls go to the copy it links: %s",
                loaded.size(), family.name, loadedValue.c_str(), value.c_str());
        }
    } catch (...) {
        // Only a record is lost; the call goes on.
    }
}

} // namespace tuneup::agent
