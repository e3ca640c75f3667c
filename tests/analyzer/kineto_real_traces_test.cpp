// The Kineto JSON importer on the real traces in ../shared/traces.
//
// Expected figures for the real traces in ../shared/traces were derived independently of this
// importer, with Python's json module (numbers read as decimal.Decimal, never as float), e.g.
//   zcat FILE | python3 -c 'import json,sys,decimal; d=json.load(sys.stdin, parse_float=decimal.Decimal); ...'
// counting complete ("ph": "X") events per category. The exact scripts are quoted next to each figure.

#include "import/format_detect.h"
#include "kineto_test_support.h"

#include <chrono>
#include <gtest/gtest.h>
#include <iostream>

using namespace tuneup::analysis;
using namespace tuneup::test::kineto;

// ---- the real traces ---------------------------------------------------------------------------------

namespace {
struct Expected {
    const char* path;
    size_t kernels, memcpys, memsets, syncs, apiCalls, cpuOps, annotations, gpuAnnotations, counterRanges, steps;
};
// From /tmp/survey/expected.py (python json, independent of this importer): per file, the "X" events
// by category: kernel|Kernel, gpu_memcpy|Memcpy, gpu_memset|Memset, cuda_sync, cuda_runtime|Runtime|
// cuda_driver, cpu_op|Operator (minus the 2020 record_function ranges), user_annotation (plus those
// ranges: names starting ProfilerStep#, enumerate(DataLoader)#, Optimizer., DistributedDataParallel.,
// or "## ... ##"), gpu_user_annotation, cuda_profiler_range, and ProfilerStep# ranges.
constexpr Expected kExpected[] = {
    { "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz", 14, 2, 0, 0, 21, 70, 3, 2, 0, 2 },
    { "hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz", 79, 16, 3, 41, 361, 359,
        8, 0, 0, 0 },
    { "hta/tests/data/critical_path/cuda_event_sync/event_sync_trace.json.gz", 4, 1, 0, 4, 12, 10, 1, 0, 0, 1 },
    { "hta/tests/data/critical_path/cuda_event_sync_multi_stream/event_sync_trace.json.gz", 3, 0, 3, 5, 39, 6, 0, 0, 0,
        0 },
    { "hta/tests/data/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz", 79, 16, 3, 41, 331,
        359, 8, 0, 0, 0 },
    { "hta/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz", 0, 0, 0, 0, 1862, 375, 8, 0, 77,
        0 },
    { "hta/tests/data/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz", 1, 0, 0, 0, 0, 1, 0, 0, 0,
        0 },
    { "hta/tests/data/nccl_parser_config/nccl_data.json.gz", 2700, 960, 114, 0, 8740, 14346, 42, 30, 0, 3 },
    { "hta/tests/data/negative_queue_length_values_check/rank0.json.gz", 6080, 1390, 277, 0, 33924, 25185, 360, 0, 0,
        5 },
    { "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", 4350, 1600, 145, 0, 15329,
        23910, 70, 15, 0, 5 },
    { "hta/tests/data/rank_non_gpu/rank_non_gpu.json.gz", 0, 0, 0, 0, 0, 2424, 43, 0, 0, 1 },
    { "hta/tests/data/trace_diff/control/control.json.gz", 8568, 228, 654, 0, 24692, 40506, 288, 0, 0, 6 },
    { "hta/tests/data/trace_diff/test/test.json.gz", 9876, 4856, 900, 0, 21167, 31236, 288, 0, 0, 6 },
    { "hta/tests/data/trace_filter/sampled_rank-0.json.gz", 1154, 40, 10, 0, 1204, 2329, 73, 0, 0, 2 },
    { "hta/tests/data/trace_filter/sampled_rank-1.json.gz", 1104, 40, 10, 0, 1154, 2302, 65, 0, 0, 2 },
    { "hta/tests/data/triton_example/triton_example.json.gz", 1, 0, 0, 0, 2, 3, 1, 0, 0, 1 },
    { "hta/tests/data/with_gpu_user_annotation/step_based_trace_2543932.json.gz", 130, 10, 0, 0, 180, 643, 10, 10, 0,
        0 },
    { "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/bert_newAPI_fp16_ddp_4dataloader/"
      "worker0_round1.pt.trace.json.gz",
        6277, 434, 416, 0, 8755, 34436, 5, 0, 0, 2 },
    { "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/bert_newAPI_fp16_ddp_4dataloader/"
      "worker1_round1.pt.trace.json.gz",
        6277, 434, 416, 0, 8755, 34526, 5, 0, 0, 2 },
    { "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz", 6205,
        1291, 183, 0, 7971, 53586, 16, 0, 0, 4 },
    { "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker1_span1.pt.trace.json.gz", 7801,
        1424, 220, 0, 10024, 53700, 16, 0, 0, 4 },
    { "param/et_replay/tests/inputs/resnet_kineto.json.gz", 9628, 123, 362, 0, 25928, 39416, 90, 0, 0, 0 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker0_step_12.1694128201545.pt.trace.json", 245, 16, 0, 0, 525, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker1_step_12.1694128201556.pt.trace.json", 310, 16, 0, 0, 527, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker2_step_12.1694128201554.pt.trace.json", 246, 16, 0, 0, 513, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker3_step_12.1694128201557.pt.trace.json", 315, 16, 6, 0, 541, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker4_step_12.1694128201547.pt.trace.json", 251, 16, 6, 0, 523, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker5_step_12.1694128201549.pt.trace.json", 245, 16, 0, 0, 505, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker6_step_12.1694128201553.pt.trace.json", 246, 16, 0, 0, 515, 1633,
        40, 0, 0, 1 },
    { "param/et_replay/tests/inputs/dlrm_kineto/worker7_step_12.1694128201553.pt.trace.json", 246, 16, 0, 0, 504, 1633,
        40, 0, 0, 1 },
    { "tracelens/tests/traces/b200/eager_trace.json.gz", 768, 161, 0, 0, 1372, 4809, 3, 3, 0, 0 },
    { "tracelens/tests/traces/h100/Falconsai_nsfw_image_detection__1016002.json.gz", 154, 0, 2, 0, 383, 1258, 1, 1, 0,
        1 },
    { "tracelens/tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", 1465, 1, 241, 0, 1922, 4186, 1, 1, 0, 1 },
    { "tracelens/tests/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz", 446, 2, 86, 0, 929, 3540,
        1, 1, 0, 1 },
    { "tracelens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz", 60, 1, 0, 0, 132, 479, 1, 1, 0, 1 },
};
} // namespace

