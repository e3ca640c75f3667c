#pragma once
// Follows the cuDNN backend (graph API) descriptors a program builds -- tensors, convolution descriptors,
// convolution operations, operation graphs, engines, engine configs, engine heuristics, execution plans --
// through their SetAttribute calls, so that when a plan executes the agent knows its convolution (shape,
// data types), its engine and how that engine was chosen: set by the program (given) or taken from
// heuristics results. Plans are built once per shape and cached by their users (PyTorch, cudnn-frontend),
// so these calls are rare: one mutex guards everything. Pure bookkeeping: no cuDNN call here.

#include "host_events.h"

#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tuneup::agent {

class BackendGraph {
public:
    // Descriptor types (cudnnBackendDescriptorType_t) followed here; others are ignored.
    static bool followed(int descriptorType);
    // Attribute names (cudnnBackendAttributeName_t) that matter here: a cheap filter before the lock.
    static bool followedAttribute(int attributeName);

    void created(const void* descriptor, int descriptorType);
    void destroyed(const void* descriptor);
    // A successful cudnnBackendSetAttribute(descriptor, name, attributeType, count, elements).
    void setAttribute(const void* descriptor, int name, int attributeType, int64_t count, const void* elements);
    // cudnnBackendGetAttribute(heuristics, ENGINEHEUR_RESULTS) filled `configs`: engine configs ranked by
    // heuristics for the heuristics descriptor's operation graph.
    void heuristicResults(const void* heuristics, const void* const* configs, int64_t count);

    // The convolution an engine-heuristics descriptor's operation graph holds.
    bool heuristicsConvolution(const void* heuristics, ConvShape& out);

    struct Plan {
        bool convolution = false; // its graph holds a convolution (else nothing is recorded for it)
        ConvShape shape;
        int64_t engine = kUnknown; // the engine's global index
        int algoSource = 0; // schema::AlgoSource
        uint64_t id = 0; // numbered in the order plans are first asked for, from 1
        const void* config = nullptr; // its engine config, when the engine is to be asked of the library
    };
    // What an execution plan runs. A plan whose engine config came from heuristics results has no engine
    // index here (the program never set it): the caller may ask the library for it through `config`.
    Plan plan(const void* plan);

    size_t size(); // descriptors followed (tests, and a bound on memory)

private:
    struct Record {
        int type = -1;
        // tensor
        int dims = 0;
        int64_t sizes[8] = {}, strides[8] = {};
        int dataType = -1;
        // convolution descriptor
        int spatial = 0;
        int64_t pads[3] = {}, convStrides[3] = {}, dilations[3] = {};
        int computeType = -1;
        // convolution operation: input (x or dx), filter (w or dw), convolution descriptor
        const void* input = nullptr;
        const void* filter = nullptr;
        const void* conv = nullptr;
        // operation graph
        std::vector<const void*> ops;
        // engine, heuristics: the graph; engine: its index
        const void* graph = nullptr;
        int64_t engineIndex = kUnknown;
        // engine config: the engine set by the program, or the heuristics it came from
        const void* engine = nullptr;
        const void* heuristics = nullptr;
        // execution plan
        const void* config = nullptr;
        uint64_t planId = 0;
    };

    Record* find(const void* descriptor);
    bool graphConvolution(const void* graph, ConvShape& out);

    std::mutex m_mutex;
    std::unordered_map<const void*, Record> m_records;
    uint64_t m_nextPlanId = 1;
};

} // namespace tuneup::agent
