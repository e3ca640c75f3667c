// CUPTI functions another client in the process calls to set CUPTI up for itself (LD_PRELOAD): torch.profiler's
// Kineto inside libtorch_cuda, a user's own CUPTI code. Each is passed on to the real libcupti unchanged; first
// the agent notes what the call takes from its own capture (cupti_coexistence.h) and, when the call would send
// records elsewhere, hands over what CUPTI holds for it. The agent's own CUPTI calls go through pointers from
// dlsym on the library (cupti_loader.h), never through these.

#include "cupti_source.h"
#include "interpose_resolve.h"

#include <cupti.h>
#include <dlfcn.h>

#define TUNEUP_INTERPOSE extern "C" __attribute__((visibility("default")))

using namespace tuneup::agent;

namespace {

constexpr const char* kCuptiPrefixes[] = { "libcupti.so", nullptr };
constexpr LibraryFamily kCuptiLibraries { "cupti", kCuptiPrefixes };

RealFunction<decltype(&::cuptiSubscribe)> s_subscribe { "cuptiSubscribe", kCuptiLibraries };
RealFunction<decltype(&::cuptiSubscribe_v2)> s_subscribeV2 { "cuptiSubscribe_v2", kCuptiLibraries };
RealFunction<decltype(&::cuptiActivityRegisterCallbacks)> s_register { "cuptiActivityRegisterCallbacks",
    kCuptiLibraries };
RealFunction<decltype(&::cuptiActivityEnable)> s_enable { "cuptiActivityEnable", kCuptiLibraries };
RealFunction<decltype(&::cuptiActivityDisable)> s_disable { "cuptiActivityDisable", kCuptiLibraries };
RealFunction<decltype(&::cuptiActivityRegisterTimestampCallback)> s_timestamp {
    "cuptiActivityRegisterTimestampCallback", kCuptiLibraries
};
RealFunction<decltype(&::cuptiFinalize)> s_finalize { "cuptiFinalize", kCuptiLibraries };

// The file name of the library whose code made the call ("libtorch_cuda.so"), for the record.
const char* callerName(const void* returnAddress) {
    Dl_info info {};
    if (!dladdr(returnAddress, &info) || !info.dli_fname) return "";
    const char* slash = __builtin_strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

// Notes another client's call; libcupti's own calls (none today: it binds its symbols to itself) are not one.
void note(OtherCuptiCall call, int kind, const void* returnAddress) {
    const char* caller = callerName(returnAddress);
    if (__builtin_strncmp(caller, "libcupti.so", 11) != 0) noteOtherCuptiClient(call, kind, caller);
}

} // namespace

TUNEUP_INTERPOSE CUptiResult CUPTIAPI cuptiSubscribe(
    CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata) {
    const auto real = s_subscribe.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUPTI_ERROR_NOT_INITIALIZED;
    note(OtherCuptiCall::Subscribe, 0, __builtin_return_address(0));
    return real(subscriber, callback, userdata);
}

TUNEUP_INTERPOSE CUptiResult CUPTIAPI cuptiSubscribe_v2(
    CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback, void* userdata, CUpti_SubscriberParams* params) {
    const auto real = s_subscribeV2.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUPTI_ERROR_NOT_INITIALIZED;
    note(OtherCuptiCall::Subscribe, 0, __builtin_return_address(0));
    return real(subscriber, callback, userdata, params);
}

TUNEUP_INTERPOSE CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(
    CUpti_BuffersCallbackRequestFunc requested, CUpti_BuffersCallbackCompleteFunc completed) {
    const auto real = s_register.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUPTI_ERROR_NOT_INITIALIZED;
    note(OtherCuptiCall::RegisterBuffers, 0, __builtin_return_address(0));
    return real(requested, completed);
}

TUNEUP_INTERPOSE CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
    const auto real = s_enable.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUPTI_ERROR_NOT_INITIALIZED;
    note(OtherCuptiCall::Enable, int(kind), __builtin_return_address(0));
    return real(kind);
}

TUNEUP_INTERPOSE CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
    const auto real = s_disable.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUPTI_ERROR_NOT_INITIALIZED;
    note(OtherCuptiCall::Disable, int(kind), __builtin_return_address(0));
    return real(kind);
}

TUNEUP_INTERPOSE CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc clock) {
    const auto real = s_timestamp.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUPTI_ERROR_NOT_INITIALIZED;
    note(OtherCuptiCall::Timestamp, 0, __builtin_return_address(0));
    return real(clock);
}

TUNEUP_INTERPOSE CUptiResult CUPTIAPI cuptiFinalize(void) {
    const auto real = s_finalize.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUPTI_ERROR_NOT_INITIALIZED;
    note(OtherCuptiCall::Finalize, 0, __builtin_return_address(0));
    return real();
}
