// The Kineto JSON importer on traces written in the test: one small trace with every feature (every
// table filled), the 2020 top-level array, empty and odd traces, and bad input refused with the byte
// where it went wrong.

#include "kineto_test_support.h"
#include "model/trace_builder.h"

#include <gtest/gtest.h>

using namespace tuneup::analysis;
using namespace tuneup::test::kineto;

TEST(KinetoJson, SyntheticTraceFillsEveryTable) {
    for (bool compressed : { false, true }) {
        SCOPED_TRACE(compressed ? "gzip" : "plain");
        const std::string bytes = compressed ? gzipBytes(kSynthetic) : std::string(kSynthetic);
        const TraceModel m = importKinetoJsonBytes(bytes, "synthetic.json");
        constexpr int64_t base = 1700000000000000000;

        EXPECT_EQ(m.info.format, SourceFormat::KinetoJson);
        EXPECT_EQ(m.info.baseTimeNs, base);
        EXPECT_EQ(m.info.rank, 3);
        EXPECT_EQ(m.info.worldSize, 8);
        EXPECT_EQ(m.info.backend, "nccl");
        EXPECT_EQ(m.info.displayTimeUnit, "ms");
        EXPECT_EQ(m.info.metadataValue("host_name"), "node7");
        EXPECT_EQ(m.info.metadataValue("distributedInfo.nccl_version"), "2.21.5");
        EXPECT_EQ(m.info.vendor, GpuVendor::Nvidia);
        ASSERT_EQ(m.devices.size(), 1u);
        EXPECT_EQ(m.devices[0].name, "NVIDIA H100 80GB HBM3");
        EXPECT_EQ(m.devices[0].computeMajor, 9);
        EXPECT_EQ(m.devices[0].smCount, 132);
        EXPECT_EQ(m.devices[0].globalMemoryBytes, 85000000000);

        ASSERT_EQ(m.kernels.size(), 2u); // sorted: the NCCL kernel (900 µs) first
        EXPECT_EQ(m.str(m.kernels.name[0]), "ncclDevKernel_AllGather_RING_LL(x)");
        const Kernel k = m.kernels.row(1);
        EXPECT_EQ(k.startNs, base + 1000500);
        EXPECT_EQ(k.endNs, base + 1000500 + 2250);
        EXPECT_EQ(k.device, 0);
        EXPECT_EQ(k.stream, 7);
        EXPECT_EQ(k.gridX * k.gridY * k.gridZ, 8);
        EXPECT_EQ(k.blockX, 128);
        EXPECT_EQ(k.registersPerThread, 32);
        EXPECT_EQ(k.sharedMemoryBytes, 1024);
        ASSERT_NE(k.apiCall, kNoRow);
        EXPECT_EQ(m.str(m.apiCalls.name[static_cast<size_t>(k.apiCall)]), "cudaLaunchKernel");
        EXPECT_EQ(m.apiCalls.cbid[static_cast<size_t>(k.apiCall)], 211);
        ASSERT_NE(k.cpuOp, kNoRow);
        const CpuOp mm = m.cpuOps.row(static_cast<size_t>(k.cpuOp));
        EXPECT_EQ(m.str(mm.name), "aten::mm");
        EXPECT_EQ(m.str(mm.inputDims), "[[8,3],[3,5]]");
        EXPECT_EQ(m.str(mm.inputTypes), "float,float");
        EXPECT_EQ(mm.sequenceNumber, 4);
        EXPECT_EQ(m.str(m.threads[mm.thread].name), "main");
        ASSERT_EQ(m.processes.size(), 1u);
        EXPECT_EQ(m.processes[0].name, "python3");

        ASSERT_EQ(m.annotations.size(), 1u);
        EXPECT_EQ(m.str(m.annotations.name[0]), "ProfilerStep#1");
        ASSERT_EQ(m.memcpys.size(), 1u);
        EXPECT_EQ(m.memcpys.copyKind[0], CopyKind::HtoD);
        EXPECT_EQ(m.memcpys.srcKind[0], MemoryKind::Pageable);
        EXPECT_EQ(m.memcpys.dstKind[0], MemoryKind::Device);
        EXPECT_EQ(m.memcpys.bytes[0], 4096);
        ASSERT_EQ(m.memsets.size(), 1u);
        EXPECT_EQ(m.memsets.memoryKind[0], MemoryKind::Device);
        ASSERT_EQ(m.syncs.size(), 1u);
        EXPECT_EQ(m.syncs.type[0], SyncType::StreamWaitEvent);
        EXPECT_EQ(m.syncs.eventId[0], 3);
        EXPECT_EQ(m.syncs.waitStream[0], 9);

        ASSERT_EQ(m.collectives.size(), 2u);
        const Collective cpuSide = m.collectives.row(0); // 890 µs
        EXPECT_EQ(cpuSide.origin, CollectiveOrigin::CpuOp);
        EXPECT_EQ(m.str(m.cpuOps.name[static_cast<size_t>(cpuSide.eventRow)]), "record_param_comms");
        EXPECT_EQ(m.str(cpuSide.name), "allgather");
        EXPECT_EQ(cpuSide.inNelems, 10);
        EXPECT_EQ(cpuSide.outNelems, 80);
        EXPECT_EQ(cpuSide.groupSize, 8);
        EXPECT_EQ(cpuSide.elementBytes, 2);
        EXPECT_EQ(cpuSide.commsId, UINT64_MAX);
        const Collective gpuSide = m.collectives.row(1);
        EXPECT_EQ(gpuSide.origin, CollectiveOrigin::Kernel);
        EXPECT_EQ(gpuSide.eventRow, 0);
        EXPECT_EQ(m.str(gpuSide.name), "allgather"); // from the kernel name

        ASSERT_EQ(m.flows.size(), 1u);
        EXPECT_EQ(m.flows.startNs[0], base + 999000);
        EXPECT_EQ(m.flows.endNs[0], base + 1000500);
        EXPECT_EQ(m.flows.endTid[0], 7);

        ASSERT_EQ(m.pythonFunctions.size(), 1u); // python_function frames are kept
        EXPECT_EQ(m.str(m.pythonFunctions.name[0]), "train.py(1): step");
        // The [memory] event with sizes and totals is read; the one with neither is counted.
        ASSERT_EQ(m.memoryEvents.size(), 1u);
        const MemoryEvent mem = m.memoryEvents.row(0);
        EXPECT_EQ(mem.timeNs, base + 992500);
        EXPECT_EQ(mem.device, 0);
        EXPECT_EQ(mem.allocatedBytes, 1048576);
        EXPECT_EQ(mem.reservedBytes, 2097152);
        EXPECT_EQ(mem.deltaBytes, -4096);
        EXPECT_EQ(mem.deltaOf, MemoryTotal::Allocated);
        EXPECT_EQ(mem.address, 140000000000000u);
        EXPECT_EQ(mem.thread, mm.thread);
        EXPECT_EQ(m.stats.value("memory_events_unread"), 1);
        EXPECT_EQ(m.stats.value("events_without_ts"), 1);
        EXPECT_EQ(m.stats.unknownCategories.at("mystery"), 1);
        EXPECT_EQ(m.stats.eventsRead, 18u);
        EXPECT_EQ(m.stats.bytesRead, kSynthetic.size());
    }
}

