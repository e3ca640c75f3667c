#pragma once
// The built-in rules, in the order reports list them. Ids are a stable interface.

#include "advise/rule.h"

#include <memory>
#include <vector>

namespace tuneup::rules {

std::vector<std::unique_ptr<analysis::Rule>> builtinRules();

// One factory per rule, defined in the rule's own file.
std::unique_ptr<analysis::Rule> makeZeroGradFill();
std::unique_ptr<analysis::Rule> makeGemmDimsNotAligned();
std::unique_ptr<analysis::Rule> makeDataloaderStall();
std::unique_ptr<analysis::Rule> makeCudnnAutotunerOff();
std::unique_ptr<analysis::Rule> makeDataParallel();
std::unique_ptr<analysis::Rule> makePageableMemcpy();
std::unique_ptr<analysis::Rule> makeDebugApiEnabled();
std::unique_ptr<analysis::Rule> makeAmpUnused();
std::unique_ptr<analysis::Rule> makeUnfusedPointwise();
std::unique_ptr<analysis::Rule> makeCommunicationBound();
std::unique_ptr<analysis::Rule> makeRankStraggler();
std::unique_ptr<analysis::Rule> makeSyncInLoop();
std::unique_ptr<analysis::Rule> makeLowGpuUtilization();
std::unique_ptr<analysis::Rule> makeConvBiasBeforeBatchnorm();
std::unique_ptr<analysis::Rule> makeCpuTensorThenCopy();
std::unique_ptr<analysis::Rule> makeGpuIdle();

} // namespace tuneup::rules
