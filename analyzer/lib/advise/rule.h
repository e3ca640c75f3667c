#pragma once
// The rule interface. A rule declares the inputs it needs; the engine answers "not evaluated: needs
// ..." for it when the trace lacks one, so a rule never guesses. Built-in rules live in rules/, one
// file per rule with its documentation rules/<id>.md; ids are a stable interface.

#include "advise/finding.h"
#include "steps/breakdown.h"

#include <string_view>
#include <vector>

namespace tuneup::analysis {

// Facts a trace may or may not hold.
enum class Input {
    GpuKernels, // kernel activity
    Memcpys, // memory copy activity with host memory kinds
    CpuOps, // framework operators (Kineto cpu_op)
    InputShapes, // operator input dims (record_shapes) or recorded GEMM shapes
    Steps, // training steps were found
    OptimizerRanges, // Optimizer.zero_grad / Optimizer.step ranges
    DataLoaderRanges, // enumerate(DataLoader)... ranges
    DeviceProperties, // GPU model / compute capability
    TorchFlags, // torch settings read from the process (cudnn.benchmark, anomaly mode...)
    Collectives, // communication kernels or ops
    MultipleRanks, // more than one rank's trace in the job
    MemoryUsage, // GPU memory events (allocations and frees, with or without the allocator's totals)
};
inline constexpr Input kLastInput = Input::MemoryUsage;
std::string_view inputName(Input input); // "GPU kernel activity"

class RuleContext;
class JobContext;

struct RuleInfo {
    std::string_view id;
    std::string_view title; // short, for listings
    std::string_view summary; // one sentence: what it detects
    std::vector<Input> needs;
    // Evaluated once over every rank's summary (rank-straggler) instead of on each rank's trace.
    bool jobWide = false;
    // What it reads that `needs` cannot say, for listings: facts of tuneup's Python bootstrap, or inputs of
    // which any one will do ("the optimizer's parameters, from tuneup's Python bootstrap").
    std::string_view reads = {};
};

// A rule is per rank (it reads one rank's trace: evaluate) or job-wide (it compares the ranks'
// summaries: evaluateJob), as info().jobWide says. Either is called only when every input in
// info().needs is present (for a job-wide rule: in at least one rank). It fills `outcome` (status,
// reason, findings); the engine sets the rule id, and the rank of a per-rank rule's findings.
class Rule {
public:
    virtual ~Rule() = default;
    virtual const RuleInfo& info() const = 0;
    virtual void evaluate(const RuleContext& /*context*/, RuleOutcome& /*outcome*/) const { }
    virtual void evaluateJob(const JobContext& /*job*/, RuleOutcome& /*outcome*/) const { }
};

} // namespace tuneup::analysis
