#include "cupti_loader.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>
#include <vector>

namespace tuneup::agent {

namespace {

// Sonames of the CUPTI releases whose records the decoder reads (CUDA 11.8, 11.x, 12.x, 13.x), newest
// first; the unversioned development link last.
constexpr const char* kCuptiSonames[] = { "libcupti.so.13", "libcupti.so.12", "libcupti.so.11.8", "libcupti.so.11" };

std::string baseName(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string directoryOf(const std::string& path) {
    const size_t slash = path.rfind('/');
    return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

bool startsWith(const std::string& text, const char* prefix) {
    return text.compare(0, strlen(prefix), prefix) == 0;
}

// "libcudart.so.13.0.48" -> "13"; "" when the name carries no version.
std::string majorVersion(const std::string& name) {
    const size_t so = name.find(".so.");
    if (so == std::string::npos) return {};
    const size_t start = so + 4;
    size_t end = start;
    while (end < name.size() && isdigit(static_cast<unsigned char>(name[end])))
        ++end;
    return name.substr(start, end - start);
}

// Every object mapped into the process, in load order.
std::vector<std::string> loadedObjects() {
    std::vector<std::string> paths;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) -> int {
            if (info->dlpi_name && *info->dlpi_name)
                static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
            return 0;
        },
        &paths);
    return paths;
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
    resolve(handle, "cuptiActivityEnableAllSyncRecords", api.enableAllSyncRecords);
    return nullptr;
}

// The file a handle came from (a bare soname was resolved by the loader's search).
std::string fileOf(void* handle, const std::string& fallback) {
    link_map* map = nullptr;
    const char* name = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && *map->l_name
        ? map->l_name
        : fallback.c_str();
    char real[PATH_MAX];
    return realpath(name, real) ? std::string(real) : std::string(name); // "lib/../extras" -> "extras"
}

// Tries one handle; on a missing symbol notes it in `tried` and gives the handle back.
bool adopt(void* handle, const CuptiCandidate& candidate, bool reused, CuptiApi& api, std::string& tried) {
    CuptiApi loaded;
    if (const char* missing = resolveAll(handle, loaded)) {
        tried += "; " + candidate.path + " lacks " + missing;
        dlclose(handle); // only drops our reference: a reused library stays loaded
        return false;
    }
    loaded.handle = handle;
    loaded.path = fileOf(handle, candidate.path);
    loaded.origin = candidate.origin;
    loaded.reused = reused;
    api = std::move(loaded);
    return true;
}

} // namespace

std::string CuptiApi::resultString(CUptiResult result) const {
    const char* text = nullptr;
    if (getResultString && getResultString(result, &text) == CUPTI_SUCCESS && text) return text;
    return "CUPTI error " + std::to_string(int(result));
}

std::vector<CuptiCandidate> cuptiCandidates(const std::vector<std::string>& loadedObjects,
    const std::string& explicitPath, const std::string& cudaHome, const std::string& cudaPath) {
    std::vector<CuptiCandidate> out;
    const auto add = [&](const std::string& path, const std::string& origin) {
        for (const CuptiCandidate& c : out)
            if (c.path == path) return;
        out.push_back({ path, origin });
    };
    // The names to try in a directory: the runtime's own major version first.
    const auto namesFor = [](const std::string& major) {
        std::vector<std::string> names;
        if (!major.empty()) names.push_back("libcupti.so." + major);
        for (const char* soname : kCuptiSonames)
            if (std::find(names.begin(), names.end(), soname) == names.end()) names.emplace_back(soname);
        names.emplace_back("libcupti.so");
        return names;
    };

    if (!explicitPath.empty()) add(explicitPath, "TUNEUP_CUPTI_PATH");

    std::string runtimeMajor;
    for (const std::string& object : loadedObjects) {
        const std::string name = baseName(object);
        const bool cudart = startsWith(name, "libcudart.so");
        const bool torchCuda = startsWith(name, "libtorch_cuda.so");
        if (!cudart && !torchCuda) continue;
        const std::string major = cudart ? majorVersion(name) : std::string();
        if (runtimeMajor.empty()) runtimeMajor = major;
        const std::string dir = directoryOf(object);
        if (dir.empty()) continue;
        const std::string origin = "beside " + name + " (" + dir + ")";
        std::vector<std::string> dirs { dir };
        if (cudart) {
            dirs.push_back(dir + "/../extras/CUPTI/lib64"); // toolkit: lib64/ and extras/CUPTI/lib64/
            dirs.push_back(dir + "/../../../extras/CUPTI/lib64"); // toolkit: targets/<arch>/lib/
            dirs.push_back(dir + "/../../cuda_cupti/lib"); // pip, a package per library: nvidia/cuda_runtime/lib
        } else { // torch/lib/ beside site-packages/nvidia/
            dirs.push_back(dir + "/../../nvidia/cu" + (runtimeMajor.empty() ? "13" : runtimeMajor) + "/lib");
            dirs.push_back(dir + "/../../nvidia/cu13/lib");
            dirs.push_back(dir + "/../../nvidia/cu12/lib");
            dirs.push_back(dir + "/../../nvidia/cuda_cupti/lib");
        }
        for (const std::string& d : dirs)
            for (const std::string& file : namesFor(major))
                add(d + "/" + file, origin);
    }

    for (const std::string& file : namesFor(runtimeMajor))
        add(file, "the library search path");

    std::vector<std::string> homes;
    if (!cudaHome.empty()) homes.push_back(cudaHome);
    if (!cudaPath.empty()) homes.push_back(cudaPath);
    homes.emplace_back("/usr/local/cuda");
    for (const std::string& home : homes)
        for (const char* sub : { "/lib64", "/extras/CUPTI/lib64" })
            for (const std::string& file : namesFor(runtimeMajor))
                add(home + sub + "/" + file, home == "/usr/local/cuda" ? "/usr/local/cuda" : "CUDA_HOME " + home);
    return out;
}

bool loadCupti(const std::string& explicitPath, CuptiApi& api, std::string& error) {
    if (api.loaded()) return true;
    std::string tried;
    const std::vector<std::string> objects = loadedObjects();

    // Reuse the process's own copy: two CUPTIs in one process would fight over the one subscriber.
    std::string loaded;
    for (const std::string& object : objects)
        if (startsWith(baseName(object), "libcupti.so")) {
            loaded = object;
            break;
        }
    if (!loaded.empty()) {
        if (void* handle = dlopen(loaded.c_str(), RTLD_NOW | RTLD_NOLOAD)) {
            if (adopt(handle, { loaded, "already loaded by the process" }, true, api, tried)) return true;
        } else {
            tried += "; " + loaded + " (loaded, but dlopen NOLOAD failed)";
        }
    }

    const char* home = getenv("CUDA_HOME");
    const char* path = getenv("CUDA_PATH");
    const std::vector<CuptiCandidate> candidates
        = cuptiCandidates(objects, explicitPath, home ? home : "", path ? path : "");
    std::string lastError;
    size_t files = 0;
    for (const CuptiCandidate& candidate : candidates) {
        const bool isFile = candidate.path.find('/') != std::string::npos;
        if (isFile) {
            ++files;
            if (access(candidate.path.c_str(), F_OK) != 0) continue; // no dlopen of a file that is not there
        }
        dlerror();
        void* handle = dlopen(candidate.path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            if (const char* why = dlerror(); why && (candidate.path == explicitPath || (lastError.empty() && isFile)))
                lastError = why;
            continue;
        }
        if (adopt(handle, candidate, false, api, tried)) return true;
    }

    error = "no usable libcupti (already loaded: " + (loaded.empty() ? std::string("none") : loaded) + tried;
    if (!explicitPath.empty()) error += "; TUNEUP_CUPTI_PATH=" + explicitPath;
    error += "; tried " + std::to_string(files) + " files beside the loaded CUDA runtime and in CUDA_HOME, "
        + "/usr/local/cuda, and libcupti.so{.13,.12,.11.8,.11,} in the library search path";
    error += ")";
    if (!lastError.empty()) error += ": " + lastError;
    return false;
}

} // namespace tuneup::agent