TEST(KinetoJsonRealTraces, CountsMatchAnIndependentReading) {
    REQUIRE_TRACES();
    for (const Expected& x : kExpected) {
        SCOPED_TRACE(x.path);
        const TraceModel m = load(x.path);
        EXPECT_EQ(m.kernels.size(), x.kernels);
        EXPECT_EQ(m.memcpys.size(), x.memcpys);
        EXPECT_EQ(m.memsets.size(), x.memsets);
        EXPECT_EQ(m.syncs.size(), x.syncs);
        EXPECT_EQ(m.apiCalls.size(), x.apiCalls);
        EXPECT_EQ(m.cpuOps.size(), x.cpuOps);
        EXPECT_EQ(m.annotations.size(), x.annotations);
        EXPECT_EQ(m.gpuAnnotations.size(), x.gpuAnnotations);
        EXPECT_EQ(m.counterRanges.size(), x.counterRanges);
        EXPECT_EQ(countPrefix(m, m.annotations.name, "ProfilerStep#"), x.steps);
        // Every table is sorted by start time.
        EXPECT_TRUE(std::is_sorted(m.kernels.startNs.begin(), m.kernels.startNs.end()));
        EXPECT_TRUE(std::is_sorted(m.cpuOps.startNs.begin(), m.cpuOps.startNs.end()));
        EXPECT_TRUE(std::is_sorted(m.annotations.startNs.begin(), m.annotations.startNs.end()));
        EXPECT_TRUE(m.stats.unknownCategories.empty()) << m.stats.unknownCategories.begin()->first;
    }
}

