#pragma once
// Another CUPTI client in the process: torch.profiler (Kineto, inside libtorch_cuda), Nsight tools, a
// user's own CUPTI code. CUPTI has one set of activity buffers, one timestamp source and one enable
// switch per kind for the whole process, so such a client silently takes what the agent set up: its
// cuptiActivityRegisterCallbacks sends every later record to its buffers, its cuptiActivityDisable turns
// our kinds off too (Kineto disables its kinds when the profiler stops), its timestamp callback puts
// later records on its clock, cuptiFinalize detaches CUPTI. The agent sees these calls through its CUPTI
// interposers (cupti_interposer.cpp), passes them on unchanged, and records here what the recording lost
// and when: meta capture.cuda.lost (text), capture.cuda.lost_ns (CLOCK_MONOTONIC, as every event) and
// cupti.other_clients. Pure bookkeeping, thread-safe.

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace tuneup::agent {

enum class OtherCuptiCall { Subscribe, RegisterBuffers, Enable, Disable, Timestamp, Finalize };

class CuptiCoexistence {
public:
    struct Kind {
        int kind; // CUpti_ActivityKind
        std::string name;
    };
    // The kinds our capture enabled (empty: our capture is off, nothing of ours can be lost).
    void captureStarted(std::vector<Kind> kinds);

    // What to store after a note: meta keys and values, in order.
    struct Update {
        std::vector<std::pair<std::string, std::string>> meta;
        bool buffersTaken = false; // our periodic flushes would now only feed the other client
    };
    // Another client's call, from library `caller` (its file name), at `nowNs`.
    Update note(OtherCuptiCall call, int kind, std::string_view caller, uint64_t nowNs);

    bool lostAnything() const;

private:
    std::string kindName(int kind) const;

    mutable std::mutex m_mutex;
    std::vector<Kind> m_ours;
    std::vector<std::string> m_lost; // kind names, in the order they were lost
    std::vector<std::string> m_clients; // "libtorch_cuda.so: subscribe (refused), buffers, disable kernel"
    uint64_t m_lostNs = 0;
    bool m_buffersTaken = false, m_clockChanged = false, m_finalized = false;
};

} // namespace tuneup::agent
