#pragma once
// A recorded setting as a person reads it. The trace keeps numbers (the torch probes' flags, the Python
// bootstrap's facts: docs/agent.md); reports show "torch.version 1.13.0", "amp.scale 65536",
// "optimizer.family torch.optim", "optimizer.fused no such option" instead of 11300, 65536000, 1 and -1.

#include <string>
#include <string_view>

namespace tuneup::analysis {

struct SettingText {
    std::string name, value;
};

// `name` without the "tuneup." prefix, `value` as recordedSettings() gives it. A name it does not know, or a
// value that is not a number (or ""), is returned as it is; the name alone may change ("amp.scale").
SettingText readableSetting(std::string_view name, std::string_view value);

} // namespace tuneup::analysis
