#pragma once
// The GPU kernels each recorded library call launched (TraceModel::gemmCalls, convCalls): by CUPTI's
// external correlation when the agent pushed an id around the call, else by the CUDA launch calls
// (ApiCallTable) made on the call's thread inside its time window. A call without kernels failed, launched
// none, or was recorded without GPU capture.

#include "model/trace_model.h"

#include <cstdint>
#include <span>
#include <vector>

namespace tuneup::analysis {

struct CallKernels {
    std::vector<uint32_t> offsets; // kernels of call i: kernels[offsets[i] .. offsets[i + 1])
    std::vector<RowIndex> kernels; // rows of TraceModel::kernels
    size_t byExternalId = 0; // calls linked through CUPTI's external correlation
    size_t byTimeWindow = 0; // calls linked through launches in their window

    std::span<const RowIndex> of(size_t call) const {
        return { kernels.data() + offsets[call], kernels.data() + offsets[call + 1] };
    }
};

CallKernels gemmCallKernels(const TraceModel& model);
CallKernels convCallKernels(const TraceModel& model);

} // namespace tuneup::analysis
