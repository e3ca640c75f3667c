#include "cupti_loader.h"

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <vector>

namespace tuneup::agent {

namespace {

// Sonames of the CUPTI releases whose records the decoder reads (CUDA 11.8, 11.x, 12.x, 13.x).
constexpr const char* kCuptiNames[]
    = { "libcupti.so", "libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8", "libcupti.so.11" };

bool isCuptiPath(const char* path) {
    const char* slash = strrchr(path, '/');
    const char* base = slash ? slash + 1 : path;
    return strncmp(base, "libcupti.so", strlen("libcupti.so")) == 0;
}

// The path of a libcupti already mapped into the process (dlopen'ed RTLD_LOCAL by torch, say).
std::string loadedCuptiPath() {
    std::string found;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            if (info->dlpi_name && *info->dlpi_name && isCuptiPath(info->dlpi_name)) {
                *static_cast<std::string*>(data) = info->dlpi_name;
                return 1;
            }
            return 0;
        },
        &found);
    return found;
}

template <typename F> bool resolve(void* handle, const char* name, F& out) {
    out = reinterpret_cast<F>(dlsym(handle, name));
    return out != nullptr;
}

// Fills `api` from `handle`; returns the first missing required symbol, or null.
const char* resolveAll(void* handle, CuptiApi& api) {
#define TUNEUP_REQUIRE(member, symbol)                                                                                 \
    if (!resolve(handle, #symbol, api.member)) return #symbol;
    TUNEUP_REQUIRE(getVersion, cuptiGetVersion)
    TUNEUP_REQUIRE(getResultString, cuptiGetResultString)
    TUNEUP_REQUIRE(getTimestamp, cuptiGetTimestamp)
    TUNEUP_REQUIRE(subscribe, cuptiSubscribe)
    TUNEUP_REQUIRE(unsubscribe, cuptiUnsubscribe)
    TUNEUP_REQUIRE(enableCallback, cuptiEnableCallback)
    TUNEUP_REQUIRE(activityEnable, cuptiActivityEnable)
    TUNEUP_REQUIRE(activityDisable, cuptiActivityDisable)
    TUNEUP_REQUIRE(activitySetAttribute, cuptiActivitySetAttribute)
    TUNEUP_REQUIRE(activityRegisterCallbacks, cuptiActivityRegisterCallbacks)
    TUNEUP_REQUIRE(activityGetNextRecord, cuptiActivityGetNextRecord)
    TUNEUP_REQUIRE(activityGetNumDroppedRecords, cuptiActivityGetNumDroppedRecords)
    TUNEUP_REQUIRE(activityFlushAll, cuptiActivityFlushAll)
#undef TUNEUP_REQUIRE
    resolve(handle, "cuptiSubscribe_v2", api.subscribeV2);
    resolve(handle, "cuptiGetCallbackName", api.getCallbackName);
    resolve(handle, "cuptiActivityRegisterTimestampCallback", api.activityRegisterTimestampCallback);
    resolve(handle, "cuptiSetThreadIdType", api.setThreadIdType);
    resolve(handle, "cuptiActivityPushExternalCorrelationId", api.pushExternalCorrelationId);
    resolve(handle, "cuptiActivityPopExternalCorrelationId", api.popExternalCorrelationId);
    return nullptr;
}

// Tries one handle; on a missing symbol notes it in `tried` and gives the handle back.
bool adopt(void* handle, const std::string& path, bool reused, CuptiApi& api, std::string& tried) {
    CuptiApi candidate;
    if (const char* missing = resolveAll(handle, candidate)) {
        tried += "; " + path + " lacks " + missing;
        dlclose(handle); // only drops our reference: a reused library stays loaded
        return false;
    }
    candidate.handle = handle;
    candidate.path = path;
    candidate.reused = reused;
    api = std::move(candidate);
    return true;
}

} // namespace

std::string CuptiApi::resultString(CUptiResult result) const {
    const char* text = nullptr;
    if (getResultString && getResultString(result, &text) == CUPTI_SUCCESS && text) return text;
    return "CUPTI error " + std::to_string(int(result));
}

bool loadCupti(const std::string& explicitPath, CuptiApi& api, std::string& error) {
    if (api.loaded()) return true;
    std::string tried;

    // Reuse the process's own copy: two CUPTIs in one process would fight over the one subscriber.
    const std::string loaded = loadedCuptiPath();
    if (!loaded.empty()) {
        if (void* handle = dlopen(loaded.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
            if (adopt(handle, loaded, true, api, tried)) return true;
        } else {
            tried += "; " + loaded + " (loaded, but dlopen NOLOAD failed)";
        }
    }

    std::vector<std::string> candidates;
    if (!explicitPath.empty()) candidates.push_back(explicitPath);
    for (const char* name : kCuptiNames)
        candidates.emplace_back(name); // LD_LIBRARY_PATH, RUNPATH, ldconfig cache
    std::vector<std::string> dirs;
    for (const char* var : { "CUDA_HOME", "CUDA_PATH" })
        if (const char* home = getenv(var); home && *home) {
            dirs.push_back(std::string(home) + "/lib64");
            dirs.push_back(std::string(home) + "/extras/CUPTI/lib64");
        }
    dirs.emplace_back("/usr/local/cuda/lib64");
    dirs.emplace_back("/usr/local/cuda/extras/CUPTI/lib64");
    for (const std::string& dir : dirs)
        for (const char* name : kCuptiNames)
            candidates.push_back(dir + "/" + name);

    std::string lastError;
    for (const std::string& path : candidates) {
        dlerror();
        void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            if (const char* why = dlerror(); why && (path == explicitPath || lastError.empty())) lastError = why;
            continue;
        }
        if (adopt(handle, path, false, api, tried)) return true;
    }

    error = "no usable libcupti (tried: already loaded: " + (loaded.empty() ? std::string("none") : loaded);
    error += tried;
    if (!explicitPath.empty()) error += "; TUNEUP_CUPTI_PATH=" + explicitPath;
    error += "; libcupti.so{,.13,.12,.11.8,.11} in the library path";
    for (const std::string& dir : dirs)
        error += ", " + dir;
    error += ")";
    if (!lastError.empty()) error += ": " + lastError;
    return false;
}

} // namespace tuneup::agent
