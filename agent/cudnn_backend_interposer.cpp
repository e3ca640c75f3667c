// cuDNN backend (graph API) interposers (LD_PRELOAD), the path PyTorch 2.x takes for convolutions (through
// cudnn-frontend). The descriptors a program builds are followed (cudnn_backend_graph.h) so that:
//  - cudnnBackendExecute of a plan whose graph holds a convolution is recorded as a run, with the shape,
//    the engine's global index, how that engine was chosen (set by the program: given; from heuristics
//    results: heuristic) and the plan's number -- several plans run for one shape is the autotuner's
//    search, which the analyzer recognises;
//  - finalizing an engine-heuristics descriptor (cuDNN's heuristics rank the engines) is recorded as a
//    heuristic query for its graph's convolution.
// Execute is the hot call: it finds its plan in a lock-free cache; building a plan's summary (once per
// plan, under BackendGraph's mutex) may ask the library for the engine of a heuristics config.

#include "cudnn_backend_graph.h"
#include "descriptor_cache.h"
#include "host_events.h"
#include "interpose_record.h"
#include "interpose_resolve.h"
#include "library_functions.h"
#include "trace_schema.h"

#include <algorithm>
#include <cstring>
#include <cudnn.h>

#define TUNEUP_INTERPOSE extern "C" __attribute__((visibility("default")))

using namespace tuneup::agent;
namespace schema = tuneup::schema;

namespace {

// Never destroyed: descriptors may be destroyed by other libraries' destructors at exit.
BackendGraph& graph() {
    static BackendGraph* g = new BackendGraph;
    return *g;
}

// The type of each followed descriptor, so that Destroy and Finalize of the many that are not followed
// (variant packs: one per execution) cost a lock-free lookup.
PointerCache<1, 4096> s_followed;
// A plan's summary: ConvShape words, then engine, id, flags.
constexpr size_t kShapeWords = (sizeof(ConvShape) + 7) / 8;
using PlanWords = std::array<uint64_t, kShapeWords + 3>;
PointerCache<kShapeWords + 3, 256> s_plans;

RealFunction<decltype(&::cudnnBackendCreateDescriptor)> s_create { "cudnnBackendCreateDescriptor", kCudnn };
RealFunction<decltype(&::cudnnBackendDestroyDescriptor)> s_destroy { "cudnnBackendDestroyDescriptor", kCudnn };
RealFunction<decltype(&::cudnnBackendSetAttribute)> s_set { "cudnnBackendSetAttribute", kCudnn };
RealFunction<decltype(&::cudnnBackendGetAttribute)> s_get { "cudnnBackendGetAttribute", kCudnn };
RealFunction<decltype(&::cudnnBackendFinalize)> s_finalize { "cudnnBackendFinalize", kCudnn };
RealFunction<decltype(&::cudnnBackendExecute)> s_execute { "cudnnBackendExecute", kCudnn };

bool tracking() {
    return recordingConv() && !insideLibraryCall();
}

int followedType(const void* descriptor) {
    std::array<uint64_t, 1> type;
    return s_followed.get(descriptor, type) ? int(type[0]) : -1;
}

PlanWords pack(const BackendGraph::Plan& p) {
    PlanWords w {};
    memcpy(w.data(), &p.shape, sizeof p.shape);
    w[kShapeWords] = uint64_t(p.engine);
    w[kShapeWords + 1] = p.id;
    w[kShapeWords + 2] = uint64_t(p.convolution ? 1 : 0) | (uint64_t(uint32_t(p.algoSource)) << 8);
    return w;
}

BackendGraph::Plan unpack(const PlanWords& w) {
    BackendGraph::Plan p;
    memcpy(static_cast<void*>(&p.shape), w.data(), sizeof p.shape); // ConvShape is trivially copyable
    p.engine = int64_t(w[kShapeWords]);
    p.id = w[kShapeWords + 1];
    p.convolution = w[kShapeWords + 2] & 1;
    p.algoSource = int(uint32_t(w[kShapeWords + 2] >> 8));
    return p;
}

// The global index of the engine in a config that came from heuristics results: asked of `library` (a
// function of the cuDNN copy the program's call went to; the real functions, not ours: nothing here is
// followed or recorded). Once per plan.
int64_t engineOfConfig(const void* library, const void* config) {
    const auto create = s_create.beside(library);
    const auto get = s_get.beside(library);
    const auto destroy = s_destroy.beside(library);
    if (!create || !get || !destroy || !config) return kUnknown;
    cudnnBackendDescriptor_t engine = nullptr;
    if (create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) != CUDNN_STATUS_SUCCESS) return kUnknown;
    int64_t index = kUnknown, count = 0;
    auto cfg = const_cast<void*>(config);
    if (get(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &engine) != CUDNN_STATUS_SUCCESS
        || get(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &count, &index) != CUDNN_STATUS_SUCCESS)
        index = kUnknown;
    destroy(engine);
    return index;
}

BackendGraph::Plan planSummary(const void* library, const void* plan) {
    PlanWords words;
    if (s_plans.get(plan, words)) [[likely]]
        return unpack(words);
    BackendGraph::Plan p = graph().plan(plan);
    if (p.convolution && p.engine == kUnknown && p.config) p.engine = engineOfConfig(library, p.config);
    s_plans.put(plan, pack(p));
    return p;
}

