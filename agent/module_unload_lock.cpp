#include "module_unload_lock.h"

#include <pthread.h>

namespace tuneup::agent {

namespace {

// Statically initialised: dlclose may be called before the agent's constructors run, or after its destructors.
pthread_mutex_t s_unloads = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

} // namespace

void lockModuleUnloads() {
    pthread_mutex_lock(&s_unloads);
}

void unlockModuleUnloads() {
    pthread_mutex_unlock(&s_unloads);
}

void resetModuleUnloadsAfterFork() {
    // Not unlocked: a recursive mutex knows its owner by thread id, which the forking thread has changed.
    s_unloads = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
}

} // namespace tuneup::agent