TEST(KinetoJson, LegacyTopLevelArray) {
    // The 2020 form: no wrapper, capitalised categories, string tids, "stream N" GPU rows.
    constexpr std::string_view text = R"json([
      {"ph": "X", "cat": "Operator", "name": "ProfilerStep#3", "pid": 1, "tid": "2263107392", "ts": 10, "dur": 100,
       "args": {"Input dims": [], "External id": 1}},
      {"ph": "X", "cat": "Operator", "name": "aten::addmm", "pid": 1, "tid": "2263107392", "ts": 11, "dur": 10,
       "args": {"Input dims": [[1000], [32, 2048], [2048, 1000], [], []], "Input type": [], "External id": 2}},
      {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": "2263107392", "ts": 12, "dur": 2,
       "args": {"cbid": 211, "correlation": 5, "external id": 2}},
      {"ph": "X", "cat": "Kernel", "name": "volta_sgemm_128x64_tn", "pid": 0, "tid": "stream 7", "ts": 20, "dur": 5,
       "args": {"correlation": 5, "external id": 2}},
      {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": "stream 7", "ts": 30, "dur": 1,
       "args": {"device": 0, "stream": 7, "bytes": 128}}
    ])json";
    const TraceModel m = importKinetoJsonBytes(text, "legacy.json");
    EXPECT_TRUE(m.info.legacyArrayForm);
    ASSERT_EQ(m.annotations.size(), 1u);
    EXPECT_EQ(m.str(m.annotations.name[0]), "ProfilerStep#3");
    ASSERT_EQ(m.cpuOps.size(), 1u);
    EXPECT_EQ(m.str(m.cpuOps.inputDims[0]), "[[1000],[32,2048],[2048,1000],[],[]]");
    EXPECT_EQ(m.cpuOps.inputTypes[0], kEmptyString);
    EXPECT_EQ(m.threads[m.cpuOps.thread[0]].tid, 2263107392);
    ASSERT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.kernels.stream[0], 7);
    EXPECT_EQ(m.kernels.device[0], 0);
    EXPECT_EQ(m.kernels.apiCall[0], 0);
    EXPECT_EQ(m.kernels.cpuOp[0], 0);
    EXPECT_EQ(m.memcpys.srcKind[0], MemoryKind::Pinned);
}

