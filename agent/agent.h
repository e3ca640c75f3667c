#pragma once
// The agent's one start and one stop, whichever entry point arrives first (LD_PRELOAD constructor,
// InitializeInjection, InitializeInjectionNvtx2) and whichever way the process ends.

#include "config.h"

namespace tuneup::agent {

// Idempotent and thread-safe. Returns false when the agent is disabled (TUNEUP_DISABLE) or failed.
bool ensureStarted();
// The configuration read at start (valid after ensureStarted()).
const Config& config();
// Idempotent: final flush, stats and close.
void shutdown();

} // namespace tuneup::agent
