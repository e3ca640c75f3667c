#pragma once
// The built-in rules. Adding one: its file rules/<id>.cpp (with make<Name>() at the end) and its
// documentation rules/<id>.md, and one line in the list below, which is also the order reports list them
// in. Ids are a stable interface.

#include "advise/rule.h"

#include <memory>
#include <vector>

#define TUNEUP_BUILTIN_RULES(RULE)                                                                                     \
    RULE(CudnnAutotunerOff)                                                                                            \
    RULE(ZeroGradFill)                                                                                                 \
    RULE(UnfusedOptimizer)                                                                                             \
    RULE(HalfWithoutMasterWeights)                                                                                     \
    RULE(AmpLossScaleInstability)                                                                                      \
    RULE(ClipBeforeUnscale)                                                                                            \
    RULE(GemmDimsNotAligned)                                                                                           \
    RULE(DataParallel)                                                                                                 \
    RULE(DataloaderStall)                                                                                              \
    RULE(PageableMemcpy)                                                                                               \
    RULE(SyncInLoop)                                                                                                   \
    RULE(DebugApiEnabled)                                                                                              \
    RULE(AmpUnused)                                                                                                    \
    RULE(UnfusedPointwise)                                                                                             \
    RULE(LowGpuUtilization)                                                                                            \
    RULE(ConvBiasBeforeBatchnorm)                                                                                      \
    RULE(SyncBatchnormMissing)                                                                                         \
    RULE(SyncBatchnormUnneeded)                                                                                        \
    RULE(CpuTensorThenCopy)                                                                                            \
    RULE(GpuIdle)                                                                                                      \
    RULE(CommunicationBound)                                                                                           \
    RULE(MemoryHeadroom)                                                                                               \
    RULE(RankStraggler)

namespace tuneup::rules {

std::vector<std::unique_ptr<analysis::Rule>> builtinRules();

#define TUNEUP_DECLARE_RULE(Name) std::unique_ptr<analysis::Rule> make##Name();
TUNEUP_BUILTIN_RULES(TUNEUP_DECLARE_RULE)
#undef TUNEUP_DECLARE_RULE

} // namespace tuneup::rules