TEST(KinetoJson, EmptyTraceIsValid) {
    const TraceModel m = importKinetoJsonBytes(R"({"traceEvents": []})", "empty-events.json");
    EXPECT_EQ(m.eventCount(), 0u);
    EXPECT_FALSE(m.hasGpuActivity());
    ASSERT_FALSE(m.stats.notes.empty());
    EXPECT_NE(m.stats.notes[0].find("CPU-only"), std::string::npos);
}

TEST(KinetoJson, NonObjectEventsAreCountedNotFatal) {
    const TraceModel m = importKinetoJsonBytes(R"({"traceEvents": [1, "x", [2], {"ph": "B"}]})", "odd.json");
    EXPECT_EQ(m.stats.value("skipped_non_object_events"), 3);
    EXPECT_EQ(m.stats.value("skipped_begin_end_events"), 1);
}

TEST(KinetoJson, NanAndInfinityAreTolerated) {
    // Python's json writes NaN/Infinity (e.g. an occupancy of NaN); a timestamp cannot be one.
    const TraceModel m = importKinetoJsonBytes(R"({"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 5, "dur": 1,
         "args": {"est. achieved occupancy %": NaN, "warps per SM": -Infinity, "device": 0}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": NaN, "dur": 1}]})",
        "nan.json");
    EXPECT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.stats.value("events_without_ts"), 1);
}

TEST(KinetoJson, ThreadedAndInlineReadingAgree) {
    // A text bigger than a chunk, so that chunk boundaries fall inside tokens.
    std::string text = R"({"traceEvents": [)";
    for (int i = 0; i < 40000; ++i)
        text += R"({"ph": "X", "cat": "kernel", "name": "kernel_with_a_long_name_)" + std::to_string(i % 97)
            + R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(i) + ".125, \"dur\": 0.5},";
    text += "{}]}";
    for (bool gzip : { false, true }) {
        const std::string bytes = gzip ? gzipBytes(text) : text;
        uint64_t progressed = 0;
        KinetoImportOptions inline_;
        inline_.background = false;
        inline_.progress = [&](uint64_t n) { progressed = n; };
        const TraceModel a = importKinetoJsonBytes(bytes, "a.json", inline_);
        const TraceModel b = importKinetoJsonBytes(bytes, "b.json");
        ASSERT_EQ(a.kernels.size(), 40000u);
        EXPECT_EQ(a.kernels.startNs, b.kernels.startNs);
        EXPECT_EQ(a.kernels.endNs, b.kernels.endNs);
        EXPECT_EQ(a.kernels.startNs[39999], 39999125);
        EXPECT_EQ(a.strings.size(), b.strings.size());
        EXPECT_EQ(progressed, text.size());
        EXPECT_GT(text.size(), size_t(2) << 20);
    }
}

// ---- bad input --------------------------------------------------------------------------------------

TEST(KinetoJsonErrors, MalformedJsonNamesTheByteOffset) {
    {
        const std::string text = R"({"traceEvents": [{"ph" "X"}]})";
        const ImportError e = importError(text);
        EXPECT_EQ(e.kind(), ImportError::Kind::Malformed);
        EXPECT_EQ(e.offset(), text.find("\"X\""));
        EXPECT_EQ(e.path(), "test.json");
        EXPECT_NE(
            std::string(e.what()).find("test.json: at byte 23: malformed JSON: Missing a colon"), std::string::npos)
            << e.what();
    }
    {
        const std::string text = R"({"traceEvents": [{"ph": "X", "ts": 12,, "dur": 1}]})";
        const ImportError e = importError(text);
        EXPECT_EQ(e.kind(), ImportError::Kind::Malformed);
        EXPECT_EQ(e.offset(), text.find(",,") + 1);
        EXPECT_NE(std::string(e.what()).find("near"), std::string::npos) << e.what();
    }
    {
        // The same error inside gzip: the offset counts the uncompressed text.
        const std::string text = R"({"traceEvents": [{"ph": "X", "ts": 12}}]})";
        const ImportError e = expectImportError([&] { importKinetoJsonBytes(gzipBytes(text), "test.json.gz"); });
        EXPECT_EQ(e.kind(), ImportError::Kind::Malformed);
        EXPECT_EQ(e.offset(), text.find("}}") + 1);
        EXPECT_NE(std::string(e.what()).find("of the uncompressed data"), std::string::npos) << e.what();
    }
}

