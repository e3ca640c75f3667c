#pragma once
// GPU capture through CUPTI's activity API: kernels, memcpy, memset, synchronisation, runtime and
// driver API calls, devices. CUPTI fills buffers from a bounded pool (drops are counted by CUPTI);
// completed buffers are decoded on the writer thread (Writer::setGpuDrain). Timestamps are
// CLOCK_MONOTONIC ns, like every other event of the recording.

#include "config.h"
#include "cupti_coexistence.h"

#include <cstdint>
#include <string>

namespace tuneup::agent {

// Starts GPU capture of the kinds in config.trace. Call once CUDA's driver is there (from
// InitializeInjection), before any kernel; never calls cuInit. Returns true when capture is on;
// `status` is "on" or "off: <why>" (no libcupti, no driver, another profiler holds CUPTI...),
// and is stored as meta capture.cuda. Thread-safe; after a failure a later call tries again.
bool startCuptiCapture(const Config& config, std::string& status);

// Whether capture is on in this process.
bool cuptiCaptureOn();

// External correlation around an interposed library call (interpose_record.h): the kernels launched
// between push and pop carry `id` in CUPTI's EXTERNAL_CORRELATION records (kind CUSTOM2). On only
// while capture is on and records them; cheap to ask (two relaxed loads).
bool externalCorrelationOn();
bool pushExternalCorrelation(uint64_t id);
void popExternalCorrelation();

// Disables the kinds, flushes CUPTI (forced) and unsubscribes; capture does not start again.
// Idempotent, harmless when off. Call before Writer::stop(), whose final pass decodes the flush.
void stopCuptiCapture();

// In a forked child (atfork child handler): marks capture off without calling CUPTI, which hangs
// or crashes in a child, and forgets the parent's buffers.
void disableCuptiAfterFork();

// Another CUPTI client's call (cupti_interposer.cpp), made by library `caller`, before it is passed on: records
// what our capture loses (cupti_coexistence.h) and, when the call would take our buffers or clock, flushes
// what CUPTI holds for us first. Safe from any thread; never throws.
void noteOtherCuptiClient(OtherCuptiCall call, int kind, const char* caller);

} // namespace tuneup::agent
