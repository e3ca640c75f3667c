#pragma once
// Finds libcupti at run time and resolves the functions the agent uses. The agent never links CUDA:
// it reuses a libcupti the process already loaded (torch loads its own, RTLD_LOCAL), else loads one.

#include <cupti.h>
#include <string>
#include <vector>

namespace tuneup::agent {

// CUPTI's entry points, resolved with dlsym. Required ones are never null once loaded; optional
// ones (newer CUPTI only) are null when the library lacks them.
struct CuptiApi {
    void* handle = nullptr;
    std::string path; // the file in use
    std::string origin; // how it was found (cuptiCandidates), "already loaded by the process" when reused
    bool reused = false; // already loaded by the process, not by us

    decltype(&::cuptiGetVersion) getVersion = nullptr;
    decltype(&::cuptiGetResultString) getResultString = nullptr;
    decltype(&::cuptiGetTimestamp) getTimestamp = nullptr;
    decltype(&::cuptiSubscribe) subscribe = nullptr;
    decltype(&::cuptiUnsubscribe) unsubscribe = nullptr;
    decltype(&::cuptiEnableCallback) enableCallback = nullptr;
    decltype(&::cuptiActivityEnable) activityEnable = nullptr;
    decltype(&::cuptiActivityDisable) activityDisable = nullptr;
    decltype(&::cuptiActivitySetAttribute) activitySetAttribute = nullptr;
    decltype(&::cuptiActivityRegisterCallbacks) activityRegisterCallbacks = nullptr;
    decltype(&::cuptiActivityGetNextRecord) activityGetNextRecord = nullptr;
    decltype(&::cuptiActivityGetNumDroppedRecords) activityGetNumDroppedRecords = nullptr;
    decltype(&::cuptiActivityFlushAll) activityFlushAll = nullptr;

    // Optional.
    decltype(&::cuptiSubscribe_v2) subscribeV2 = nullptr; // names the other subscriber
    decltype(&::cuptiGetCallbackName) getCallbackName = nullptr; // API record names
    decltype(&::cuptiActivityRegisterTimestampCallback) activityRegisterTimestampCallback = nullptr; // 11.6+
    decltype(&::cuptiSetThreadIdType) setThreadIdType = nullptr;
    decltype(&::cuptiActivityPushExternalCorrelationId) pushExternalCorrelationId = nullptr;
    decltype(&::cuptiActivityPopExternalCorrelationId) popExternalCorrelationId = nullptr;
    decltype(&::cuptiActivityEnableAllSyncRecords) enableAllSyncRecords = nullptr; // 12.8+: query records

    bool loaded() const { return handle != nullptr; }
    // "CUPTI_ERROR_UNKNOWN", or "CUPTI error <n>" when the library cannot name it.
    std::string resultString(CUptiResult result) const;
};

// Where a libcupti may be, best first, and why it is there.
struct CuptiCandidate {
    std::string path; // a file path, or a bare soname for the loader's own search
    std::string origin; // stored as meta cupti.origin: "beside libcudart.so.13 (/...)", ...
};

// The search order, a pure function of the loaded objects' paths (in load order) and the settings:
//  1. TUNEUP_CUPTI_PATH;
//  2. the CUPTI that came with the process's CUDA: beside each loaded libcudart / libtorch_cuda, in the
//     toolkit (lib64, extras/CUPTI/lib64) and pip layouts (nvidia/cu13/lib, nvidia/cuda_cupti/lib);
//  3. libcupti.so.<major of the loaded libcudart>, then .13, .12, .11.8, .11, then libcupti.so, from the
//     loader's search path (LD_LIBRARY_PATH, RUNPATH, ldconfig);
//  4. $CUDA_HOME, $CUDA_PATH, /usr/local/cuda.
std::vector<CuptiCandidate> cuptiCandidates(const std::vector<std::string>& loadedObjects,
    const std::string& explicitPath, const std::string& cudaHome, const std::string& cudaPath);

// Loads CUPTI: a libcupti already in the process first (two CUPTIs in one process would fight over the
// one subscriber), then the candidates above; `api.path` is the file loaded and `api.origin` why. On
// failure returns false and says what was tried in `error`.
bool loadCupti(const std::string& explicitPath, CuptiApi& api, std::string& error);

} // namespace tuneup::agent
