#pragma once
// Where a kernel came from, beyond its name: replayed by a CUDA (or HIP) graph launch, or launched from
// inside a torch.compile region. The rules about launch overhead and fusion need both: a graph's kernels
// cost the CPU one launch call between them, and a compiled region's kernels are what the compiler chose.

#include "model/trace_model.h"

#include <string_view>
#include <vector>

namespace tuneup::analysis {

// A call that replays a graph: cudaGraphLaunch (also _v10000, _ptsz), cuGraphLaunch, hipGraphLaunch (_spt).
bool isGraphLaunch(std::string_view apiName);

// Per row of model.kernels: replayed by a graph launch. The kernels of a replay carry the launch call's
// correlation id (CUPTI, roctracer), so their apiCall is that call; a kernel that names its graph
// (Kernel::graphId: tuneup recordings, newer Kineto) is a replay's even when that call was not recorded.
std::vector<char> graphReplayedKernels(const TraceModel& model);
// Whether one launch call (a row of model.apiCalls, kNoRow for none) replays a graph.
bool isGraphLaunchCall(const TraceModel& model, RowIndex apiCall);

// The replays of graphs on `device`, each from its first node's start to its last node's end, sorted by
// start. A replay's nodes are the replayed kernels (graphReplayedKernels) and the copies and sets of a
// graph launch call, grouped by that call, else (not recorded) by their correlation id, which is the
// call's. A replayed kernel without either is a replay of its own: nothing says which others ran with it.
std::vector<TimeSpan> graphReplays(const TraceModel& model, int32_t device);

// A range inside which torch.compile's code runs: "CompiledFunction" and "CompiledFunctionBackward"
// (AOTAutograd's autograd function), "Torch-Compiled Region: 0/1" (Dynamo's frame), "## Call
// CompiledFxGraph <hash> ##" (Inductor's graph). Not the autograd engine's "evaluate_function:
// CompiledFunctionBackward" around it (eager gradient accumulation), nor guard checks ("TorchDynamo Cache
// Lookup"), which launch nothing.
bool isCompiledRegion(std::string_view rangeName);

// Per row of model.kernels: its launch call ran inside a compiled region (a CPU op or an annotation of the
// same thread). Graph replays launched from a region count as launched there. False when the call is unknown.
std::vector<char> launchedInCompiledRegion(const TraceModel& model);

} // namespace tuneup::analysis
