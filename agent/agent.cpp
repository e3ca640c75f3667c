#include "agent.h"

#include "clock.h"
#include "log.h"
#include "metadata.h"
#include "native_stack_sampler.h"
#include "nvtx_source.h"
#include "output_path.h"
#include "process_guard.h"
#include "ring_registry.h"
#include "signal_guard.h"
#include "torch_probe.h"
#include "writer.h"
#ifdef TUNEUP_HAVE_CUPTI
#include "cupti_source.h"
#endif

#include <atomic>
#include <mutex>
#include <unistd.h>

namespace tuneup::agent {

namespace {

enum class State { NotStarted, Running, Disabled, Stopped };

std::atomic<State> s_state { State::NotStarted };
std::recursive_mutex s_startMutex;
Config* s_config = nullptr; // never freed: read by threads during exit
OutputChoice* s_output = nullptr;
uint64_t s_startNs = 0;

void startWriter() {
    // Said by the processes that record, once: not by every tool a training run starts.
    if (s_config->mainPid <= 0 || s_config->mainPid == getpid()) logConfigWarnings(*s_config);
    const ProcessFacts facts { s_output->role, s_startNs };
    Writer::start(s_output->path, s_output->eager, { s_config->flushIntervalMs, s_config->samplePeriodMs },
        [facts](TraceDb& db, bool reopened) { writeMetadata(db, facts, reopened); });
    // There is a file to finish now: flush it on the signals that would end the process unseen.
    armSignalFlush();
}

// A process that records lazily starts its writer on its first event (first ring made).
void startWriterOnFirstEvent() {
    if (Writer::running() || s_state.load() != State::Running) return;
    std::lock_guard lock(s_startMutex);
    if (!Writer::running()) startWriter();
}

void childAfterFork() {
    // The child writes its own file, named by its pid, on its first event; never CUDA here.
    new (&s_startMutex) std::recursive_mutex;
    resetTorchProbeAfterFork();
    s_startNs = nowNs();
    *s_output = chooseOutput(*s_config, int(getpid()), true);
#ifdef TUNEUP_HAVE_CUPTI
    disableCuptiAfterFork();
#endif
    Writer::setMeta("capture.cuda", "off: forked child process (CUDA and CUPTI cannot be used after fork)");
    // The parent's announcement went to the parent's file; NVTX calls keep reaching us here.
    if (nvtxAttached()) Writer::setMeta("capture.nvtx", "on");
}

} // namespace

bool ensureStarted() {
    const State state = s_state.load(std::memory_order_acquire);
    if (state == State::Running) return true;
    if (state != State::NotStarted) return false;
    std::lock_guard lock(s_startMutex);
    if (s_state.load() != State::NotStarted) return s_state.load() == State::Running;
    s_startNs = nowNs();
    s_config = new Config(configFromEnvironment());
    if (s_config->disabled) {
        s_state.store(State::Disabled);
        return false;
    }
    RingRegistry::configure(size_t(s_config->threadBufferKiB) << 10, size_t(s_config->maxBufferMiB) << 20);
    RingRegistry::setFirstRingHook(startWriterOnFirstEvent);
    s_output = new OutputChoice(chooseOutput(*s_config, int(getpid()), false));
    installProcessGuard({ childAfterFork });
    if (s_config->samplePeriodMs > 0) NativeStackSampler::prepare();
    s_state.store(State::Running, std::memory_order_release);
    if (s_output->eager) startWriter();
    TUNEUP_LOG(Info, "recording to %s (%s)", s_output->path.c_str(), s_output->role.c_str());
    return true;
}

const Config& config() {
    static const Config defaults;
    return s_config ? *s_config : defaults;
}

void shutdown() {
    State expected = State::Running;
    if (!s_state.compare_exchange_strong(expected, State::Stopped)) return;
#ifdef TUNEUP_HAVE_CUPTI
    stopCuptiCapture();
#endif
    Writer::stop();
}

} // namespace tuneup::agent
