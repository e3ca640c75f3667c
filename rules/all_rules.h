#pragma once
// The built-in rules, in the order reports list them. Ids are a stable interface.

#include "advise/rule.h"

#include <memory>
#include <vector>

namespace tuneup::rules {

std::vector<std::unique_ptr<analysis::Rule>> builtinRules();

// One factory per rule, defined in the rule's own file.
std::unique_ptr<analysis::Rule> makePageableMemcpy();

} // namespace tuneup::rules
