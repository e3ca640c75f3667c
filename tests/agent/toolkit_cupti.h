#pragma once
// The libcupti of this machine (the CUDA toolkit's), loaded once for the agent's CUPTI tests.

#include "cupti_loader.h"

#include <cstdio>
#include <string>

namespace tuneup::agent {

// Null when there is none (the reason on stderr, once).
inline const CuptiApi* toolkitCupti() {
    static CuptiApi api;
    static bool tried = false;
    if (!tried) {
        tried = true;
        std::string error;
        if (!loadCupti("", api, error)) std::fprintf(stderr, "no libcupti: %s\n", error.c_str());
    }
    return api.loaded() ? &api : nullptr;
}

} // namespace tuneup::agent
