// The interposers' pure parts, without the libraries: the lock-free descriptor cache (also under
// concurrent readers and writers, label "threads"), cuBLASLt descriptor facts and the GEMM row made from
// them, convolution shapes and layouts, the cuDNN backend graph bookkeeping, and the writer turning
// GemmCall / ConvCall records into rows (unknown values as NULL).

#include "blaslt_facts.h"
#include "conv_shape.h"
#include "cudnn_backend_graph.h"
#include "descriptor_cache.h"
#include "host_event_sink.h"
#include "library_functions.h"
#include "sqlite_query.h"
#include "temp_dir.h"
#include "trace_db.h"
#include "trace_schema.h"

#include <atomic>
#include <cstring>
#if TUNEUP_TEST_HAVE_CUDNN
#include <cudnn.h>
#endif
#include <filesystem>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

using namespace tuneup::agent;
namespace schema = tuneup::schema;

namespace {

const void* at(uintptr_t address) {
    return reinterpret_cast<const void*>(address);
}

} // namespace

// ---- PointerCache ----------------------------------------------------------------------------------------

TEST(PointerCache, PutGetUpdateErase) {
    static PointerCache<3, 64> cache;
    PointerCache<3, 64>::Value v;
    EXPECT_FALSE(cache.get(at(0x1000), v));
    cache.put(at(0x1000), { 1, 2, 3 });
    ASSERT_TRUE(cache.get(at(0x1000), v));
    EXPECT_EQ(v, (PointerCache<3, 64>::Value { 1, 2, 3 }));
    EXPECT_TRUE(cache.update(at(0x1000), [](auto& words) { words[1] = 20; }));
    ASSERT_TRUE(cache.get(at(0x1000), v));
    EXPECT_EQ(v[1], 20u);
    EXPECT_FALSE(cache.update(at(0x2000), [](auto& words) { words[0] = 9; })) << "absent keys are not created";
    cache.put(at(0x1000), { 4, 5, 6 }); // replaces
    ASSERT_TRUE(cache.get(at(0x1000), v));
    EXPECT_EQ(v[0], 4u);
    cache.erase(at(0x1000));
    EXPECT_FALSE(cache.get(at(0x1000), v));
    EXPECT_FALSE(cache.get(nullptr, v));
    cache.put(nullptr, { 1, 1, 1 }); // ignored
    EXPECT_FALSE(cache.get(nullptr, v));
}

TEST(PointerCache, LiveKeysRarelyEvictEachOtherAndEvictionIsAMissNeverAWrongValue) {
    static PointerCache<1, 1024> cache;
    const int kKeys = 400; // many live descriptors at malloc-like addresses
    for (int i = 0; i < kKeys; ++i)
        cache.put(at(0x7f0000001000 + uintptr_t(i) * 208), { uint64_t(i) });
    int hits = 0;
    for (int i = 0; i < kKeys; ++i) {
        PointerCache<1, 1024>::Value v;
        if (cache.get(at(0x7f0000001000 + uintptr_t(i) * 208), v)) {
            EXPECT_EQ(v[0], uint64_t(i));
            ++hits;
        }
    }
    EXPECT_GE(hits, kKeys * 95 / 100) << "two slots per key keep nearly every live key";
}

TEST(PointerCache, ConcurrentReadersSeeWholeValues) {
    // Writers keep every word of a value equal; a reader must never see a mix of two writes.
    static PointerCache<6, 16> cache;
    std::atomic<bool> stop { false };
    std::atomic<uint64_t> torn { 0 }, reads { 0 };
    std::vector<std::thread> threads;
    threads.reserve(4);
    for (int w = 0; w < 2; ++w)
        threads.emplace_back([&, w] {
            for (uint64_t n = 1; !stop.load(std::memory_order_relaxed); ++n) {
                const uint64_t x = n * 2 + uint64_t(w);
                cache.put(at(0x1000 + uintptr_t(n % 4) * 16), { x, x, x, x, x, x });
                cache.update(at(0x1000 + uintptr_t((n + 1) % 4) * 16), [](auto& words) {
                    const uint64_t next = words[0] + 1;
                    for (auto& word : words)
                        word = next;
                });
            }
        });
    for (int r = 0; r < 2; ++r)
        threads.emplace_back([&] {
            PointerCache<6, 16>::Value v;
            while (!stop.load(std::memory_order_relaxed))
                for (uintptr_t k = 0; k < 4; ++k)
                    if (cache.get(at(0x1000 + k * 16), v)) {
                        reads.fetch_add(1, std::memory_order_relaxed);
                        for (uint64_t word : v)
                            if (word != v[0]) torn.fetch_add(1);
                    }
        });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    stop = true;
    for (auto& t : threads)
        t.join();
    EXPECT_EQ(torn.load(), 0u);
    EXPECT_GT(reads.load(), 0u);
}

