#include "interpose_record.h"

#include "agent.h"
#include "nvtx_source.h"
#include "ring_registry.h"
#ifdef TUNEUP_HAVE_CUPTI
#include "cupti_source.h"
#endif

namespace tuneup::agent {

namespace detail {

std::atomic<int8_t> g_gemmGate { kGateUnknown }, g_convGate { kGateUnknown };
constinit __attribute__((tls_model("initial-exec"))) thread_local int t_libraryDepth = 0;

int8_t resolveGate(std::atomic<int8_t>& gate) {
    // Starts the agent if no entry point did yet (a library called from an early constructor).
    const bool on = ensureStarted();
    g_gemmGate.store(on && config().trace.gemm ? kGateOn : kGateOff, std::memory_order_relaxed);
    g_convGate.store(on && config().trace.conv ? kGateOn : kGateOff, std::memory_order_relaxed);
    return gate.load(std::memory_order_relaxed);
}

} // namespace detail

namespace {
std::atomic<uint64_t> s_nextExternalId { 0 };
}

uint64_t pushExternalId() {
#ifdef TUNEUP_HAVE_CUPTI
    if (!externalCorrelationOn()) return 0;
    const uint64_t id = s_nextExternalId.fetch_add(1, std::memory_order_relaxed) + 1;
    return pushExternalCorrelation(id) ? id : 0;
#else
    return 0;
#endif
}

void popExternalId(uint64_t id) {
#ifdef TUNEUP_HAVE_CUPTI
    if (id) popExternalCorrelation();
#else
    (void)id;
#endif
}

void emitGemmCall(uint64_t startNs, const GemmCallFixed& call) {
    RingRegistry::emit(
        EventSource::Gemm, HostEventKind::GemmCall, startNs, &call, sizeof call, {}, openRangeReserveBytes());
}

void emitConvCall(uint64_t startNs, const ConvCallFixed& call) {
    RingRegistry::emit(
        EventSource::Conv, HostEventKind::ConvCall, startNs, &call, sizeof call, {}, openRangeReserveBytes());
}

} // namespace tuneup::agent