TEST(KinetoJsonErrors, TruncatedJson) {
    const std::string text = R"({"traceEvents": [{"ph": "X", "ts": 1)";
    const ImportError e = importError(text);
    EXPECT_EQ(e.kind(), ImportError::Kind::Truncated);
    EXPECT_EQ(e.offset(), text.size());
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
}

TEST(KinetoJsonErrors, NotATrace) {
    for (std::string_view text : { "42", "\"hello\"", "{\"foo\": 1}", "{\"traceEvents\": {}}", "{\"traceEvents\": 3}",
             "<html><body>Not found</body></html>",
             "\x7f"
             "ELF\x02\x01" }) {
        const ImportError e = importError(text);
        EXPECT_EQ(e.kind(), ImportError::Kind::NotATrace) << text << " -> " << e.what();
    }
    EXPECT_EQ(importError("").kind(), ImportError::Kind::Empty);
    EXPECT_EQ(importError(" \n\t ").kind(), ImportError::Kind::Empty);
    std::string sqlite(4096, '\0');
    std::memcpy(sqlite.data(), "SQLite format 3", 16);
    const ImportError e = importError(sqlite);
    EXPECT_EQ(e.kind(), ImportError::Kind::UnknownFormat);
    EXPECT_NE(std::string(e.what()).find("SQLite"), std::string::npos);
}

TEST(KinetoJsonErrors, DeepNestingDoesNotCrash) {
    const std::string text = "{\"traceEvents\": [{\"args\": {\"x\": " + std::string(200000, '[') + "]}}]}";
    EXPECT_EQ(importError(text).kind(), ImportError::Kind::Malformed);
    const std::string closed = "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1, \"args\": {\"x\": "
        + std::string(100000, '[') + std::string(100000, ']') + "}}]}";
    EXPECT_EQ(importKinetoJsonBytes(closed, "deep.json").kernels.size(), 1u);
}

TEST(KinetoJsonErrors, FilesThatCannotBeRead) {
    EXPECT_EQ(
        expectImportError([] { importKinetoJson("/nonexistent/trace.json"); }).kind(), ImportError::Kind::NotFound);
    EXPECT_EQ(expectImportError([] { importKinetoJson("/tmp"); }).kind(), ImportError::Kind::Unreadable);
}

TEST(KinetoJsonErrors, TruncatedGzipOfARealTrace) {
    REQUIRE_TRACES();
    const std::string raw
        = readFile(kTraces / "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz");
    ASSERT_EQ(raw.size(), 1152519u);
    const std::string cut = raw.substr(0, raw.size() / 2);
    const ImportError e = expectImportError([&] { importKinetoJsonBytes(cut, "cut.json.gz"); });
    EXPECT_EQ(e.kind(), ImportError::Kind::Truncated) << e.what();
    // python3: len(zlib.decompressobj(16 + 15).decompress(raw[:len(raw)//2])) == 7229506
    EXPECT_EQ(e.offset(), 7229506u) << e.what();
    EXPECT_NE(std::string(e.what()).find("cut.json.gz: at byte 7229506 of the uncompressed data"), std::string::npos)
        << e.what();
}

TEST(KinetoJsonErrors, CorruptGzip) {
    const std::string text = "{\"traceEvents\": [" + std::string(100000, ' ') + "]}";
    std::string bytes = gzipBytes(text);
    bytes[bytes.size() - 6] ^= 0x55; // inside the CRC/length trailer
    const ImportError e = expectImportError([&] { importKinetoJsonBytes(bytes, "bad.json.gz"); });
    EXPECT_EQ(e.kind(), ImportError::Kind::Corrupt) << e.what();
    EXPECT_EQ(e.offset(), text.size());
    std::string middle = gzipBytes(std::string(kSynthetic) + std::string(50000, ' '));
    for (size_t i = 20; i < 40; ++i)
        middle[i] = static_cast<char>(0xFF);
    EXPECT_EQ(
        expectImportError([&] { importKinetoJsonBytes(middle, "bad2.json.gz"); }).kind(), ImportError::Kind::Corrupt);
}
