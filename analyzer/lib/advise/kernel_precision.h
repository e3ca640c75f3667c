#pragma once
// The precision a kernel of a trace computes in: what its name says (kernel_class.h kernelPrecision) and, for
// Triton kernels of torch.compile, whose names do not spell their types, the input types of the op that
// launched them, where the trace records them (Kineto with record_shapes: "Input type").

#include "advise/kernel_class.h"
#include "model/trace_model.h"

#include <string_view>

namespace tuneup::analysis {

// A torch dtype as Kineto writes it ("float", "c10::BFloat16", "c10::Float8_e4m3fn"); Unknown for what is no
// floating-point or int8 tensor (Scalar, lists, integers, bool, an empty type).
Precision torchTypePrecision(std::string_view type);
// The narrowest floating-point (or int8) type among an op's inputs, "float,c10::BFloat16,Scalar" -> Bf16: the
// operands a GEMM template multiplies, beside a wider bias or accumulator.
Precision inputTypesPrecision(std::string_view inputTypes);
// From the kernel's name, else for a Triton kernel from its launching op's input types (`launchingOpTypes`,
// empty when unknown).
Precision kernelPrecision(std::string_view name, std::string_view launchingOpTypes);
// The same for kernel row `kernel` of `model`.
Precision kernelPrecision(const TraceModel& model, size_t kernel);

} // namespace tuneup::analysis