void emitBackendCall(const LibraryCall& call, LibraryFunction function, int callKind, const ConvShape& shape,
    int64_t algo, int algoSource, uint64_t planId, cudnnStatus_t status) {
    ConvCallFixed out {};
    out.endNs = call.endNs;
    out.externalId = call.externalId;
    out.planId = planId;
    out.algo = algo;
    out.shape = shape;
    out.status = int32_t(status);
    out.function = uint16_t(function);
    out.api = uint8_t(schema::kConvBackend);
    out.callKind = uint8_t(callKind);
    out.algoSource = uint8_t(algoSource);
    emitConvCall(call.startNs, out);
}

} // namespace

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnBackendCreateDescriptor(
    cudnnBackendDescriptorType_t descriptorType, cudnnBackendDescriptor_t* descriptor) {
    const auto real = s_create.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUDNN_STATUS_NOT_INITIALIZED;
    const cudnnStatus_t status = real(descriptorType, descriptor);
    if (status == CUDNN_STATUS_SUCCESS && descriptor && BackendGraph::followed(int(descriptorType)) && tracking()) {
        graph().created(*descriptor, int(descriptorType));
        s_followed.put(*descriptor, { uint64_t(descriptorType) });
        s_plans.erase(*descriptor);
    }
    return status;
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnBackendDestroyDescriptor(cudnnBackendDescriptor_t descriptor) {
    const auto real = s_destroy.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUDNN_STATUS_NOT_INITIALIZED;
    // Before the memory is freed: a new descriptor may take the address right after.
    if (followedType(descriptor) >= 0 && tracking()) {
        s_followed.erase(descriptor);
        s_plans.erase(descriptor);
        graph().destroyed(descriptor);
    }
    return real(descriptor);
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnBackendSetAttribute(cudnnBackendDescriptor_t descriptor,
    cudnnBackendAttributeName_t attributeName, cudnnBackendAttributeType_t attributeType, int64_t elementCount,
    const void* arrayOfElements) {
    const auto real = s_set.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUDNN_STATUS_NOT_INITIALIZED;
    const cudnnStatus_t status = real(descriptor, attributeName, attributeType, elementCount, arrayOfElements);
    // The attribute name filters first: variant packs (one per execution) take no lock.
    if (status == CUDNN_STATUS_SUCCESS && BackendGraph::followedAttribute(int(attributeName)) && tracking()) {
        graph().setAttribute(descriptor, int(attributeName), int(attributeType), elementCount, arrayOfElements);
        if (attributeName == CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG) s_plans.erase(descriptor);
    }
    return status;
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnBackendGetAttribute(cudnnBackendDescriptor_t const descriptor,
    cudnnBackendAttributeName_t attributeName, cudnnBackendAttributeType_t attributeType, int64_t requestedElementCount,
    int64_t* elementCount, void* arrayOfElements) {
    const auto real = s_get.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUDNN_STATUS_NOT_INITIALIZED;
    const cudnnStatus_t status
        = real(descriptor, attributeName, attributeType, requestedElementCount, elementCount, arrayOfElements);
    // Heuristics results: the engine configs the program will build plans from.
    if (status == CUDNN_STATUS_SUCCESS && attributeName == CUDNN_ATTR_ENGINEHEUR_RESULTS
        && attributeType == CUDNN_TYPE_BACKEND_DESCRIPTOR && elementCount && arrayOfElements && tracking())
        graph().heuristicResults(descriptor, static_cast<const void* const*>(arrayOfElements),
            std::min(*elementCount, requestedElementCount));
    return status;
}

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnBackendFinalize(cudnnBackendDescriptor_t descriptor) {
    const auto real = s_finalize.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUDNN_STATUS_NOT_INITIALIZED;
    const int type = recordingConv() ? followedType(descriptor) : -1;
    if (type != CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR) {
        const cudnnStatus_t status = real(descriptor);
        if (type == CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR && status == CUDNN_STATUS_SUCCESS && tracking()) {
            s_plans.erase(descriptor);
            planSummary(reinterpret_cast<const void*>(real), descriptor); // built now, off the Execute path
        }
        return status;
    }
    // Finalizing engine heuristics runs cuDNN's heuristics: a heuristic query of its graph's convolution.
    LibraryCall call(true);
    const cudnnStatus_t status = real(descriptor);
    call.finish();
    ConvShape shape;
    if (call.recorded() && graph().heuristicsConvolution(descriptor, shape))
        emitBackendCall(call, LibraryFunction::CudnnBackendFinalize, schema::kConvHeuristic, shape, kUnknown,
            schema::kAlgoHeuristic, 0, status);
    return status;
}

namespace {

// The recorded execution, out of line so that the common path stays a plain forward.
__attribute__((noinline)) cudnnStatus_t recordExecute(decltype(&::cudnnBackendExecute) real, cudnnHandle_t handle,
    cudnnBackendDescriptor_t executionPlan, cudnnBackendDescriptor_t variantPack) {
    LibraryCall call(true);
    const cudnnStatus_t status = real(handle, executionPlan, variantPack);
    call.finish();
    const BackendGraph::Plan plan = planSummary(reinterpret_cast<const void*>(real), executionPlan);
    if (plan.convolution)
        emitBackendCall(call, LibraryFunction::CudnnBackendExecute, schema::kConvRun, plan.shape, plan.engine,
            plan.algoSource, plan.id, status);
    return status;
}

} // namespace

TUNEUP_INTERPOSE cudnnStatus_t CUDNNWINAPI cudnnBackendExecute(
    cudnnHandle_t handle, cudnnBackendDescriptor_t executionPlan, cudnnBackendDescriptor_t variantPack) {
    const auto real = s_execute.get(TUNEUP_CALLER);
    if (!real) [[unlikely]]
        return CUDNN_STATUS_NOT_INITIALIZED;
    if (!recordingConv() || insideLibraryCall()) [[likely]]
        return real(handle, executionPlan, variantPack);
    return recordExecute(real, handle, executionPlan, variantPack);
}