TEST(KinetoJsonRealTraces, EveryKinetoFileImports) {
    REQUIRE_TRACES();
    // Recognised by content: every file of the folder is looked at, whatever its name.
    std::map<std::string, bool> listed;
    for (const Expected& x : kExpected)
        listed[x.path] = false;
    size_t kineto = 0;
    for (const auto& entry : fs::recursive_directory_iterator(kTraces)) {
        if (!entry.is_regular_file()) continue;
        const std::string relative = fs::relative(entry.path(), kTraces).string();
        if (detectFileFormat(entry.path().string()) != TraceFileFormat::KinetoJson) continue;
        ++kineto;
        SCOPED_TRACE(relative);
        EXPECT_NO_THROW({
            const TraceModel m = importKinetoJson(entry.path().string());
            EXPECT_GT(m.eventCount(), 0u);
        });
        auto it = listed.find(relative);
        EXPECT_NE(it, listed.end()) << "a Kineto file without expected counts: add it to kExpected";
        if (it != listed.end()) it->second = true;
    }
    EXPECT_EQ(kineto, std::size(kExpected));
    for (const auto& [path, seen] : listed)
        EXPECT_TRUE(seen) << path << " was not recognised as Kineto JSON";
}

TEST(KinetoJsonRealTraces, NanosecondResolutionIsExact) {
    REQUIRE_TRACES();
    const TraceModel m = load("hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    EXPECT_EQ(m.info.displayTimeUnit, "ns");
    EXPECT_FALSE(m.info.baseTimeNs);
    // python: first X event: "autograd::engine::evaluate_function: DivBackward1", External id 2049,
    // ts 1712195495519689.047, dur 63.813 -> int(ts * 1000) with Decimal
    const auto op = m.cpuOpByExternalId(2049);
    ASSERT_TRUE(op);
    const CpuOp row = m.cpuOps.row(static_cast<size_t>(*op));
    EXPECT_EQ(m.str(row.name), "autograd::engine::evaluate_function: DivBackward1");
    EXPECT_EQ(row.startNs, 1712195495519689047);
    EXPECT_EQ(row.endNs - row.startNs, 63813);
    // The first kernel in the file: correlation 135071, ts 1712195495505582.988, dur 4.928.
    const auto k = m.kernelByCorrelation(135071);
    ASSERT_TRUE(k);
    EXPECT_EQ(m.kernels.startNs[static_cast<size_t>(*k)], 1712195495505582988);
    EXPECT_EQ(m.kernels.endNs[static_cast<size_t>(*k)] - m.kernels.startNs[static_cast<size_t>(*k)], 4928);
    // Unknown top-level keys (Meta job facts) are kept as metadata, not errors.
    EXPECT_EQ(m.info.metadataValue("host_name"), "twshared39868.02.pnb3.facebook.com");
}

TEST(KinetoJsonRealTraces, BaseTimeIsAddedExactly) {
    REQUIRE_TRACES();
    const TraceModel m = load("hta/tests/data/nccl_parser_config/nccl_data.json.gz");
    EXPECT_EQ(m.info.baseTimeNs, 1711964646000000000);
    // python: the earliest kernel, correlation 19812, ts 4458676422880.181 -> base + 4458676422880181
    EXPECT_EQ(m.kernels.startNs[0], 1716423322422880181);
    EXPECT_EQ(m.kernels.correlation[0], 19812u);
    // distributedInfo and deviceProperties
    EXPECT_EQ(m.info.rank, 0);
    EXPECT_EQ(m.info.worldSize, 2);
    EXPECT_EQ(m.info.backend, "nccl");
    ASSERT_EQ(m.devices.size(), 8u);
    EXPECT_EQ(m.devices[0].name, "NVIDIA A100-PG509-200");
    EXPECT_EQ(m.devices[0].computeMajor, 8);
    EXPECT_EQ(m.devices[0].computeMinor, 0);
    EXPECT_EQ(m.devices[0].smCount, 108);
    EXPECT_EQ(m.devices[0].globalMemoryBytes, 42297524224);
    EXPECT_EQ(m.info.vendor, GpuVendor::Nvidia);
}

TEST(KinetoJsonRealTraces, CollectivesFromOpsAndNcclKernels) {
    REQUIRE_TRACES();
    const TraceModel m = load("hta/tests/data/nccl_parser_config/nccl_data.json.gz");
    // python: 27 record_param_comms cpu_ops (all with "Collective name"); 21 NCCL kernels (15
    // ncclKernel_AllReduce_RING_LL_Sum_float, 6 ncclKernel_Broadcast_RING_LL_Sum_int8_t), all with args.
    size_t ops = 0, kernels = 0, allreduceKernels = 0;
    for (size_t i = 0; i < m.collectives.size(); ++i) {
        if (m.collectives.origin[i] == CollectiveOrigin::CpuOp)
            ++ops;
        else {
            ++kernels;
            allreduceKernels += m.str(m.collectives.name[i]) == "allreduce";
            EXPECT_TRUE(
                m.str(m.kernels.name[static_cast<size_t>(m.collectives.eventRow[i])]).starts_with("ncclKernel_"));
        }
    }
    EXPECT_EQ(ops, 27u);
    EXPECT_EQ(kernels, 21u);
    EXPECT_EQ(allreduceKernels, 15u);
    // The earliest record_param_comms: broadcast of 53120 Float on a group of 2, ranks "[0, 1]".
    const Collective first = m.collectives.row(0);
    EXPECT_EQ(first.origin, CollectiveOrigin::CpuOp);
    EXPECT_EQ(m.str(first.name), "broadcast");
    EXPECT_EQ(first.inNelems, 53120);
    EXPECT_EQ(first.groupSize, 2);
    EXPECT_EQ(m.str(first.dtype), "Float");
    EXPECT_EQ(first.elementBytes, 4);
    EXPECT_EQ(m.str(first.groupRanks), "[0, 1]");
}

TEST(KinetoJsonRealTraces, LargeIntegerIds) {
    REQUIRE_TRACES();
    const TraceModel m = load("hta/tests/data/large_integer_trace/rank-70.Mar_25_20_48_12.2861.pt.trace.json.gz");
    // The file holds "Comms Id": 10159970886766084423 (> 2^63) on a record_param_comms op.
    ASSERT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.kernels.device[0], 0); // no args: device and stream from pid and tid
    EXPECT_EQ(m.kernels.stream[0], 0);
    EXPECT_EQ(m.kernels.startNs[0], 100000);
    ASSERT_EQ(m.collectives.size(), 2u); // the op, and the kernel by its name
    const Collective op = m.collectives.row(m.collectives.origin[0] == CollectiveOrigin::CpuOp ? 0 : 1);
    EXPECT_EQ(op.commsId, 10159970886766084423ull);
}