// ---- cuBLASLt facts ---------------------------------------------------------------------------------------

TEST(BlasLtFacts, PackAndAttributes) {
    LtLayout l { 2, 0, 1001, 30, 1001, 1, 0 };
    EXPECT_EQ(pack(unpackLayout(pack(l))), pack(l));
    const int32_t batch = 12;
    const int64_t stride = 30030;
    const uint32_t type = 14;
    EXPECT_TRUE(applyLayoutAttribute(l, 5, &batch, sizeof batch));
    EXPECT_TRUE(applyLayoutAttribute(l, 6, &stride, sizeof stride));
    EXPECT_TRUE(applyLayoutAttribute(l, 0, &type, sizeof type));
    EXPECT_FALSE(applyLayoutAttribute(l, 7, &stride, sizeof stride)) << "plane offset is not kept";
    EXPECT_FALSE(applyLayoutAttribute(l, 4, &stride, 3)) << "no attribute is 3 bytes";
    EXPECT_FALSE(applyLayoutAttribute(l, 4, nullptr, 8));
    const LtLayout back = unpackLayout(pack(l));
    EXPECT_EQ(back.batch, 12);
    EXPECT_EQ(back.stride, 30030);
    EXPECT_EQ(back.type, 14);
    EXPECT_EQ(back.rows, 1001);

    LtMatmulDesc d { 68, 0, 1, 0, 0 };
    const int32_t t = 1;
    const uint32_t epilogue = 36; // GELU_BIAS
    EXPECT_TRUE(applyDescAttribute(d, 3, &t, sizeof t));
    EXPECT_TRUE(applyDescAttribute(d, 7, &epilogue, sizeof epilogue));
    EXPECT_FALSE(applyDescAttribute(d, 8, &t, sizeof t)) << "bias pointer is not kept";
    const LtMatmulDesc back2 = unpackDesc(pack(d));
    EXPECT_EQ(back2.transa, 1);
    EXPECT_EQ(back2.transb, 0);
    EXPECT_EQ(back2.epilogue, 36);
    EXPECT_EQ(back2.computeType, 68);
}

TEST(BlasLtFacts, MatmulShape) {
    // A = W^T (k x m, transposed), B k x n, D m x n.
    const LtMatmulDesc desc { 77, 0, 4, 1, 0 };
    const LtLayout a { 2, 0, 1001, 30, 1001, 1, 0 }, b { 2, 0, 1001, 64, 1001, 1, 0 }, d { 0, 0, 30, 64, 32, 1, 0 };
    GemmCallFixed out {};
    describeLtMatmul(&desc, &a, &b, &d, out);
    EXPECT_EQ(out.m, 30);
    EXPECT_EQ(out.n, 64);
    EXPECT_EQ(out.k, 1001);
    EXPECT_EQ(out.batch, 1);
    EXPECT_EQ(out.lda, 1001);
    EXPECT_EQ(out.ldb, 1001);
    EXPECT_EQ(out.ldc, 32);
    EXPECT_EQ(out.aType, 2);
    EXPECT_EQ(out.cType, 0);
    EXPECT_EQ(out.computeType, 77);
    EXPECT_EQ(out.epilogue, 4);
    EXPECT_EQ(out.strideA, kUnknown) << "not batched";
    // Not transposed: K = cols(A); batched: strides kept.
    const LtMatmulDesc plain { 68, 0, 1, 0, 0 };
    const LtLayout a2 { 2, 0, 30, 1001, 30, 8, 30030 }, d2 { 2, 0, 30, 64, 30, 8, 1920 };
    describeLtMatmul(&plain, &a2, &b, &d2, out);
    EXPECT_EQ(out.k, 1001);
    EXPECT_EQ(out.batch, 8);
    EXPECT_EQ(out.strideA, 30030);
    EXPECT_EQ(out.strideC, 1920);
    // Nothing known.
    describeLtMatmul(nullptr, nullptr, nullptr, nullptr, out);
    EXPECT_EQ(out.m, kUnknown);
    EXPECT_EQ(out.k, kUnknown);
    EXPECT_EQ(out.transa, -1);
    EXPECT_EQ(out.batch, 1);
}

// ---- convolution shapes --------------------------------------------------------------------------------------

