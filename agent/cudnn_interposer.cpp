// cuDNN legacy convolution interposers (LD_PRELOAD): the convolutions themselves (cudnnConvolutionForward,
// BackwardData, BackwardFilter, BiasActivationForward: the algorithm is passed in, algo_source "given"), the
// autotuner's search (cudnnFind*Algorithm[Ex]: cuDNN times the algorithms) and the heuristics
// (cudnnGet*Algorithm_v7). Each records its shape, read from the descriptors after the real call returns
// (a few getter calls: convolutions are rare next to GEMMs and cost microseconds), the algorithm and the
// status. Which algorithm a run used and how it was chosen is left to the analyzer, which sees the calls
// in order.

#include "conv_shape.h"
#include "host_events.h"
#include "interpose_record.h"
#include "interpose_resolve.h"
#include "library_functions.h"
#include "trace_schema.h"

#include <cudnn.h>

#define TUNEUP_INTERPOSE extern "C" __attribute__((visibility("default")))

using namespace tuneup::agent;
namespace schema = tuneup::schema;

namespace {

RealFunction<decltype(&::cudnnGetTensorNdDescriptor)> s_getTensor { "cudnnGetTensorNdDescriptor", kCudnn };
RealFunction<decltype(&::cudnnGetFilterNdDescriptor)> s_getFilter { "cudnnGetFilterNdDescriptor", kCudnn };
RealFunction<decltype(&::cudnnGetConvolutionNdDescriptor)> s_getConv { "cudnnGetConvolutionNdDescriptor", kCudnn };
RealFunction<decltype(&::cudnnGetConvolutionGroupCount)> s_getGroups { "cudnnGetConvolutionGroupCount", kCudnn };
RealFunction<decltype(&::cudnnGetConvolutionMathType)> s_getMath { "cudnnGetConvolutionMathType", kCudnn };

// The shape from the input (x or dx), filter (w or dw) and convolution descriptors, asked of `library`
// (a function of the cuDNN copy that ran the call); what cannot be read stays unknown.
ConvShape readShape(const void* library, int direction, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
    cudnnConvolutionDescriptor_t conv) {
    ConvShape s;
    s.direction = int8_t(direction);
    constexpr int kMax = 8;
    if (const auto get = s_getTensor.beside(library); get && x) {
        cudnnDataType_t type {};
        int dims = 0, sizes[kMax] = {}, strides[kMax] = {};
        if (get(x, kMax, &type, &dims, sizes, strides) == CUDNN_STATUS_SUCCESS && dims <= kMax) {
            int64_t sizes64[kMax], strides64[kMax];
            for (int i = 0; i < dims; ++i)
                sizes64[i] = sizes[i], strides64[i] = strides[i];
            setConvInput(s, dims, sizes64, strides64, int(type));
        }
    }
    if (const auto get = s_getFilter.beside(library); get && w) {
        cudnnDataType_t type {};
        cudnnTensorFormat_t format {};
        int dims = 0, sizes[kMax] = {};
        if (get(w, kMax, &type, &format, &dims, sizes) == CUDNN_STATUS_SUCCESS && dims <= kMax) {
            int64_t sizes64[kMax];
            for (int i = 0; i < dims; ++i)
                sizes64[i] = sizes[i];
            setConvFilter(s, dims, sizes64);
        }
    }
    if (const auto get = s_getConv.beside(library); get && conv) {
        int spatial = 0, pads[3] = {}, strides[3] = {}, dilations[3] = {};
        cudnnConvolutionMode_t mode {};
        cudnnDataType_t compute {};
        if (get(conv, 3, &spatial, pads, strides, dilations, &mode, &compute) == CUDNN_STATUS_SUCCESS && spatial <= 3) {
            int64_t p[3], st[3], dl[3];
            for (int i = 0; i < spatial; ++i)
                p[i] = pads[i], st[i] = strides[i], dl[i] = dilations[i];
            setConvGeometry(s, spatial, p, st, dl);
            s.computeType = int32_t(compute);
        }
    }
    if (const auto get = s_getGroups.beside(library); get && conv) {
        int groups = 0;
        if (get(conv, &groups) == CUDNN_STATUS_SUCCESS) s.groups = groups;
    }
    if (const auto get = s_getMath.beside(library); get && conv) {
        cudnnMathType_t math {};
        if (get(conv, &math) == CUDNN_STATUS_SUCCESS) s.mathType = int32_t(math);
    }
    inferConvGroups(s);
    return s;
}

// The algorithm a Find or Get call ranked first: its first result cuDNN can run, else its first result
// (without a GPU none can run, and the ranking is still the heuristics' answer).
template <class Perf> int64_t bestAlgorithm(cudnnStatus_t status, const int* returned, const Perf* results) {
    if (status != CUDNN_STATUS_SUCCESS || !returned || *returned <= 0 || !results) return kUnknown;
    for (int i = 0; i < *returned && i < 64; ++i)
        if (results[i].status == CUDNN_STATUS_SUCCESS) return int64_t(results[i].algo);
    return int64_t(results[0].algo);
}

// How a call's algorithm was chosen: each kind of call chooses one way.
struct AlgoChoice {
    int callKind; // schema::ConvCallKind
    int algoSource; // schema::AlgoSource
};
// A convolution runs the algorithm it is passed.
constexpr AlgoChoice kGiven { schema::kConvRun, schema::kAlgoGiven };
// Find: cuDNN runs and times the algorithms.
constexpr AlgoChoice kSearched { schema::kConvFind, schema::kAlgoFind };
// Get: cuDNN's heuristics rank them without running them.
constexpr AlgoChoice kHeuristic { schema::kConvHeuristic, schema::kAlgoHeuristic };

// What a recorded call says besides its time and status, read after the real call returned.
struct ConvFacts {
    ConvShape shape;
    int64_t algo = kUnknown;
};

// Calls the real function and records it (the outermost interposed call on this thread), out of line.
template <class Fn, class Describe, class... Args>
__attribute__((noinline)) cudnnStatus_t recordConv(
    Fn f, LibraryFunction function, AlgoChoice choice, Describe describe, Args... args) {
    LibraryCall call(true);
    const cudnnStatus_t status = f(args...);
    call.finish();
    const ConvFacts facts = describe(status, reinterpret_cast<const void*>(f));
    ConvCallFixed out {};
    out.endNs = call.endNs;
    out.externalId = call.externalId;
    out.algo = facts.algo;
    out.shape = facts.shape;
    out.status = int32_t(status);
    out.function = uint16_t(function);
    out.api = uint8_t(schema::kConvLegacy);
    out.callKind = uint8_t(choice.callKind);
    out.algoSource = uint8_t(choice.algoSource);
    emitConvCall(call.startNs, out);
    return status;
}

// Forwards to the real function; records the call when convolutions are recorded and no other
// interposed call runs on this thread. `describe(status)` reads the shape and algorithm only then.
template <class Fn, class Describe, class... Args>
inline cudnnStatus_t callConv(const void* caller, RealFunction<Fn>& real, LibraryFunction function, AlgoChoice choice,
    Describe describe, Args... args) {
    const Fn f = real.get(caller);
    if (!f) [[unlikely]]
        return CUDNN_STATUS_NOT_INITIALIZED;
    if (!recordingConv() || insideLibraryCall()) [[likely]]
        return f(args...);
    return recordConv(f, function, choice, describe, args...);
}

// The `describe` callConv takes: a lambda over the call's arguments that reads the shape from the input
// (x or dx), filter (w or dw) and convolution descriptors, and gives the algorithm, when the call is
// recorded. It holds nothing but the call's own arguments (the direction is a template argument): the
// compiler builds it before the branch, and each further value would cost an unrecorded call a store.

// A convolution's: the algorithm it was passed.
template <schema::ConvDirection Direction>
auto shapeAndAlgorithm(
    cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv, int algo) {
    return [=](cudnnStatus_t, const void* library) {
        return ConvFacts { readShape(library, Direction, x, w, conv), algo };
    };
}

// A Find or Get call's: the algorithm it ranked first.
template <schema::ConvDirection Direction, class Perf>
auto shapeAndBestAlgorithm(cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t conv,
    const int* returned, const Perf* results) {
    return [=](cudnnStatus_t status, const void* library) {
        return ConvFacts { readShape(library, Direction, x, w, conv), bestAlgorithm(status, returned, results) };
    };
}

RealFunction<decltype(&::cudnnConvolutionForward)> s_forward { "cudnnConvolutionForward", kCudnn };
RealFunction<decltype(&::cudnnConvolutionBackwardData)> s_backwardData { "cudnnConvolutionBackwardData", kCudnn };
RealFunction<decltype(&::cudnnConvolutionBackwardFilter)> s_backwardFilter { "cudnnConvolutionBackwardFilter", kCudnn };
RealFunction<decltype(&::cudnnConvolutionBiasActivationForward)> s_biasActivation {
    "cudnnConvolutionBiasActivationForward", kCudnn
};
RealFunction<decltype(&::cudnnFindConvolutionForwardAlgorithm)> s_findForward { "cudnnFindConvolutionForwardAlgorithm",
    kCudnn };
RealFunction<decltype(&::cudnnFindConvolutionForwardAlgorithmEx)> s_findForwardEx {
    "cudnnFindConvolutionForwardAlgorithmEx", kCudnn
};
RealFunction<decltype(&::cudnnFindConvolutionBackwardDataAlgorithm)> s_findBackwardData {
    "cudnnFindConvolutionBackwardDataAlgorithm", kCudnn
};
RealFunction<decltype(&::cudnnFindConvolutionBackwardDataAlgorithmEx)> s_findBackwardDataEx {
    "cudnnFindConvolutionBackwardDataAlgorithmEx", kCudnn
};
RealFunction<decltype(&::cudnnFindConvolutionBackwardFilterAlgorithm)> s_findBackwardFilter {
    "cudnnFindConvolutionBackwardFilterAlgorithm", kCudnn
};
RealFunction<decltype(&::cudnnFindConvolutionBackwardFilterAlgorithmEx)> s_findBackwardFilterEx {
    "cudnnFindConvolutionBackwardFilterAlgorithmEx", kCudnn
};
RealFunction<decltype(&::cudnnGetConvolutionForwardAlgorithm_v7)> s_getForward {
    "cudnnGetConvolutionForwardAlgorithm_v7", kCudnn
};
RealFunction<decltype(&::cudnnGetConvolutionBackwardDataAlgorithm_v7)> s_getBackwardData {
    "cudnnGetConvolutionBackwardDataAlgorithm_v7", kCudnn
};
RealFunction<decltype(&::cudnnGetConvolutionBackwardFilterAlgorithm_v7)> s_getBackwardFilter {
    "cudnnGetConvolutionBackwardFilterAlgorithm_v7", kCudnn
};

} // namespace

