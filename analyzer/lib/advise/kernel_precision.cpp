#include "advise/kernel_precision.h"

namespace tuneup::analysis {

namespace {

// Narrower first: how many bits a value of the precision has, for picking the narrowest input.
int bitsOf(Precision p) {
    switch (p) {
    case Precision::Fp4:
        return 4;
    case Precision::Fp8:
    case Precision::Int8:
        return 8;
    case Precision::Fp16:
    case Precision::Bf16:
        return 16;
    case Precision::Fp32:
    case Precision::Tf32:
        return 32;
    case Precision::Fp64:
        return 64;
    case Precision::Unknown:
        break;
    }
    return 1000;
}

} // namespace

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
    for (std::string_view type : splitInputTypes(inputTypes))
        if (const Precision p = torchTypePrecision(type); bitsOf(p) < bitsOf(narrowest)) narrowest = p;
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
