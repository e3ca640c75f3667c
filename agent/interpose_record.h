#pragma once
// What every interposer shares: whether its kind of call is recorded (the agent runs and TUNEUP_TRACE
// holds gemm / conv), the thread's nesting -- only the outermost interposed call on a thread is recorded,
// since cuBLAS runs cuBLASLt inside and cuDNN's libraries call each other -- the call's clock and the
// external correlation id pushed to CUPTI around it, and handing the record to the thread's ring.

#include "clock.h"
#include "host_events.h"

#include <atomic>
#include <cstdint>

namespace tuneup::agent {

namespace detail {
enum : int8_t { kGateUnknown = 0, kGateOff = 1, kGateOn = 2 };
extern std::atomic<int8_t> g_gemmGate, g_convGate;
int8_t resolveGate(std::atomic<int8_t>& gate);
// constinit: no dynamic initialisation, so no TLS wrapper call on the hot path.
extern constinit __attribute__((tls_model("initial-exec"))) thread_local int t_libraryDepth;
} // namespace detail

// One relaxed load once the agent has started (the first call starts it).
inline bool recordingGemm() {
    const int8_t gate = detail::g_gemmGate.load(std::memory_order_relaxed);
    return (gate != detail::kGateUnknown ? gate : detail::resolveGate(detail::g_gemmGate)) == detail::kGateOn;
}
inline bool recordingConv() {
    const int8_t gate = detail::g_convGate.load(std::memory_order_relaxed);
    return (gate != detail::kGateUnknown ? gate : detail::resolveGate(detail::g_convGate)) == detail::kGateOn;
}

// Whether an interposed call is running on this thread (its library calls ours: not the user's).
inline bool insideLibraryCall() {
    return detail::t_libraryDepth > 0;
}

// An external correlation id pushed to CUPTI (kind CUSTOM2) when GPU capture is on, so the kernels the
// call launches carry it; 0 when capture is off (the call's thread and time window are then the join).
uint64_t pushExternalId();
void popExternalId(uint64_t id);

// Scope of one interposed call. Constructed with the caller's wish to record it; recorded() says whether
// it is recorded: the wish, and no other interposed call running on this thread. Call finish() right
// after the real function returns.
class LibraryCall {
public:
    explicit LibraryCall(bool wanted)
        : m_entered(wanted) {
        if (!wanted) return;
        m_recorded = detail::t_libraryDepth++ == 0;
        if (m_recorded) {
            startNs = nowNs();
            externalId = pushExternalId();
        }
    }
    ~LibraryCall() {
        if (m_entered) --detail::t_libraryDepth;
    }
    LibraryCall(const LibraryCall&) = delete;
    LibraryCall& operator=(const LibraryCall&) = delete;

    bool recorded() const { return m_recorded; }
    void finish() {
        if (!m_recorded) return;
        if (externalId) popExternalId(externalId);
        endNs = nowNs();
    }

    uint64_t startNs = 0, endNs = 0, externalId = 0;

private:
    bool m_entered;
    bool m_recorded = false;
};

// Into the calling thread's ring (dropped and counted when it is full).
void emitGemmCall(uint64_t startNs, const GemmCallFixed& call);
void emitConvCall(uint64_t startNs, const ConvCallFixed& call);

} // namespace tuneup::agent
