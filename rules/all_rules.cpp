#include "all_rules.h"

namespace tuneup::rules {

std::vector<std::unique_ptr<analysis::Rule>> builtinRules() {
    std::vector<std::unique_ptr<analysis::Rule>> rules;
    rules.push_back(makeCudnnAutotunerOff());
    rules.push_back(makeZeroGradFill());
    rules.push_back(makeGemmDimsNotAligned());
    rules.push_back(makeDataParallel());
    rules.push_back(makeDataloaderStall());
    rules.push_back(makePageableMemcpy());
    rules.push_back(makeSyncInLoop());
    rules.push_back(makeDebugApiEnabled());
    rules.push_back(makeAmpUnused());
    rules.push_back(makeUnfusedPointwise());
    rules.push_back(makeLowGpuUtilization());
    rules.push_back(makeConvBiasBeforeBatchnorm());
    rules.push_back(makeCpuTensorThenCopy());
    rules.push_back(makeGpuIdle());
    rules.push_back(makeCommunicationBound());
    rules.push_back(makeRankStraggler());
    return rules;
}

} // namespace tuneup::rules
