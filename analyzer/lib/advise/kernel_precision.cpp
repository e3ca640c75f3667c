#include "advise/kernel_precision.h"

namespace tuneup::analysis {

Precision torchTypePrecision(std::string_view type) {
    if (type.starts_with("c10::")) type.remove_prefix(5);
    if (type == "float" || type == "Float") return Precision::Fp32;
    if (type == "double" || type == "Double") return Precision::Fp64;
    if (type == "Half") return Precision::Fp16;
    if (type == "BFloat16") return Precision::Bf16;
    if (type.starts_with("Float8")) return Precision::Fp8;
    if (type.starts_with("Float4")) return Precision::Fp4;
    if (type == "signed char") return Precision::Int8;
    return Precision::Unknown;
}

Precision inputTypesPrecision(std::string_view inputTypes) {
    Precision narrowest = Precision::Unknown;
    for (std::string_view type : splitInputTypes(inputTypes)) {
        const Precision p = torchTypePrecision(type);
        if (p != Precision::Unknown
            && (narrowest == Precision::Unknown || precisionBytes(p) < precisionBytes(narrowest)))
            narrowest = p;
    }
    return narrowest;
}

Precision kernelPrecision(std::string_view name, std::string_view launchingOpTypes) {
    const Precision fromName = kernelPrecision(name);
    if (fromName != Precision::Unknown || !name.starts_with("triton")) return fromName;
    return inputTypesPrecision(launchingOpTypes);
}

Precision kernelPrecision(const TraceModel& model, size_t kernel) {
    const RowIndex op = model.kernels.cpuOp[kernel];
    return kernelPrecision(model.str(model.kernels.name[kernel]),
        op == kNoRow ? std::string_view() : model.str(model.cpuOps.inputTypes[size_t(op)]));
}

} // namespace tuneup::analysis
