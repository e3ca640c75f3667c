#pragma once
// `tuneup bench` inside a recorded native program (a LibTorch C++ program; docs/bench.md): the
// switches TUNEUP_FIX asks for — at::Context's cuDNN autotuner and TF32 setters, found with dlsym as
// the torch probes find its getters, and anomaly mode's flag — re-applied on the program's NVTX pushes,
// and the step limit: after TUNEUP_BENCH_STOP_AFTER ranges named TUNEUP_BENCH_STEP_RANGE (default
// "step") have closed on a thread, the file is finished and the process ends with _exit(0). What was
// applied, and where it stopped, goes as JSON lines to TUNEUP_BENCH_REPORT.
//
// Python processes are left alone here: the Python bootstrap (python/tuneup_bench.py) applies the fixes
// through torch's own Python API and counts optimizer steps instead.

#include <string_view>

namespace tuneup::agent {

// Whether tuneup bench runs this native process (TUNEUP_BENCH_REPORT set, no Python interpreter in
// it). Read once; afterwards one load.
bool benchControlled();

// The NVTX source calls these for every push and pop on a thread when benchControlled(); `depth` is
// the thread's nesting depth before the push, and the popped range's after the pop.
void benchNotePush(std::string_view name, int depth);
void benchNotePop(int depth);

} // namespace tuneup::agent
