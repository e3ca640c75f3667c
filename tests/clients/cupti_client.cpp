// A program that uses CUPTI for itself, as torch.profiler's Kineto does when the profiler starts and stops:
// subscribes, puts CUPTI's timestamps on its own clock, registers its activity buffers, enables and later
// disables a kind, and finally detaches CUPTI. Linked against the toolkit's real libcupti (no GPU needed:
// the calls fail without a driver, after the agent saw them).

#include <cstdio>
#include <cupti.h>

namespace {

uint64_t CUPTIAPI ticks() {
    return 42;
}
void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* records) {
    *buffer = nullptr;
    *size = 0;
    *records = 0;
}
void CUPTIAPI completed(CUcontext, uint32_t, uint8_t*, size_t, size_t) {
}
void CUPTIAPI callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {
}

} // namespace

int main() {
    CUpti_SubscriberHandle subscriber = nullptr;
    std::printf("subscribe %d\n", int(cuptiSubscribe(&subscriber, callback, nullptr)));
    std::printf("timestamp %d\n", int(cuptiActivityRegisterTimestampCallback(ticks)));
    std::printf("buffers %d\n", int(cuptiActivityRegisterCallbacks(requested, completed)));
    std::printf("enable %d\n", int(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)));
    std::printf("disable %d\n", int(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)));
    std::printf("finalize %d\n", int(cuptiFinalize()));
    return 0;
}
