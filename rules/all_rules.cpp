#include "all_rules.h"

namespace tuneup::rules {

std::vector<std::unique_ptr<analysis::Rule>> builtinRules() {
    std::vector<std::unique_ptr<analysis::Rule>> rules;
#define TUNEUP_MAKE_RULE(Name) rules.push_back(make##Name());
    TUNEUP_BUILTIN_RULES(TUNEUP_MAKE_RULE)
#undef TUNEUP_MAKE_RULE
    return rules;
}

} // namespace tuneup::rules
