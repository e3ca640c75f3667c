#pragma once
// The environment a run ran in, as far as its traces record it: GPU model and count, driver, CUDA,
// CUPTI, cuDNN, world size, CPU architecture. `tuneup compare` calls two runs comparable only when
// every fact both sides record is equal; a fact one side does not record is said, never guessed.
//
// The program's own settings (cudnn.benchmark, the DataLoader's num_workers, ...) are not environment:
// they are what a user changes to make a run faster, so compare shows them as changes beside the
// verdict, not as a reason to refuse it.

#include "job/job.h"

#include <string>
#include <string_view>
#include <vector>

namespace tuneup::analysis {

struct EnvironmentFact {
    std::string key; // "gpu.model", "driver", "cuda", "cupti", "cudnn", "gpu.count", "world_size", "arch"
    std::string value; // "NVIDIA A100-PG509-200", "12.9"
};
using Environment = std::vector<EnvironmentFact>; // in the order of kEnvironmentKeys, recorded facts only

// Every key, in display order, with its label for people ("GPU model").
struct EnvironmentKey {
    std::string_view key, label;
};
extern const std::vector<EnvironmentKey> kEnvironmentKeys;
std::string_view environmentLabel(std::string_view key);

// The facts a job's traces record. With the traces in memory (Job::models) every rank's devices and
// metadata are read; from job summaries only the GPU model.
Environment jobEnvironment(const Job& job);
std::string environmentValue(const Environment& env, std::string_view key); // "" when not recorded

struct EnvironmentChange {
    std::string key;
    std::string base, now; // "" when that side does not record it
};
// Facts that differ, both sides recording them (`changed`), and facts only one side records (`oneSided`).
struct EnvironmentDiff {
    std::vector<EnvironmentChange> changed, oneSided;
};
EnvironmentDiff diffEnvironments(const Environment& base, const Environment& now);

// A CUDA version as Kineto writes it (12090) for people ("12.9"); other text unchanged.
std::string cudaVersionText(std::string_view value);

} // namespace tuneup::analysis
