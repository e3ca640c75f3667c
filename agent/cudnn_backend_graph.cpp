#include "cudnn_backend_graph.h"

#include "conv_shape.h"
#include "trace_schema.h"

#include <algorithm>
#include <cstring>

namespace tuneup::agent {

namespace {

// cudnnBackendDescriptorType_t values (cudnn_graph.h).
enum : int {
    kConvolution = 1,
    kEngine = 2,
    kEngineConfig = 3,
    kHeuristics = 4,
    kPlan = 5,
    kOpConvForward = 10,
    kOpConvBackwardFilter = 11,
    kOpConvBackwardData = 12,
    kOperationGraph = 15,
    kTensor = 17
};
// cudnnBackendAttributeType_t values.
enum : int { kTypeDataType = 1, kTypeInt64 = 3, kTypeDescriptor = 15 };
// cudnnBackendAttributeName_t values.
enum : int {
    kConvComputeType = 100,
    kConvDilations = 102,
    kConvFilterStrides = 103,
    kConvPrePaddings = 105,
    kConvSpatialDims = 106,
    kHeuristicsGraph = 201,
    kConfigEngine = 300,
    kPlanConfig = 401,
    kFwdConv = 702,
    kFwdW = 703,
    kFwdX = 704,
    kBwdDataConv = 708,
    kBwdDataW = 709,
    kBwdDataDx = 710,
    kBwdFilterConv = 714,
    kBwdFilterDw = 715,
    kBwdFilterX = 716,
    kGraphOps = 801,
    kTensorDataType = 901,
    kTensorDims = 902,
    kTensorStrides = 903,
    kEngineGraph = 1300,
    kEngineIndex = 1301,
};

// Up to `max` int64 elements, when the attribute holds int64s.
int copyInt64(int attributeType, int64_t count, const void* elements, int64_t* out, int max) {
    if (attributeType != kTypeInt64 || !elements || count <= 0) return 0;
    const int n = int(std::min<int64_t>(count, max));
    memcpy(out, elements, size_t(n) * sizeof(int64_t));
    return n;
}

const void* firstDescriptor(int attributeType, int64_t count, const void* elements) {
    if (attributeType != kTypeDescriptor || !elements || count <= 0) return nullptr;
    const void* d;
    memcpy(&d, elements, sizeof d);
    return d;
}

int dataTypeOf(int attributeType, int64_t count, const void* elements) {
    if (attributeType != kTypeDataType || !elements || count <= 0) return -1;
    int32_t v;
    memcpy(&v, elements, sizeof v); // cudnnDataType_t, an enum
    return v;
}

} // namespace

bool BackendGraph::followed(int type) {
    switch (type) {
    case kConvolution:
    case kEngine:
    case kEngineConfig:
    case kHeuristics:
    case kPlan:
    case kOpConvForward:
    case kOpConvBackwardFilter:
    case kOpConvBackwardData:
    case kOperationGraph:
    case kTensor:
        return true;
    default:
        return false;
    }
}

bool BackendGraph::followedAttribute(int name) {
    switch (name) {
    case kConvComputeType:
    case kConvDilations:
    case kConvFilterStrides:
    case kConvPrePaddings:
    case kConvSpatialDims:
    case kHeuristicsGraph:
    case kConfigEngine:
    case kPlanConfig:
    case kFwdConv:
    case kFwdW:
    case kFwdX:
    case kBwdDataConv:
    case kBwdDataW:
    case kBwdDataDx:
    case kBwdFilterConv:
    case kBwdFilterDw:
    case kBwdFilterX:
    case kGraphOps:
    case kTensorDataType:
    case kTensorDims:
    case kTensorStrides:
    case kEngineGraph:
    case kEngineIndex:
        return true;
    default:
        return false;
    }
}

BackendGraph::Record* BackendGraph::find(const void* descriptor) {
    auto it = m_records.find(descriptor);
    return it == m_records.end() ? nullptr : &it->second;
}

void BackendGraph::created(const void* descriptor, int type) {
    if (!descriptor || !followed(type)) return;
    std::lock_guard lock(m_mutex);
    // A new descriptor at an address seen before starts afresh (the old one's Destroy may have been missed).
    Record& r = m_records[descriptor];
    r = Record {};
    r.type = type;
}

void BackendGraph::destroyed(const void* descriptor) {
    std::lock_guard lock(m_mutex);
    m_records.erase(descriptor);
}

size_t BackendGraph::size() {
    std::lock_guard lock(m_mutex);
    return m_records.size();
}

void BackendGraph::setAttribute(
    const void* descriptor, int name, int attributeType, int64_t count, const void* elements) {
    if (!followedAttribute(name)) return;
    std::lock_guard lock(m_mutex);
    Record* r = find(descriptor);
    if (!r) return;
    switch (name) {
    case kTensorDataType:
        r->dataType = dataTypeOf(attributeType, count, elements);
        break;
    case kTensorDims:
        r->dims = copyInt64(attributeType, count, elements, r->sizes, 8);
        break;
    case kTensorStrides:
        copyInt64(attributeType, count, elements, r->strides, 8);
        break;
    case kConvComputeType:
        r->computeType = dataTypeOf(attributeType, count, elements);
        break;
    case kConvSpatialDims: {
        int64_t spatial = 0;
        if (copyInt64(attributeType, count, elements, &spatial, 1)) r->spatial = int(spatial);
        break;
    }
    case kConvPrePaddings:
        copyInt64(attributeType, count, elements, r->pads, 3);
        break;
    case kConvFilterStrides:
        copyInt64(attributeType, count, elements, r->convStrides, 3);
        break;
    case kConvDilations:
        copyInt64(attributeType, count, elements, r->dilations, 3);
        break;
    case kFwdX:
    case kBwdDataDx:
    case kBwdFilterX:
        r->input = firstDescriptor(attributeType, count, elements);
        break;
    case kFwdW:
    case kBwdDataW:
    case kBwdFilterDw:
        r->filter = firstDescriptor(attributeType, count, elements);
        break;
    case kFwdConv:
    case kBwdDataConv:
    case kBwdFilterConv:
        r->conv = firstDescriptor(attributeType, count, elements);
        break;
    case kGraphOps:
        r->ops.clear();
        if (attributeType == kTypeDescriptor && elements)
            for (int64_t i = 0; i < std::min<int64_t>(count, 256); ++i) {
                const void* op;
                memcpy(&op, static_cast<const char*>(elements) + i * int64_t(sizeof op), sizeof op);
                r->ops.push_back(op);
            }
        break;
    case kEngineGraph:
    case kHeuristicsGraph:
        r->graph = firstDescriptor(attributeType, count, elements);
        break;
    case kEngineIndex: {
        int64_t index = 0;
        if (copyInt64(attributeType, count, elements, &index, 1)) r->engineIndex = index;
        break;
    }
    case kConfigEngine:
        r->engine = firstDescriptor(attributeType, count, elements);
        r->heuristics = nullptr;
        break;
    case kPlanConfig:
        r->config = firstDescriptor(attributeType, count, elements);
        break;
    default:
        break;
    }
}

void BackendGraph::heuristicResults(const void* heuristics, const void* const* configs, int64_t count) {
    if (!configs) return;
    std::lock_guard lock(m_mutex);
    for (int64_t i = 0; i < count; ++i) {
        Record* r = find(configs[i]);
        if (r && r->type == kEngineConfig) {
            r->heuristics = heuristics;
            r->engine = nullptr;
        }
    }
}

bool BackendGraph::graphConvolution(const void* graph, ConvShape& out) {
    const Record* g = find(graph);
    if (!g || g->type != kOperationGraph) return false;
    for (const void* opDescriptor : g->ops) {
        const Record* op = find(opDescriptor);
        if (!op || (op->type != kOpConvForward && op->type != kOpConvBackwardData && op->type != kOpConvBackwardFilter))
            continue;
        ConvShape s;
        s.direction = int8_t(op->type == kOpConvForward ? schema::kConvForward
                : op->type == kOpConvBackwardData       ? schema::kConvBackwardData
                                                        : schema::kConvBackwardFilter);
        if (const Record* x = find(op->input); x && x->type == kTensor)
            setConvInput(s, x->dims, x->sizes, x->strides, x->dataType);
        if (const Record* w = find(op->filter); w && w->type == kTensor) setConvFilter(s, w->dims, w->sizes);
        if (const Record* c = find(op->conv); c && c->type == kConvolution) {
            setConvGeometry(s, c->spatial, c->pads, c->convStrides, c->dilations);
            s.computeType = c->computeType;
        }
        inferConvGroups(s);
        out = s;
        return true;
    }
    return false;
}

bool BackendGraph::heuristicsConvolution(const void* heuristics, ConvShape& out) {
    std::lock_guard lock(m_mutex);
    const Record* h = find(heuristics);
    return h && h->type == kHeuristics && graphConvolution(h->graph, out);
}

BackendGraph::Plan BackendGraph::plan(const void* planDescriptor) {
    std::lock_guard lock(m_mutex);
    Plan p;
    Record* plan = find(planDescriptor);
    if (!plan || plan->type != kPlan) return p;
    if (plan->planId == 0) plan->planId = m_nextPlanId++;
    p.id = plan->planId;
    const Record* config = find(plan->config);
    if (!config || config->type != kEngineConfig) return p;
    const void* graph = nullptr;
    if (const Record* engine = find(config->engine); engine && engine->type == kEngine) {
        graph = engine->graph;
        p.engine = engine->engineIndex;
        p.algoSource = schema::kAlgoGiven;
    } else if (const Record* heuristics = find(config->heuristics); heuristics && heuristics->type == kHeuristics) {
        graph = heuristics->graph;
        p.algoSource = schema::kAlgoHeuristic;
        p.config = plan->config;
    }
    p.convolution = graph && graphConvolution(graph, p.shape);
    return p;
}

} // namespace tuneup::agent
