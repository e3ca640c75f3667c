#include "all_rules.h"

namespace tuneup::rules {

std::vector<std::unique_ptr<analysis::Rule>> builtinRules()
{
    std::vector<std::unique_ptr<analysis::Rule>> rules;
    rules.push_back(makePageableMemcpy());
    return rules;
}

} // namespace tuneup::rules