TEST(KinetoJsonRealTraces, CorrelationLinksKernelsToLaunches) {
    REQUIRE_TRACES();
    const TraceModel m = load("hta/tests/data/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz");
    // python: all 79 kernels have a cuda_runtime with their correlation, all cudaLaunchKernel; one
    // kernel's External id matches a cpu_op's.
    size_t linked = 0;
    for (size_t i = 0; i < m.kernels.size(); ++i) {
        if (m.kernels.apiCall[i] == kNoRow) continue;
        ++linked;
        EXPECT_EQ(m.str(m.apiCalls.name[static_cast<size_t>(m.kernels.apiCall[i])]), "cudaLaunchKernel");
    }
    EXPECT_EQ(linked, 79u);
    // python: 16 "Memcpy HtoD (Pageable -> Device)" copies, 244403360 bytes in all.
    int64_t bytes = 0;
    for (size_t i = 0; i < m.memcpys.size(); ++i) {
        EXPECT_EQ(m.memcpys.copyKind[i], CopyKind::HtoD);
        EXPECT_EQ(m.memcpys.srcKind[i], MemoryKind::Pageable);
        bytes += m.memcpys.bytes[i];
    }
    EXPECT_EQ(bytes, 244403360);
    // python: cuda_sync_kind: 20 Stream Wait Event, 16 Stream Sync, 5 Context Sync.
    std::map<SyncType, int> syncs;
    for (SyncType t : m.syncs.type)
        ++syncs[t];
    EXPECT_EQ(syncs[SyncType::StreamWaitEvent], 20);
    EXPECT_EQ(syncs[SyncType::StreamSynchronize], 16);
    EXPECT_EQ(syncs[SyncType::ContextSynchronize], 5);
    // python: one CPU thread; 139 ac2g flows with both ends, 222 halves alone.
    EXPECT_EQ(m.threads.size(), 1u);
    EXPECT_EQ(m.flows.size(), 139u);
    EXPECT_EQ(m.stats.value("flows_unpaired"), 222);
}

