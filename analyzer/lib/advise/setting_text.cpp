#include "advise/setting_text.h"

#include <charconv>
#include <cstdint>
#include <optional>

namespace tuneup::analysis {

namespace {

std::optional<int64_t> number(std::string_view text) {
    int64_t v = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return v;
}

// Facts that are switches: 1 on, 0 off.
constexpr std::string_view kSwitches[]
    = { "zero_grad.set_to_none", "dataloader.pin_memory", "dataloader.persistent_workers", "wrap.data_parallel",
          "wrap.distributed_data_parallel", "amp.grad_scaler", "gradcheck" };

} // namespace

SettingText readableSetting(std::string_view name, std::string_view value) {
    SettingText text { std::string(name == "amp.scale_milli" ? "amp.scale" : name), std::string(value) };
    const std::optional<int64_t> v = number(value);
    if (!v) return text;
    if (name == "torch.version" && *v >= 0) { // major × 10000 + minor × 100 + patch
        text.value = std::to_string(*v / 10000) + "." + std::to_string(*v / 100 % 100) + "." + std::to_string(*v % 100);
    } else if (name == "amp.scale_milli" && *v >= 0) { // the loss scale × 1000
        text.value = std::to_string(*v / 1000);
        if (*v % 1000 != 0) {
            std::string fraction = std::to_string(*v % 1000 + 1000).substr(1); // three digits
            while (fraction.back() == '0')
                fraction.pop_back();
            text.value += "." + fraction;
        }
    } else if (name == "optimizer.family") {
        text.value = *v == 1 ? "torch.optim" : *v == 2 ? "apex" : *v == 0 ? "other" : text.value;
    } else if (name == "optimizer.foreach" || name == "optimizer.fused") {
        text.value = *v < 0 ? "no such option" : *v ? "on" : "off";
    } else if (name == "amp.updates" || name == "amp.skipped") {
        if (*v < 0) text.value = "unknown";
    } else {
        for (const std::string_view s : kSwitches)
            if (name == s && (*v == 0 || *v == 1)) text.value = *v ? "on" : "off";
    }
    return text;
}

} // namespace tuneup::analysis