TEST(ConvShape, LayoutsGroupsAndThreeDimensions) {
    const int64_t nchw[] = { 8, 64, 56, 56 }, nchwStrides[] = { 64 * 56 * 56, 56 * 56, 56, 1 };
    const int64_t nhwcStrides[] = { 64 * 56 * 56, 1, 56 * 64, 64 };
    EXPECT_EQ(tensorLayout(4, nchw, nchwStrides), schema::kLayoutNchw);
    EXPECT_EQ(tensorLayout(4, nchw, nhwcStrides), schema::kLayoutNhwc);
    const int64_t odd[] = { 1, 56 * 56, 1, 56 };
    EXPECT_EQ(tensorLayout(4, nchw, odd), schema::kLayoutOther);

    ConvShape s;
    setConvInput(s, 4, nchw, nhwcStrides, 2);
    const int64_t filter[] = { 128, 32, 3, 3 };
    setConvFilter(s, 4, filter);
    const int64_t pads[] = { 1, 1 }, strides[] = { 2, 2 }, dilations[] = { 1, 1 };
    setConvGeometry(s, 2, pads, strides, dilations);
    inferConvGroups(s);
    EXPECT_EQ(s.n, 8);
    EXPECT_EQ(s.c, 64);
    EXPECT_EQ(s.d, -1);
    EXPECT_EQ(s.h, 56);
    EXPECT_EQ(s.k, 128);
    EXPECT_EQ(s.filterC, 32);
    EXPECT_EQ(s.groups, 2);
    EXPECT_EQ(s.pad[0], -1);
    EXPECT_EQ(s.pad[1], 1);
    EXPECT_EQ(s.stride[2], 2);
    EXPECT_EQ(s.layout, schema::kLayoutNhwc);
    EXPECT_EQ(s.dataType, 2);

    ConvShape v; // 3-D: N, C, D, H, W
    const int64_t video[] = { 2, 3, 16, 112, 112 },
                  videoStrides[] = { 3 * 16 * 112 * 112, 16 * 112 * 112, 112 * 112, 112, 1 };
    const int64_t kernel[] = { 64, 3, 3, 7, 7 };
    const int64_t pads3[] = { 1, 3, 3 }, strides3[] = { 1, 2, 2 }, dilations3[] = { 1, 1, 1 };
    setConvInput(v, 5, video, videoStrides, 0);
    setConvFilter(v, 5, kernel);
    setConvGeometry(v, 3, pads3, strides3, dilations3);
    EXPECT_EQ(v.d, 16);
    EXPECT_EQ(v.t, 3);
    EXPECT_EQ(v.r, 7);
    EXPECT_EQ(v.pad[0], 1);
    EXPECT_EQ(v.pad[2], 3);
    EXPECT_EQ(v.layout, schema::kLayoutNchw);
}

// ---- cuDNN backend graph --------------------------------------------------------------------------------------
// The descriptor types, attribute names and types and data types are cuDNN's own, from its headers: the
// agent must follow what the library numbers, not a copy of it. Without cuDNN's headers these tests are
// left out (the interposers that use the graph are too).
#if TUNEUP_TEST_HAVE_CUDNN

namespace {

enum : int {
    kConv = CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR,
    kEngine = CUDNN_BACKEND_ENGINE_DESCRIPTOR,
    kConfig = CUDNN_BACKEND_ENGINECFG_DESCRIPTOR,
    kHeur = CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR,
    kPlan = CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR,
    kOpFwd = CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
    kOpBwdData = CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
    kGraph = CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR,
    kTensor = CUDNN_BACKEND_TENSOR_DESCRIPTOR,
    kVariantPack = CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR
};
enum : int {
    kTypeDataType = CUDNN_TYPE_DATA_TYPE,
    kTypeInt64 = CUDNN_TYPE_INT64,
    kTypeDescriptor = CUDNN_TYPE_BACKEND_DESCRIPTOR
};

struct GraphBuilder {
    BackendGraph graph;
    uintptr_t next = 0x10000;
    const void* make(int type) {
        const void* d = at(next += 0x100);
        graph.created(d, type);
        return d;
    }
    void setInts(const void* d, int name, std::vector<int64_t> v) {
        graph.setAttribute(d, name, kTypeInt64, int64_t(v.size()), v.data());
    }
    void setType(const void* d, int name, int32_t type) { graph.setAttribute(d, name, kTypeDataType, 1, &type); }
    void setDescriptor(const void* d, int name, const void* value) {
        graph.setAttribute(d, name, kTypeDescriptor, 1, &value);
    }
    const void* tensor(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
        const void* t = make(kTensor);
        setType(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_DATA_HALF);
        setInts(t, CUDNN_ATTR_TENSOR_DIMENSIONS, dims);
        setInts(t, CUDNN_ATTR_TENSOR_STRIDES, strides);
        return t;
    }
    // A graph with one convolution of type `opType` (forward: x, w; backward data: dx, w).
    const void* convGraph(int opType) {
        const void* x = tensor({ 16, 64, 56, 56 }, { 64 * 56 * 56, 1, 56 * 64, 64 });
        const void* w = tensor({ 128, 64, 3, 3 }, { 576, 9, 3, 1 });
        const void* conv = make(kConv);
        setInts(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, { 2 });
        setType(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_DATA_FLOAT);
        setInts(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, { 1, 1 });
        setInts(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, { 2, 2 });
        setInts(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, { 1, 1 });
        const void* op = make(opType);
        const bool forward = opType == kOpFwd;
        setDescriptor(
            op, forward ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, x);
        setDescriptor(
            op, forward ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W, w);
        setDescriptor(op,
            forward ? CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC
                    : CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
            conv);
        const void* g = make(kGraph);
        setDescriptor(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, op);
        return g;
    }
};

} // namespace