TEST(KinetoJsonRealTraces, LegacyFormatFiles) {
    REQUIRE_TRACES();
    const TraceModel m = load(
        "kineto-tbplugin-testdata/tb_plugin/test/data/tracing/resnet50_newAPI_ddp/worker0_span1.pt.trace.json.gz");
    EXPECT_TRUE(m.info.legacyArrayForm);
    EXPECT_FALSE(m.info.rank); // no distributedInfo in 2020
    // python: memcpy names: 1280 DtoD (Device -> Device), 8 HtoD (Pinned -> Device), 3 DtoH (Device -> Pageable)
    int dtod = 0, pinnedHtoD = 0, pageableDtoH = 0;
    for (size_t i = 0; i < m.memcpys.size(); ++i) {
        dtod += m.memcpys.copyKind[i] == CopyKind::DtoD;
        pinnedHtoD += m.memcpys.copyKind[i] == CopyKind::HtoD && m.memcpys.srcKind[i] == MemoryKind::Pinned;
        pageableDtoH += m.memcpys.copyKind[i] == CopyKind::DtoH && m.memcpys.dstKind[i] == MemoryKind::Pageable;
    }
    EXPECT_EQ(dtod, 1280);
    EXPECT_EQ(pinnedHtoD, 8);
    EXPECT_EQ(pageableDtoH, 3);
    // python: kernels on streams 7 (6178) and 15 (27); 5557 of 6205 have a Runtime with their correlation.
    EXPECT_EQ(std::count(m.kernels.stream.begin(), m.kernels.stream.end(), 15), 27);
    EXPECT_EQ(std::count_if(m.kernels.apiCall.begin(), m.kernels.apiCall.end(), [](RowIndex r) { return r != kNoRow; }),
        5557);
    // python: ProfilerStep#5..#8; #5 at ts 1608033697195207 µs, dur 1925746 µs.
    const RowIndex step = findRow(m, m.annotations.name, "ProfilerStep#5");
    ASSERT_NE(step, kNoRow);
    EXPECT_EQ(m.annotations.startNs[static_cast<size_t>(step)], 1608033697195207000);
    EXPECT_EQ(
        m.annotations.endNs[static_cast<size_t>(step)] - m.annotations.startNs[static_cast<size_t>(step)], 1925746000);
    EXPECT_EQ(countPrefix(m, m.annotations.name, "Optimizer.zero_grad#"), 4u);
    EXPECT_EQ(countPrefix(m, m.annotations.name, "enumerate(DataLoader)#"), 4u);
    // "Input dims" (the older spelling) fills the same column.
    const RowIndex conv = findRow(m, m.cpuOps.name, "aten::cudnn_convolution");
    ASSERT_NE(conv, kNoRow);
    EXPECT_EQ(m.str(m.cpuOps.inputDims[static_cast<size_t>(conv)]), "[[32,3,224,224],[64,3,7,7],[],[],[],[],[],[],[]]");
}

