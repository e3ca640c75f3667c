// A stand-in for libcupti, for the agent's shutdown-order test (no GPU here, and the real CUPTI does
// nothing without a driver). It exports the functions the agent resolves, behaves as CUPTI does where
// the agent can tell (buffers requested when capture starts, handed back on a flush), and checks the
// one thing the test is about: like the real library, it tears itself down in a C++ static destructor,
// registered when it is loaded; any call after that is a bug in the agent. Each call is appended to
// the file named by TUNEUP_FAKE_CUPTI_LOG; a call after the teardown is logged as
// "AFTER-TEARDOWN <name>" and aborts the process, as a use of freed state in the real library would.

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cupti.h>
#include <fcntl.h>
#include <unistd.h>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

bool s_tornDown = false;
CUpti_BuffersCallbackRequestFunc s_requested = nullptr;
CUpti_BuffersCallbackCompleteFunc s_completed = nullptr;
uint8_t* s_buffer = nullptr; // the one buffer CUPTI holds
size_t s_bufferSize = 0;
int s_subscribers = 0;

void append(const char* line) {
    const char* path = getenv("TUNEUP_FAKE_CUPTI_LOG");
    if (!path) return;
    const int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    char text[160];
    const int n = snprintf(text, sizeof text, "%d %s\n", int(getpid()), line);
    if (write(fd, text, size_t(n)) != n) { }
    close(fd);
}

void called(const char* name) {
    if (s_tornDown) {
        char line[128];
        snprintf(line, sizeof line, "AFTER-TEARDOWN %s", name);
        append(line);
        abort();
    }
    append(name);
}

struct Library {
    ~Library() {
        append("teardown");
        s_tornDown = true;
    }
} s_library;

} // namespace

FAKE_EXPORT CUptiResult cuptiGetVersion(uint32_t* version) {
    called("cuptiGetVersion");
    *version = 26;
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char** str) {
    called("cuptiGetResultString");
    *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR_UNKNOWN";
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetTimestamp(uint64_t* timestamp) {
    called("cuptiGetTimestamp");
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *timestamp = uint64_t(ts.tv_sec) * 1000000000u + uint64_t(ts.tv_nsec);
    return CUPTI_SUCCESS;
}

namespace {
// Not through the exported name: another libcupti in the process would answer that call.
CUptiResult subscribe(CUpti_SubscriberHandle* subscriber) {
    if (s_subscribers > 0) return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    ++s_subscribers;
    *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&s_subscribers);
    return CUPTI_SUCCESS;
}
} // namespace

FAKE_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*) {
    called("cuptiSubscribe");
    return subscribe(subscriber);
}

FAKE_EXPORT CUptiResult cuptiSubscribe_v2(
    CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc, void*, CUpti_SubscriberParams*) {
    called("cuptiSubscribe_v2");
    return subscribe(subscriber);
}

FAKE_EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle) {
    called("cuptiUnsubscribe");
    s_subscribers = 0;
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiEnableCallback(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId) {
    called("cuptiEnableCallback");
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed) {
    called("cuptiActivityRegisterCallbacks");
    s_requested = requested;
    s_completed = completed;
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind) {
    called("cuptiActivityEnable");
    // Like CUPTI, ask for a buffer once there is something to record into.
    if (!s_buffer && s_requested) {
        size_t maxRecords = 0;
        s_requested(&s_buffer, &s_bufferSize, &maxRecords);
    }
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind) {
    called("cuptiActivityDisable");
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute, size_t*, void*) {
    called("cuptiActivitySetAttribute");
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t*, size_t, CUpti_Activity**) {
    called("cuptiActivityGetNextRecord");
    return CUPTI_ERROR_MAX_LIMIT_REACHED; // the buffers hold no records
}

FAKE_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
    called("cuptiActivityGetNumDroppedRecords");
    *dropped = 0;
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t) {
    called("cuptiActivityFlushAll");
    // Hands the buffer back (empty: no GPU), as CUPTI does with a forced flush.
    if (s_buffer && s_completed) {
        uint8_t* buffer = s_buffer;
        s_buffer = nullptr;
        s_completed(nullptr, 0, buffer, s_bufferSize, 0);
    }
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain, uint32_t, const char** name) {
    called("cuptiGetCallbackName");
    *name = "cudaFake";
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc) {
    called("cuptiActivityRegisterTimestampCallback");
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType) {
    called("cuptiSetThreadIdType");
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind, uint64_t) {
    called("cuptiActivityPushExternalCorrelationId");
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind, uint64_t* lastId) {
    called("cuptiActivityPopExternalCorrelationId");
    *lastId = 0;
    return CUPTI_SUCCESS;
}

FAKE_EXPORT CUptiResult cuptiActivityEnableAllSyncRecords(uint8_t) {
    called("cuptiActivityEnableAllSyncRecords");
    return CUPTI_SUCCESS;
}