TEST(BackendGraph, PlanFromAnEngineChosenByIndex) {
    GraphBuilder b;
    const void* graph = b.convGraph(kOpFwd);
    const void* engine = b.make(kEngine);
    b.setDescriptor(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, graph);
    b.setInts(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, { 42 });
    const void* config = b.make(kConfig);
    b.setDescriptor(config, CUDNN_ATTR_ENGINECFG_ENGINE, engine);
    const void* plan = b.make(kPlan);
    b.setDescriptor(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
    const BackendGraph::Plan p = b.graph.plan(plan);
    ASSERT_TRUE(p.convolution);
    EXPECT_EQ(p.engine, 42);
    EXPECT_EQ(p.algoSource, schema::kAlgoGiven);
    EXPECT_EQ(p.id, 1u);
    EXPECT_EQ(p.config, nullptr);
    EXPECT_EQ(p.shape.direction, schema::kConvForward);
    EXPECT_EQ(p.shape.n, 16);
    EXPECT_EQ(p.shape.c, 64);
    EXPECT_EQ(p.shape.k, 128);
    EXPECT_EQ(p.shape.r, 3);
    EXPECT_EQ(p.shape.pad[1], 1);
    EXPECT_EQ(p.shape.stride[2], 2);
    EXPECT_EQ(p.shape.groups, 1);
    EXPECT_EQ(p.shape.layout, schema::kLayoutNhwc);
    EXPECT_EQ(p.shape.dataType, int(CUDNN_DATA_HALF));
    EXPECT_EQ(p.shape.computeType, int(CUDNN_DATA_FLOAT));
    EXPECT_EQ(b.graph.plan(plan).id, 1u) << "a plan keeps its number";
}

TEST(BackendGraph, PlanFromHeuristicsResultsAndHeuristicsQuery) {
    GraphBuilder b;
    const void* graph = b.convGraph(kOpBwdData);
    const void* heur = b.make(kHeur);
    b.setDescriptor(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    ConvShape shape;
    ASSERT_TRUE(b.graph.heuristicsConvolution(heur, shape));
    EXPECT_EQ(shape.direction, schema::kConvBackwardData);
    // The program makes empty configs; cuDNN fills them through GetAttribute(ENGINEHEUR_RESULTS).
    const void* configs[] = { b.make(kConfig), b.make(kConfig) };
    b.graph.heuristicResults(heur, configs, 2);
    const void* plan = b.make(kPlan);
    b.setDescriptor(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[1]);
    const BackendGraph::Plan p = b.graph.plan(plan);
    ASSERT_TRUE(p.convolution);
    EXPECT_EQ(p.algoSource, schema::kAlgoHeuristic);
    EXPECT_EQ(p.engine, kUnknown) << "the engine index is the library's to tell";
    EXPECT_EQ(p.config, configs[1]);
    EXPECT_EQ(p.shape.direction, schema::kConvBackwardData);
}

TEST(BackendGraph, UnknownOrDestroyedDescriptorsAreNoConvolution) {
    GraphBuilder b;
    const void* plan = b.make(kPlan);
    EXPECT_FALSE(b.graph.plan(plan).convolution);
    EXPECT_FALSE(b.graph.plan(at(0xdead0)).convolution);
    const void* graph = b.convGraph(kOpFwd);
    const void* engine = b.make(kEngine);
    b.setDescriptor(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, graph);
    const void* config = b.make(kConfig);
    b.setDescriptor(config, CUDNN_ATTR_ENGINECFG_ENGINE, engine);
    b.setDescriptor(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config);
    EXPECT_TRUE(b.graph.plan(plan).convolution);
    b.graph.destroyed(graph);
    EXPECT_FALSE(b.graph.plan(plan).convolution);
    const size_t before = b.graph.size();
    b.graph.created(at(0x1), kVariantPack); // not followed
    b.graph.setAttribute(at(0x1), CUDNN_ATTR_OPERATIONGRAPH_OPS, kTypeDescriptor, 0, nullptr);
    EXPECT_EQ(b.graph.size(), before);
    EXPECT_FALSE(BackendGraph::followed(kVariantPack));
    EXPECT_FALSE(BackendGraph::followedAttribute(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS));
}

#endif // TUNEUP_TEST_HAVE_CUDNN

// ---- the writer's rows ---------------------------------------------------------------------------------------

TEST(LibraryCallRows, GemmAndConvRecordsBecomeRowsWithUnknownsAsNull) {
    const tuneup::test::TempDir dir("tuneup-calls-test");
    const std::string path = dir.path() + "/trace.db";
    {
        std::string error;
        auto db = TraceDb::create(path, error);
        ASSERT_TRUE(db) << error;
        db->begin();
        HostEventSink sink(*db, 4242);
        auto feed = [&](HostEventKind kind, uint64_t t, const void* fixed, size_t bytes) {
            const EventSource source = kind == HostEventKind::GemmCall ? EventSource::Gemm : EventSource::Conv;
            RecordHeader header { uint32_t((sizeof(RecordHeader) + bytes + 15) & ~size_t(15)), kind, source, 0, t };
            std::vector<std::byte> body(header.size - sizeof header);
            memcpy(body.data(), fixed, bytes);
            sink.consume(4243, header, body.data());
        };
        GemmCallFixed g {};
        g.endNs = 1500;
        g.m = 30, g.n = 1001, g.k = 30, g.batch = 1, g.lda = 30, g.ldb = 1001, g.ldc = 30;
        g.strideA = g.strideB = g.strideC = kUnknown;
        g.status = 1;
        g.aType = g.bType = g.cType = 2;
        g.computeType = 68;
        g.epilogue = -1;
        g.function = uint16_t(LibraryFunction::CublasGemmEx);
        g.transa = 0;
        g.transb = 1;
        g.api = schema::kGemmCublas;
        feed(HostEventKind::GemmCall, 1000, &g, sizeof g);
        ConvCallFixed c {};
        c.endNs = 2500;
        c.algo = kUnknown;
        c.shape.n = 8;
        c.shape.direction = schema::kConvForward;
        c.status = 2000;
        c.function = uint16_t(LibraryFunction::CudnnBackendExecute);
        c.api = schema::kConvBackend;
        c.callKind = schema::kConvRun;
        c.algoSource = schema::kAlgoHeuristic;
        c.planId = 3;
        feed(HostEventKind::ConvCall, 2000, &c, sizeof c);
        db->commit();
    }
    tuneup::test::SqliteQuery q(path);
    EXPECT_EQ(
        q.rows("SELECT s.value, start_ns, end_ns, tid, api, transa, transb, m, n, k, batch, a_type, compute_type, "
               "lda, ldb, ldc, stride_a, epilogue, external_id, status FROM gemm_calls g "
               "JOIN strings s ON s.id = g.name_id"),
        (std::vector<tuneup::test::Row> { { "cublasGemmEx", "1000", "1500", "4243", "1", "0", "1", "30", "1001", "30",
            "1", "2", "68", "30", "1001", "30", std::nullopt, std::nullopt, std::nullopt, "1" } }));
    EXPECT_EQ(q.rows("SELECT s.value, start_ns, end_ns, call_kind, direction, n, c, d, k, groups, layout, algo, "
                     "algo_source, plan_id, external_id, status FROM conv_calls c JOIN strings s ON s.id = c.name_id"),
        (std::vector<tuneup::test::Row> { { "cudnnBackendExecute", "2000", "2500", "1", "1", "8", std::nullopt,
            std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, "2", "3", std::nullopt, "2000" } }));
    EXPECT_EQ(q.scalar("SELECT count(*) FROM threads WHERE tid = 4243"), 1);
}

TEST(LibraryFunctions, NamesAreTheLibrariesOwn) {
    EXPECT_EQ(libraryFunctionName(uint16_t(LibraryFunction::CublasSgemm)), "cublasSgemm_v2");
    EXPECT_EQ(libraryFunctionName(uint16_t(LibraryFunction::CudnnGetBackwardFilterV7)),
        "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
    EXPECT_EQ(libraryFunctionName(uint16_t(LibraryFunction::Count)), "?");
}