TEST(KinetoJsonRealTraces, GemmShapes) {
    REQUIRE_TRACES();
    const TraceModel m = load("hta/tests/data/trace_filter/sampled_rank-1.json.gz");
    // python: aten::mm Input Dims counted: [[2048,125],[125,320]] x8, [[2048,110],[110,18030]] x6.
    std::map<std::string_view, int> shapes;
    for (size_t i = 0; i < m.cpuOps.size(); ++i)
        if (m.str(m.cpuOps.name[i]) == "aten::mm") ++shapes[m.str(m.cpuOps.inputDims[i])];
    EXPECT_EQ(shapes["[[2048,125],[125,320]]"], 8);
    EXPECT_EQ(shapes["[[2048,110],[110,18030]]"], 6);
    const auto dims = parseInputDims("[[2048,110],[110,18030]]");
    EXPECT_EQ(dims[1][1], 18030);
    EXPECT_EQ(m.info.worldSize, 128);
    EXPECT_TRUE(m.devices.empty()); // no deviceProperties in this file
}

TEST(KinetoJsonRealTraces, AmdCpuOnlyAndCounterRangeTraces) {
    REQUIRE_TRACES();
    {
        const TraceModel m = load("hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz");
        EXPECT_EQ(m.info.vendor, GpuVendor::Amd);
        ASSERT_EQ(m.devices.size(), 4u);
        EXPECT_EQ(m.devices[0].vendor, GpuVendor::Amd);
        EXPECT_EQ(m.devices[0].smCount, 104);
        EXPECT_EQ(std::count(m.kernels.device.begin(), m.kernels.device.end(), 2), 14); // python: all on device 2
        EXPECT_EQ(m.memcpys.bytes[0], -1); // ROCm copies carry no size
        EXPECT_EQ(m.memcpys.copyKind[0], CopyKind::HtoD);
        bool noted = false;
        for (const auto& n : m.stats.notes)
            noted |= n.find("AMD") != std::string::npos;
        EXPECT_TRUE(noted);
    }
    {
        const TraceModel m = load("hta/tests/data/rank_non_gpu/rank_non_gpu.json.gz");
        EXPECT_FALSE(m.hasGpuActivity());
        EXPECT_EQ(m.info.vendor, GpuVendor::Unknown);
        EXPECT_EQ(m.info.rank, 0);
        ASSERT_FALSE(m.stats.notes.empty());
        EXPECT_NE(m.stats.notes[0].find("CPU-only"), std::string::npos);
    }
    {
        const TraceModel m = load("hta/tests/data/cupti_profiler/benchmark_result_924719_1679055439_trace.json.gz");
        EXPECT_TRUE(m.kernels.empty());
        ASSERT_EQ(m.counterRanges.size(), 77u);
        ASSERT_FALSE(m.stats.notes.empty());
        EXPECT_NE(m.stats.notes[0].find("no kernel activity, only counter ranges"), std::string::npos);
        // python: the "__missing__" range has 9 counters, ffma = 9119334400.
        const RowIndex missing = findRow(m, m.counterRanges.name, "__missing__");
        ASSERT_NE(missing, kNoRow);
        int counters = 0;
        for (size_t i = 0; i < m.counterValues.size(); ++i) {
            if (m.counterValues.range[i] != missing) continue;
            ++counters;
            if (m.str(m.counterValues.metric[i]) == "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum") {
                EXPECT_EQ(m.counterValues.value[i], 9119334400.0);
            }
        }
        EXPECT_EQ(counters, 9);
    }
}

TEST(KinetoJsonRealTraces, ImportSpeed) {
    REQUIRE_TRACES();
    // The largest trace here (34.8 MB of JSON, 1.8 MB gzip). Printed, not asserted: machines differ.
    const std::string path = (kTraces / "hta/tests/data/trace_diff/control/control.json.gz").string();
    double best = 1e9;
    uint64_t bytes = 0;
    for (int i = 0; i < 3; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const TraceModel m = importKinetoJson(path);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        bytes = m.stats.bytesRead;
    }
    const double mbps = static_cast<double>(bytes) / 1e6 / best;
    std::cout << "[ speed    ] control.json.gz: " << bytes << " bytes of JSON in " << best * 1000 << " ms = " << mbps
              << " MB/s\n";
    RecordProperty("kineto_import_mb_per_s", std::to_string(mbps));
    EXPECT_GT(mbps, 1.0);
}