// ---- the convolutions: the caller passes the algorithm ---------------------------------------------

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnConvolutionForward(cudnnHandle_t handle, const void* alpha,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnFilterDescriptor_t wDesc, const void* w,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo, void* workSpace,
    size_t workSpaceSizeInBytes, const void* beta, const cudnnTensorDescriptor_t yDesc, void* y) {
    return callConv(TUNEUP_CALLER, s_forward, LibraryFunction::CudnnConvolutionForward, kGiven,
        shapeAndAlgorithm<schema::kConvForward>(xDesc, wDesc, convDesc, int(algo)), handle, alpha, xDesc, x, wDesc, w,
        convDesc, algo, workSpace, workSpaceSizeInBytes, beta, yDesc, y);
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnConvolutionBiasActivationForward(cudnnHandle_t handle,
    const void* alpha1, const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnFilterDescriptor_t wDesc,
    const void* w, const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionFwdAlgo_t algo, void* workSpace,
    size_t workSpaceSizeInBytes, const void* alpha2, const cudnnTensorDescriptor_t zDesc, const void* z,
    const cudnnTensorDescriptor_t biasDesc, const void* bias, const cudnnActivationDescriptor_t activationDesc,
    const cudnnTensorDescriptor_t yDesc, void* y) {
    return callConv(TUNEUP_CALLER, s_biasActivation, LibraryFunction::CudnnConvolutionBiasActivationForward, kGiven,
        shapeAndAlgorithm<schema::kConvForward>(xDesc, wDesc, convDesc, int(algo)), handle, alpha1, xDesc, x, wDesc, w,
        convDesc, algo, workSpace, workSpaceSizeInBytes, alpha2, zDesc, z, biasDesc, bias, activationDesc, yDesc, y);
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnConvolutionBackwardData(cudnnHandle_t handle, const void* alpha,
    const cudnnFilterDescriptor_t wDesc, const void* w, const cudnnTensorDescriptor_t dyDesc, const void* dy,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdDataAlgo_t algo, void* workSpace,
    size_t workSpaceSizeInBytes, const void* beta, const cudnnTensorDescriptor_t dxDesc, void* dx) {
    return callConv(TUNEUP_CALLER, s_backwardData, LibraryFunction::CudnnConvolutionBackwardData, kGiven,
        shapeAndAlgorithm<schema::kConvBackwardData>(dxDesc, wDesc, convDesc, int(algo)), handle, alpha, wDesc, w,
        dyDesc, dy, convDesc, algo, workSpace, workSpaceSizeInBytes, beta, dxDesc, dx);
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnConvolutionBackwardFilter(cudnnHandle_t handle, const void* alpha,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t dyDesc, const void* dy,
    const cudnnConvolutionDescriptor_t convDesc, cudnnConvolutionBwdFilterAlgo_t algo, void* workSpace,
    size_t workSpaceSizeInBytes, const void* beta, const cudnnFilterDescriptor_t dwDesc, void* dw) {
    return callConv(TUNEUP_CALLER, s_backwardFilter, LibraryFunction::CudnnConvolutionBackwardFilter, kGiven,
        shapeAndAlgorithm<schema::kConvBackwardFilter>(xDesc, dwDesc, convDesc, int(algo)), handle, alpha, xDesc, x,
        dyDesc, dy, convDesc, algo, workSpace, workSpaceSizeInBytes, beta, dwDesc, dw);
}

// ---- the autotuner's search: cuDNN runs and times the algorithms ----------------------------------

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionForwardAlgorithm(cudnnHandle_t handle,
    const cudnnTensorDescriptor_t xDesc, const cudnnFilterDescriptor_t wDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults) {
    return callConv(TUNEUP_CALLER, s_findForward, LibraryFunction::CudnnFindForward, kSearched,
        shapeAndBestAlgorithm<schema::kConvForward>(xDesc, wDesc, convDesc, returnedAlgoCount, perfResults), handle,
        xDesc, wDesc, convDesc, yDesc, requestedAlgoCount, returnedAlgoCount, perfResults);
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionForwardAlgorithmEx(cudnnHandle_t handle,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnFilterDescriptor_t wDesc, const void* w,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t yDesc, void* y,
    const int requestedAlgoCount, int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults, void* workSpace,
    size_t workSpaceSizeInBytes) {
    return callConv(TUNEUP_CALLER, s_findForwardEx, LibraryFunction::CudnnFindForwardEx, kSearched,
        shapeAndBestAlgorithm<schema::kConvForward>(xDesc, wDesc, convDesc, returnedAlgoCount, perfResults), handle,
        xDesc, x, wDesc, w, convDesc, yDesc, y, requestedAlgoCount, returnedAlgoCount, perfResults, workSpace,
        workSpaceSizeInBytes);
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardDataAlgorithm(cudnnHandle_t handle,
    const cudnnFilterDescriptor_t wDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults) {
    return callConv(TUNEUP_CALLER, s_findBackwardData, LibraryFunction::CudnnFindBackwardData, kSearched,
        shapeAndBestAlgorithm<schema::kConvBackwardData>(dxDesc, wDesc, convDesc, returnedAlgoCount, perfResults),
        handle, wDesc, dyDesc, convDesc, dxDesc, requestedAlgoCount, returnedAlgoCount, perfResults);
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardDataAlgorithmEx(cudnnHandle_t handle,
    const cudnnFilterDescriptor_t wDesc, const void* w, const cudnnTensorDescriptor_t dyDesc, const void* dy,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t dxDesc, void* dx,
    const int requestedAlgoCount, int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults,
    void* workSpace, size_t workSpaceSizeInBytes) {
    return callConv(TUNEUP_CALLER, s_findBackwardDataEx, LibraryFunction::CudnnFindBackwardDataEx, kSearched,
        shapeAndBestAlgorithm<schema::kConvBackwardData>(dxDesc, wDesc, convDesc, returnedAlgoCount, perfResults),
        handle, wDesc, w, dyDesc, dy, convDesc, dxDesc, dx, requestedAlgoCount, returnedAlgoCount, perfResults,
        workSpace, workSpaceSizeInBytes);
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardFilterAlgorithm(cudnnHandle_t handle,
    const cudnnTensorDescriptor_t xDesc, const cudnnTensorDescriptor_t dyDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults) {
    return callConv(TUNEUP_CALLER, s_findBackwardFilter, LibraryFunction::CudnnFindBackwardFilter, kSearched,
        shapeAndBestAlgorithm<schema::kConvBackwardFilter>(xDesc, dwDesc, convDesc, returnedAlgoCount, perfResults),
        handle, xDesc, dyDesc, convDesc, dwDesc, requestedAlgoCount, returnedAlgoCount, perfResults);
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnFindConvolutionBackwardFilterAlgorithmEx(cudnnHandle_t handle,
    const cudnnTensorDescriptor_t xDesc, const void* x, const cudnnTensorDescriptor_t dyDesc, const void* y,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t dwDesc, void* dw,
    const int requestedAlgoCount, int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults,
    void* workSpace, size_t workSpaceSizeInBytes) {
    return callConv(TUNEUP_CALLER, s_findBackwardFilterEx, LibraryFunction::CudnnFindBackwardFilterEx, kSearched,
        shapeAndBestAlgorithm<schema::kConvBackwardFilter>(xDesc, dwDesc, convDesc, returnedAlgoCount, perfResults),
        handle, xDesc, x, dyDesc, y, convDesc, dwDesc, dw, requestedAlgoCount, returnedAlgoCount, perfResults,
        workSpace, workSpaceSizeInBytes);
}

// ---- the heuristics: cuDNN ranks the algorithms without running them ------------------------------

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t handle,
    const cudnnTensorDescriptor_t srcDesc, const cudnnFilterDescriptor_t filterDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t destDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionFwdAlgoPerf_t* perfResults) {
    return callConv(TUNEUP_CALLER, s_getForward, LibraryFunction::CudnnGetForwardV7, kHeuristic,
        shapeAndBestAlgorithm<schema::kConvForward>(srcDesc, filterDesc, convDesc, returnedAlgoCount, perfResults),
        handle, srcDesc, filterDesc, convDesc, destDesc, requestedAlgoCount, returnedAlgoCount, perfResults);
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardDataAlgorithm_v7(cudnnHandle_t handle,
    const cudnnFilterDescriptor_t filterDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnTensorDescriptor_t gradDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdDataAlgoPerf_t* perfResults) {
    return callConv(TUNEUP_CALLER, s_getBackwardData, LibraryFunction::CudnnGetBackwardDataV7, kHeuristic,
        shapeAndBestAlgorithm<schema::kConvBackwardData>(
            gradDesc, filterDesc, convDesc, returnedAlgoCount, perfResults),
        handle, filterDesc, diffDesc, convDesc, gradDesc, requestedAlgoCount, returnedAlgoCount, perfResults);
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnGetConvolutionBackwardFilterAlgorithm_v7(cudnnHandle_t handle,
    const cudnnTensorDescriptor_t srcDesc, const cudnnTensorDescriptor_t diffDesc,
    const cudnnConvolutionDescriptor_t convDesc, const cudnnFilterDescriptor_t gradDesc, const int requestedAlgoCount,
    int* returnedAlgoCount, cudnnConvolutionBwdFilterAlgoPerf_t* perfResults) {
    return callConv(TUNEUP_CALLER, s_getBackwardFilter, LibraryFunction::CudnnGetBackwardFilterV7, kHeuristic,
        shapeAndBestAlgorithm<schema::kConvBackwardFilter>(srcDesc, gradDesc, convDesc, returnedAlgoCount, perfResults),
        handle, srcDesc, diffDesc, convDesc, gradDesc, requestedAlgoCount, returnedAlgoCount, perfResults);
}
