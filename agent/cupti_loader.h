#pragma once
// Finds libcupti at run time and resolves the functions the agent uses. The agent never links CUDA:
// it reuses a libcupti the process already loaded (torch loads its own, RTLD_LOCAL), else loads one.

#include <cupti.h>
#include <string>

namespace tuneup::agent {

// CUPTI's entry points, resolved with dlsym. Required ones are never null once loaded; optional
// ones (newer CUPTI only) are null when the library lacks them.
struct CuptiApi {
    void* handle = nullptr;
    std::string path; // the library in use
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

    bool loaded() const { return handle != nullptr; }
    // "CUPTI_ERROR_UNKNOWN", or "CUPTI error <n>" when the library cannot name it.
    std::string resultString(CUptiResult result) const;
};

// Loads CUPTI: a libcupti already in the process first, then `explicitPath` (TUNEUP_CUPTI_PATH)
// when not empty, then libcupti.so{,.13,.12,.11} from the library path, $CUDA_HOME and
// /usr/local/cuda. On failure returns false and says what was tried in `error`.
bool loadCupti(const std::string& explicitPath, CuptiApi& api, std::string& error);

} // namespace tuneup::agent
