#include "advise/finding.h"

namespace tuneup::analysis {

std::string_view severityName(Severity s) {
    switch (s) {
    case Severity::Info:
        return "info";
    case Severity::Warning:
        return "warning";
    case Severity::Error:
        return "error";
    }
    return "info";
}

std::optional<Severity> parseSeverity(std::string_view text) {
    if (text == "info") return Severity::Info;
    if (text == "warning") return Severity::Warning;
    if (text == "error") return Severity::Error;
    return std::nullopt;
}

std::string_view findingKindName(FindingKind k) {
    switch (k) {
    case FindingKind::Performance:
        return "performance";
    case FindingKind::Correctness:
        return "correctness";
    case FindingKind::Information:
        return "information";
    }
    return "performance";
}

std::optional<FindingKind> parseFindingKind(std::string_view text) {
    for (FindingKind k : { FindingKind::Performance, FindingKind::Correctness, FindingKind::Information })
        if (text == findingKindName(k)) return k;
    return std::nullopt;
}

std::string_view eventTableName(EventTable t) {
    switch (t) {
    case EventTable::Kernel:
        return "kernels";
    case EventTable::Memcpy:
        return "memcpys";
    case EventTable::Memset:
        return "memsets";
    case EventTable::Sync:
        return "syncs";
    case EventTable::ApiCall:
        return "api_calls";
    case EventTable::CpuOp:
        return "cpu_ops";
    case EventTable::Annotation:
        return "annotations";
    case EventTable::Collective:
        return "collectives";
    case EventTable::GemmCall:
        return "gemm_calls";
    case EventTable::ConvCall:
        return "conv_calls";
    case EventTable::MemoryEvent:
        return "memory_events";
    }
    return "kernels";
}

std::string_view ruleStatusName(RuleStatus s) {
    switch (s) {
    case RuleStatus::Raised:
        return "raised";
    case RuleStatus::Clean:
        return "clean";
    case RuleStatus::NotEvaluated:
        return "not evaluated";
    case RuleStatus::NotApplicable:
        return "not applicable";
    }
    return "clean";
}

} // namespace tuneup::analysis
