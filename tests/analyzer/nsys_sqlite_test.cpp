// The Nsight Systems SQLite importer: on every nsys export in ../shared/traces (schemas 2.9.1 to 3.17.1,
// checked against MANIFEST.md and the `nsys stats` CSVs published with the cloverleaf export), and on
// small exports built here for what those files lack (NVTX steps, several processes, damaged files).

#include "import/format_detect.h"
#include "import/import_error.h"
#include "import/importer.h"
#include "import/nsys_db.h"
#include "import/nsys_kinds.h"
#include "import/nsys_sqlite.h"
#include "import/tuneup_file.h"
#include "nsys_fixture.h"
#include "shared_traces.h"
#include "steps/step_detector.h"
#include "temp_dir.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace tuneup::analysis;
using tuneup::test::nsysGlobalId;
using tuneup::test::writeNsysExport;

namespace {

const fs::path kTraces = TUNEUP_SHARED_TRACES;
const std::string kReport1 = "nvfuser/ee4fcf30/report1.sqlite";
const std::string kReport2 = "nvfuser/df8f397e/report2.sqlite";
const std::string kCloverleafDir = "pipit/pipit/tests/data/cloverleaf-nsys/";
const std::string kCloverleaf = kCloverleafDir + "perlmutter-cloverleaf-cuda.sqlite";
const std::string kSaxpy = "pipit/pipit/tests/data/saxpy-mpi-cuda_nsys_perlmutter0.sqlite";
const std::string kNoCuda = "dynamicvit/nsys_profile.sqlite";

#define REQUIRE_TRACES() TUNEUP_REQUIRE_SHARED_TRACES(kTraces)

std::string shared(const std::string& relative) {
    return (kTraces / relative).string();
}

size_t countName(const TraceModel& m, const ApiCallTable& calls, std::string_view name) {
    size_t n = 0;
    for (size_t i = 0; i < calls.size(); ++i)
        n += m.str(calls.name[i]) == name;
    return n;
}

class TempDir : public ::testing::Test {
protected:
    std::string path(const std::string& name) const { return (fs::path(m_dir) / name).string(); }
    // An export with one process (pid 100, main thread 100) launching `kernels` kernels 1 ms apart.
    std::string smallExport(const std::string& name, const std::string& extraSql = "", int kernels = 3) {
        std::string sql = "INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'void gemm<float>(int)'), "
                          "(3, 'gemm'), (4, 'python3'), (5, 'cuLaunchKernel');"
                          "INSERT INTO ThreadNames VALUES (4, 10, "
            + std::to_string(nsysGlobalId(100, 100)) + ");";
        for (int i = 0; i < kernels; ++i) {
            const int64_t t = 1'000'000 + i * 1'000'000;
            sql += "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + std::to_string(t) + ", "
                + std::to_string(t + 5000) + ", 0, " + std::to_string(nsysGlobalId(100, 100)) + ", "
                + std::to_string(10 + i) + ", 1, 0, NULL);";
            sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(t + 10000) + ", "
                + std::to_string(t + 600000) + ", 0, 1, 7, " + std::to_string(10 + i) + ", "
                + std::to_string(nsysGlobalId(100, 0)) + ", 2, 3, NULL, 32, 4, 2, 1, 128, 1, 1, 1024, 2048);";
        }
        writeNsysExport(path(name), sql + extraSql);
        return path(name);
    }
    tuneup::test::TempDir m_tmp { "nsys_sqlite_test" };
    std::string m_dir = m_tmp.path();
};

// ---- the real exports ------------------------------------------------------------------------------

struct Expected {
    std::string file;
    size_t kernels, apiCalls, memcpys, memsets, syncs, annotations;
    std::string gpu;
    size_t devices;
};

TEST(NsysSqlite, EveryExportInSharedTracesImportsWithTheManifestsCounts) {
    REQUIRE_TRACES();
    // MANIFEST.md section B; syncs and NVTX annotations counted with sqlite3 on the files.
    const Expected expected[] = {
        { kReport1, 18, 990, 3, 3, 3, 13513, "NVIDIA H200", 1 },
        { kReport2, 19, 975, 1, 1, 1, 1054, "NVIDIA H100 80GB HBM3", 8 },
        { kCloverleaf, 1312, 3048, 279, 0, 1312, 0, "NVIDIA A100-SXM4-80GB", 4 },
        { kSaxpy, 5, 95, 15, 0, 0, 22, "NVIDIA A100-SXM4-40GB", 1 },
    };
    for (const Expected& e : expected) {
        SCOPED_TRACE(e.file);
        EXPECT_EQ(detectFileFormat(shared(e.file)), TraceFileFormat::NsysSqlite);
        ASSERT_TRUE(isNsysExport(shared(e.file)));
        const TraceModel m = importTrace(shared(e.file));
        EXPECT_EQ(m.info.format, SourceFormat::NsysSqlite);
        EXPECT_EQ(m.kernels.size(), e.kernels);
        EXPECT_EQ(m.apiCalls.size(), e.apiCalls);
        EXPECT_EQ(m.memcpys.size(), e.memcpys);
        EXPECT_EQ(m.memsets.size(), e.memsets);
        EXPECT_EQ(m.syncs.size(), e.syncs);
        EXPECT_EQ(m.annotations.size(), e.annotations);
        ASSERT_EQ(m.devices.size(), e.devices);
        for (size_t k = 0; k < m.kernels.size(); ++k) {
            const DeviceInfo* d = m.device(m.kernels.device[k]);
            ASSERT_NE(d, nullptr) << "kernel " << k << " on device " << m.kernels.device[k];
            EXPECT_EQ(d->name, e.gpu);
            EXPECT_GE(d->computeMajor, 8);
            EXPECT_GT(d->smCount, 100);
            EXPECT_GT(d->globalMemoryBytes, int64_t(30) << 30);
            EXPECT_EQ(d->warpSize, 32);
        }
        // Every kernel was launched by a CUDA call the export holds.
        for (size_t k = 0; k < m.kernels.size(); ++k)
            EXPECT_NE(m.kernels.apiCall[k], kNoRow) << m.str(m.kernels.name[k]);
        EXPECT_EQ(m.stats.eventsRead, m.eventCount() + (e.file == kSaxpy ? 2u : 0u)); // + domain and thread name
        EXPECT_FALSE(m.info.metadataValue("nsys.export_schema_version").empty());
    }
}

TEST(NsysSqlite, ProgressReachesTheFileSize) {
    REQUIRE_TRACES();
    std::vector<uint64_t> reports;
    ImportOptions options;
    options.progress = [&](uint64_t bytes) { reports.push_back(bytes); };
    importTrace(shared(kReport1), options);
    ASSERT_FALSE(reports.empty());
    EXPECT_TRUE(std::is_sorted(reports.begin(), reports.end()));
    EXPECT_EQ(reports.back(), fs::file_size(shared(kReport1)));
}

TEST(NsysSqlite, ExportWithoutCudaActivityIsAClearError) {
    REQUIRE_TRACES();
    try {
        importTrace(shared(kNoCuda));
        FAIL() << "imported an export without CUDA activity";
    } catch (const ImportError& e) {
        EXPECT_EQ(e.kind(), ImportError::Kind::NotATrace);
        const std::string message = e.what();
        EXPECT_NE(message.find(shared(kNoCuda)), std::string::npos) << message;
        EXPECT_NE(message.find("an Nsight Systems export with no CUDA activity: the capture recorded no kernels"),
            std::string::npos)
            << message;
        EXPECT_NE(message.find("ThreadNames"), std::string::npos) << message; // what it does hold
        EXPECT_NE(message.find("nsys profile --trace=cuda"), std::string::npos) << message;
    }
}

// The `nsys stats` reports published with the cloverleaf export (cuda_gpu_trace, cuda_api_trace, as
// Enter/Leave rows): same rows, same total durations, same bytes.
TEST(NsysSqlite, CloverleafMatchesTheNsysStatsCsvs) {
    REQUIRE_TRACES();
    struct Totals {
        size_t count = 0;
        int64_t durationNs = 0, bytes = 0;
    };
    auto readCsv = [](const fs::path& file, const std::string& keyColumn) {
        std::ifstream in(file);
        std::string line;
        std::getline(in, line);
        std::vector<std::string> header;
        for (std::stringstream s(line); std::getline(s, line, ',');)
            header.push_back(line);
        const auto column = [&](const std::string& name) {
            return size_t(std::find(header.begin(), header.end(), name) - header.begin());
        };
        const size_t key = column(keyColumn), event = column("Event Type"), ts = column("Timestamp (ns)"),
                     bytes = column("bytes");
        std::map<std::string, Totals> totals;
        while (std::getline(in, line)) {
            std::vector<std::string> cells;
            std::stringstream s(line);
            for (std::string cell; std::getline(s, cell, ',');)
                cells.push_back(cell);
            cells.resize(header.size());
            Totals& t = totals[cells[key]];
            if (cells[event] == "Enter") {
                ++t.count;
                t.durationNs -= std::stoll(cells[ts]);
                if (bytes < cells.size() && !cells[bytes].empty()) t.bytes += std::stoll(cells[bytes]);
            } else
                t.durationNs += std::stoll(cells[ts]);
        }
        return totals;
    };
    const TraceModel m = importTrace(shared(kCloverleaf));

    const auto gpu = readCsv(kTraces / kCloverleafDir / "cloverleaf_gpu_trace.csv", "type");
    ASSERT_TRUE(gpu.count("kernel"));
    Totals kernels;
    for (size_t i = 0; i < m.kernels.size(); ++i) {
        ++kernels.count;
        kernels.durationNs += m.kernels.endNs[i] - m.kernels.startNs[i];
        EXPECT_EQ(m.kernels.stream[i], 7);
    }
    EXPECT_EQ(kernels.count, gpu.at("kernel").count);
    EXPECT_EQ(kernels.durationNs, gpu.at("kernel").durationNs);
    for (const auto& [csvKind, kind] : { std::pair<std::string, CopyKind>("CUDA_MEMCPY_KIND_HTOD", CopyKind::HtoD),
             std::pair<std::string, CopyKind>("CUDA_MEMCPY_KIND_DTOH", CopyKind::DtoH) }) {
        SCOPED_TRACE(csvKind);
        Totals copies;
        for (size_t i = 0; i < m.memcpys.size(); ++i)
            if (m.memcpys.copyKind[i] == kind) {
                ++copies.count;
                copies.durationNs += m.memcpys.endNs[i] - m.memcpys.startNs[i];
                copies.bytes += m.memcpys.bytes[i];
                // Host buffers are pageable in this program (plain malloc): the pageable-copy rule's input.
                EXPECT_EQ(kind == CopyKind::HtoD ? m.memcpys.srcKind[i] : m.memcpys.dstKind[i], MemoryKind::Pageable);
                EXPECT_EQ(kind == CopyKind::HtoD ? m.memcpys.dstKind[i] : m.memcpys.srcKind[i], MemoryKind::Device);
            }
        ASSERT_TRUE(gpu.count(csvKind));
        EXPECT_EQ(copies.count, gpu.at(csvKind).count);
        EXPECT_EQ(copies.durationNs, gpu.at(csvKind).durationNs);
        EXPECT_EQ(copies.bytes, gpu.at(csvKind).bytes);
    }

    // API names lose nsys's "_v<CUDA version>" tag, as the tuneup agent's do.
    const auto api = readCsv(kTraces / kCloverleafDir / "cloverleaf-cuda_api_trace.csv", "Name");
    size_t apiRows = 0;
    for (const auto& [name, expected] : api) {
        SCOPED_TRACE(name);
        Totals got;
        for (size_t i = 0; i < m.apiCalls.size(); ++i)
            if (m.str(m.apiCalls.name[i]) == nsysApiName(name)) {
                ++got.count;
                got.durationNs += m.apiCalls.endNs[i] - m.apiCalls.startNs[i];
            }
        EXPECT_EQ(got.count, expected.count);
        EXPECT_EQ(got.durationNs, expected.durationNs);
        apiRows += expected.count;
    }
    EXPECT_EQ(apiRows, m.apiCalls.size());
    EXPECT_EQ(countName(m, m.apiCalls, "cudaLaunchKernel"), 1312u);
    EXPECT_EQ(countName(m, m.apiCalls, "cuModuleGetLoadingMode"), 1u);

    // One process, one thread; the CSV names them 1701896/1701896.
    ASSERT_EQ(m.threads.size(), 1u);
    EXPECT_EQ(m.threads[0].pid, 1701896);
    EXPECT_EQ(m.threads[0].tid, 1701896);
    ASSERT_EQ(m.processes.size(), 1u);
    EXPECT_EQ(m.processes[0].name, "cuda-cloverleaf");
    // Each cudaDeviceSynchronize waited in a context synchronisation record linked to it.
    for (size_t i = 0; i < m.syncs.size(); ++i) {
        EXPECT_EQ(m.syncs.type[i], SyncType::ContextSynchronize);
        ASSERT_NE(m.syncs.apiCall[i], kNoRow);
        EXPECT_EQ(m.str(m.apiCalls.name[size_t(m.syncs.apiCall[i])]), "cudaDeviceSynchronize");
    }
    // Not modelled, but said: OS runtime calls and sampling.
    EXPECT_EQ(m.stats.value("nsys.not_read.OSRT_API"), 1831);
}

TEST(NsysSqlite, NewestSchemaKernelsCopiesSetsAndSyncs) {
    REQUIRE_TRACES();
    const TraceModel m = importTrace(shared(kReport1));
    // Demangled names (as Kineto records them), with their launch geometry.
    bool fill = false;
    for (size_t i = 0; i < m.kernels.size(); ++i) {
        const std::string_view name = m.str(m.kernels.name[i]);
        fill |= name.find("at::native::FillFunctor") != std::string_view::npos;
        EXPECT_GT(m.kernels.gridX[i] * m.kernels.blockX[i], 0) << name;
        EXPECT_GT(m.kernels.registersPerThread[i], 0) << name;
        EXPECT_EQ(m.kernels.stream[i], 7);
        const std::string_view launch = m.str(m.apiCalls.name[size_t(m.kernels.apiCall[i])]);
        EXPECT_TRUE(launch == "cudaLaunchKernel" || launch == "cuLaunchKernel" || launch == "cuLaunchKernelEx")
            << launch;
    }
    EXPECT_TRUE(fill);
    // Runtime and driver calls share nsys's RUNTIME table, told apart by their event class.
    EXPECT_EQ(countName(m, m.apiCalls, "cuGetProcAddress_v2"), 838u);
    EXPECT_EQ(countName(m, m.apiCalls, "cudaGetDeviceProperties_v2"), 3u);
    for (size_t i = 0; i < m.apiCalls.size(); ++i)
        EXPECT_EQ(m.apiCalls.api[i], m.str(m.apiCalls.name[i]).starts_with("cuda") ? ApiKind::Runtime : ApiKind::Driver)
            << m.str(m.apiCalls.name[i]);
    // One 394 MB copy from pageable memory; memsets on the device; syncs without a stream or event are -1.
    ASSERT_EQ(m.memcpys.size(), 3u);
    EXPECT_EQ(m.memcpys.bytes[0], 394002432);
    EXPECT_EQ(m.memcpys.copyKind[0], CopyKind::HtoD);
    EXPECT_EQ(m.memcpys.srcKind[0], MemoryKind::Pageable);
    EXPECT_EQ(m.memcpys.copyKind[2], CopyKind::DtoD);
    for (size_t i = 0; i < m.memsets.size(); ++i)
        EXPECT_EQ(m.memsets.memoryKind[i], MemoryKind::Device);
    EXPECT_EQ(m.syncs.type[2], SyncType::ContextSynchronize);
    EXPECT_EQ(m.syncs.stream[2], -1);
    EXPECT_EQ(m.syncs.eventId[2], -1);
    EXPECT_EQ(m.syncs.type[0], SyncType::StreamSynchronize);
    // NVTX ranges (nvFuser's own) are user annotations, nested per thread; times are exact nanoseconds.
    EXPECT_EQ(m.str(m.annotations.name[0]), "FusionCache::get");
    EXPECT_EQ(m.annotations.startNs[0], 8169420254);
    EXPECT_EQ(m.annotations.endNs[0], 8169475794);
    EXPECT_EQ(m.info.metadataValue("nsys.version"), "2025.1.1.110");
    EXPECT_EQ(m.info.metadataValue("nsys.export_schema_version"), "3.17.1");
    EXPECT_EQ(m.info.metadataValue("command_line"),
        "pytest benchmarks/python/test_cross_entropy_loss.py -k phi3 --benchmark-thunder -s");
    EXPECT_EQ(m.info.metadataValue("nsys.session_start_utc_ns"), "1741793819042497997");
    EXPECT_EQ(m.info.vendor, GpuVendor::Nvidia);
    // Several threads made CUDA calls; each has the name the OS gave it.
    EXPECT_GT(m.threads.size(), 1u);
    size_t named = 0;
    for (const ThreadInfo& t : m.threads)
        named += t.name != kEmptyString;
    EXPECT_GT(named, 0u);
}

TEST(NsysSqlite, OldestSchemaWithMetadataInExportMetaDataAndNvtxDomains) {
    REQUIRE_TRACES();
    const TraceModel m = importTrace(shared(kSaxpy));
    EXPECT_EQ(m.info.metadataValue("nsys.export_schema_version"), "2.9.1");
    // Ranges named by registered strings (textId) and by text; MPI's domain; the thread MPI named.
    std::set<std::string> names;
    for (size_t i = 0; i < m.annotations.size(); ++i)
        names.emplace(m.str(m.annotations.name[i]));
    EXPECT_TRUE(names.count("saxpy"));
    EXPECT_GT(names.size(), 2u);
    EXPECT_FALSE(names.count(""));
    EXPECT_EQ(m.stats.value("nsys.nvtx.domains"), 1);
    ASSERT_EQ(m.threads.size(), 1u);
    EXPECT_EQ(m.str(m.threads[0].name), "MPI Rank 0");
    // 262 MB pageable host-to-device copies.
    EXPECT_EQ(m.memcpys.bytes[0], 262144000);
    EXPECT_EQ(m.memcpys.srcKind[0], MemoryKind::Pageable);
}

TEST(NsysSqlite, GpusOfTheMachineAndTheDeviceTheKernelsRanOn) {
    REQUIRE_TRACES();
    const TraceModel m = importTrace(shared(kReport2));
    ASSERT_EQ(m.devices.size(), 8u);
    for (size_t i = 0; i < m.kernels.size(); ++i)
        EXPECT_EQ(m.kernels.device[i], 0);
    EXPECT_EQ(m.devices[0].computeMajor, 9);
    EXPECT_EQ(m.devices[0].computeMinor, 0);
    EXPECT_EQ(m.devices[0].smCount, 132);
    EXPECT_EQ(m.devices[0].globalMemoryBytes, 84942979072);
}

// ---- small exports made here -------------------------------------------------------------------------

using NsysSqliteFile = TempDir;

TEST_F(NsysSqliteFile, NvtxStepRangesBecomeSteps) {
    const int64_t main = nsysGlobalId(100, 100);
    const std::string g = std::to_string(main);
    std::string nvtx;
    for (int i = 0; i < 3; ++i) // push/pop ranges around each kernel, like torch.profiler's steps
        nvtx += "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES ("
            + std::to_string(900'000 + i * 1'000'000) + ", " + std::to_string(1'900'000 + i * 1'000'000 - 1)
            + ", 59, 'ProfilerStep#" + std::to_string(i + 1) + "', " + g + ", 0);";
    nvtx += "INSERT INTO StringIds VALUES (20, 'forward');"
            "INSERT INTO NVTX_EVENTS (start, end, eventType, textId, globalTid, domainId) VALUES (1000000, 1500000, "
            "60, 20, "
        + g
        + ", 0);"
          // a range still open when the capture stopped, and what the tuneup bootstrap marks
          "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId) VALUES (3500000, NULL, 59, "
          "'epoch', "
        + g
        + ", 0);"
          "INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (10, 75, 'tuneup', "
        + g
        + ", 7);"
          "INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId, int64Value) VALUES (20, 34, "
          "'tuneup.dataloader.num_workers', "
        + g
        + ", 7, 4);"
          "INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (30, 34, 'no payload', "
        + g
        + ", 0);"
          "INSERT INTO NVTX_EVENTS (start, eventType, text, globalTid, domainId) VALUES (40, 39, 'trainer', "
        + g + ", 0);";
    const TraceModel m = importTrace(smallExport("steps.sqlite", nvtx));
    ASSERT_EQ(m.annotations.size(), 5u);
    const StepDetection steps = detectSteps(m);
    ASSERT_EQ(steps.steps.size(), 3u) << steps.detail;
    EXPECT_EQ(steps.steps[0].number, 1);
    EXPECT_EQ(steps.steps[2].startNs, 2'900'000);
    // --step-range on a start/end range
    EXPECT_EQ(detectSteps(m, "forward").steps.size(), 1u);
    // The open range ends with the capture (its last event: the third step's end).
    bool open = false;
    for (size_t i = 0; i < m.annotations.size(); ++i)
        if (m.str(m.annotations.name[i]) == "epoch") {
            open = true;
            EXPECT_EQ(m.annotations.endNs[i], 3'899'999);
        }
    EXPECT_TRUE(open);
    EXPECT_EQ(m.stats.value("nsys.nvtx.unclosed_ranges"), 1);
    ASSERT_EQ(m.programFacts.size(), 1u);
    EXPECT_EQ(m.str(m.programFacts.name[0]), "tuneup.dataloader.num_workers");
    EXPECT_EQ(m.programFacts.value[0], 4);
    EXPECT_EQ(m.stats.value("nsys.nvtx.marks"), 2);
    ASSERT_EQ(m.threads.size(), 1u);
    EXPECT_EQ(m.str(m.threads[0].name), "trainer"); // the NVTX name wins over the OS's (python3)
}

TEST_F(NsysSqliteFile, KernelsLinkToTheirOwnProcesssLaunchWhenCorrelationIdsRepeat) {
    // A second process (pid 200) whose correlation ids are the first's again, launching another kernel.
    std::string sql = "INSERT INTO StringIds VALUES (30, 'other_kernel');";
    for (int i = 0; i < 3; ++i) {
        const int64_t t = 1'200'000 + i * 1'000'000;
        sql += "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (" + std::to_string(t) + ", " + std::to_string(t + 100)
            + ", 0, " + std::to_string(nsysGlobalId(200, 201)) + ", " + std::to_string(10 + i) + ", 5, 0, NULL);";
        sql += "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (" + std::to_string(t + 1000) + ", "
            + std::to_string(t + 2000) + ", 1, 1, 9, " + std::to_string(10 + i) + ", "
            + std::to_string(nsysGlobalId(200, 0)) + ", 30, 30, NULL, 16, 1, 1, 1, 32, 1, 1, 0, 0);";
    }
    sql += "INSERT INTO PROCESSES VALUES (" + std::to_string(nsysGlobalId(100, 0)) + ", 100, 'python3'), ("
        + std::to_string(nsysGlobalId(200, 0)) + ", 200, 'worker'), (" + std::to_string(nsysGlobalId(300, 0))
        + ", 300, 'unrelated');";
    const TraceModel m = importTrace(smallExport("two.sqlite", sql));
    ASSERT_EQ(m.kernels.size(), 6u);
    for (size_t i = 0; i < m.kernels.size(); ++i) {
        ASSERT_NE(m.kernels.apiCall[i], kNoRow);
        const auto call = size_t(m.kernels.apiCall[i]);
        const bool other = m.str(m.kernels.name[i]) == "other_kernel";
        EXPECT_EQ(m.threads[m.apiCalls.thread[call]].pid, other ? 200 : 100);
        EXPECT_EQ(m.str(m.apiCalls.name[call]), other ? "cuLaunchKernel" : "cudaLaunchKernel");
    }
    EXPECT_EQ(m.stats.value("nsys.processes_with_cuda_calls"), 2);
    // Names only for the processes in the trace.
    ASSERT_EQ(m.processes.size(), 2u);
    for (const ProcessInfo& p : m.processes)
        EXPECT_EQ(p.name, p.pid == 100 ? "python3" : "worker");
    EXPECT_EQ(m.str(m.threads[0].name), "python3");
}

TEST_F(NsysSqliteFile, KindsAreReadByNameFromTheExportsEnumTables) {
    // Without ENUM tables, nsys's numbering: memory kind 0 is pageable, 1 pinned, 2 device.
    const std::string copies = "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (5000000, 5001000, 0, 1, 7, 99, "
        + std::to_string(nsysGlobalId(100, 0))
        + ", 4096, 1, 1, 2); INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (5002000, 5003000, 0, 1, 7, 98, "
        + std::to_string(nsysGlobalId(100, 0)) + ", 0, 64, 2);";
    {
        const TraceModel m = importTrace(smallExport("plain.sqlite", copies));
        ASSERT_EQ(m.memcpys.size(), 1u);
        EXPECT_EQ(m.memcpys.copyKind[0], CopyKind::HtoD);
        EXPECT_EQ(m.memcpys.srcKind[0], MemoryKind::Pinned);
        EXPECT_EQ(m.memcpys.dstKind[0], MemoryKind::Device);
        EXPECT_EQ(m.memsets.memoryKind[0], MemoryKind::Device);
    }
    // An export whose enum numbers its kinds otherwise is read by the names.
    const std::string renumbered = copies
        + "; CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
          "INSERT INTO ENUM_CUDA_MEM_KIND VALUES (1, 'CUDA_MEMOPR_MEMORY_KIND_PAGEABLE', 'Pageable'), "
          "(2, 'CUDA_MEMOPR_MEMORY_KIND_DEVICE_STATIC', ''), (0, 'CUDA_MEMOPR_MEMORY_KIND_UNKNOWN', '');"
          "CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER PRIMARY KEY, name TEXT, label TEXT);"
          "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (1, 'CUDA_MEMCPY_KIND_UVM_DTOH', '');";
    const TraceModel m = importTrace(smallExport("renumbered.sqlite", renumbered));
    EXPECT_EQ(m.memcpys.copyKind[0], CopyKind::DtoH);
    EXPECT_EQ(m.memcpys.srcKind[0], MemoryKind::Pageable);
    EXPECT_EQ(m.memcpys.dstKind[0], MemoryKind::DeviceStatic);
    EXPECT_EQ(m.memsets.memoryKind[0], MemoryKind::DeviceStatic);
}

TEST_F(NsysSqliteFile, ColumnsThatComeAndGoBetweenVersions) {
    // An older layout: the kernel's name as text, no globalPid or shared memory, no StringIds at all,
    // a memset table without memKind and a table without start/end.
    const std::string schema = R"sql(
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER, streamId INTEGER,
  correlationId INTEGER, name TEXT, gridX INTEGER, blockX INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER, bytes INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (timestamp INTEGER);
)sql";
    writeNsysExport(path("old.sqlite"),
        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (100, 50, 0, 7, 1, 'old_kernel', 2, 64);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (200, 300, 0, 16);"
        "INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES (5)",
        schema);
    const TraceModel m = importNsysSqlite(path("old.sqlite"));
    ASSERT_EQ(m.kernels.size(), 1u);
    EXPECT_EQ(m.str(m.kernels.name[0]), "old_kernel");
    EXPECT_EQ(m.kernels.endNs[0], 100); // an end before the start is clamped to it
    EXPECT_EQ(m.kernels.gridX[0], 2);
    EXPECT_EQ(m.kernels.apiCall[0], kNoRow);
    ASSERT_EQ(m.memsets.size(), 1u);
    EXPECT_EQ(m.memsets.memoryKind[0], MemoryKind::Unknown);
    EXPECT_EQ(m.stats.value("nsys.CUPTI_ACTIVITY_KIND_SYNCHRONIZATION.unreadable"), 1);
}

TEST_F(NsysSqliteFile, NvtxOnlyExportImportsAndSaysItHasNoCudaActivity) {
    writeNsysExport(path("nvtx.sqlite"),
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (1, 2, 59, 'step', "
            + std::to_string(nsysGlobalId(5, 5)) + ")");
    const TraceModel m = importTrace(path("nvtx.sqlite"));
    EXPECT_EQ(m.annotations.size(), 1u);
    EXPECT_FALSE(m.hasGpuActivity());
    ASSERT_EQ(m.stats.notes.size(), 1u);
    EXPECT_NE(m.stats.notes[0].find("no CUDA activity"), std::string::npos);
}

TEST_F(NsysSqliteFile, EmptyExportIsAClearError) {
    writeNsysExport(path("empty.sqlite"), "SELECT 1");
    try {
        importTrace(path("empty.sqlite"));
        FAIL();
    } catch (const ImportError& e) {
        EXPECT_EQ(e.kind(), ImportError::Kind::NotATrace);
        EXPECT_NE(std::string(e.what()).find("every table is empty"), std::string::npos) << e.what();
    }
}

// Damaged files: an error that names the file and says what is wrong, never a crash.
TEST_F(NsysSqliteFile, DamagedFilesAreClearErrorsNamingTheFile) {
    const std::string good = smallExport("good.sqlite", "", 200);
    std::string bytes;
    {
        std::ifstream in(good, std::ios::binary);
        std::ostringstream out;
        out << in.rdbuf();
        bytes = out.str();
    }
    ASSERT_GT(bytes.size(), 8192u);
    auto write = [&](const std::string& name, const std::string& content) {
        std::ofstream(path(name), std::ios::binary) << content;
        return path(name);
    };
    auto expectError = [](const std::string& file, std::string_view words) {
        SCOPED_TRACE(file);
        try {
            const TraceModel m = importTrace(file);
            ADD_FAILURE() << "imported " << m.eventCount() << " events";
        } catch (const ImportError& e) {
            EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        } catch (const TuneupFileError& e) {
            EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
            EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
        }
    };
    // Cut short after its schema: the tables' pages are missing.
    expectError(write("truncated.sqlite", bytes.substr(0, bytes.size() / 2)), "Nsight Systems export");
    // The schema page overwritten: SQLite cannot even list the tables (then it is no nsys export we know).
    std::string schemaHit = bytes;
    for (size_t i = 100; i < 4096 && i < schemaHit.size(); ++i)
        schemaHit[i] = char(0xA5);
    expectError(write("schema.sqlite", schemaHit), "");
    // Table pages overwritten.
    std::string pagesHit = bytes;
    for (size_t i = 4096; i < pagesHit.size(); i += 7)
        pagesHit[i] = char(i * 31);
    try {
        importTrace(write("pages.sqlite", pagesHit));
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find(path("pages.sqlite")), std::string::npos) << e.what();
    }
    // A header that is SQLite's magic and garbage.
    expectError(write("header.sqlite", std::string("SQLite format 3\0", 16) + std::string(200, '\x7f')), "");
    // A foreign SQLite database (not a tuneup recording, not an nsys export).
    tuneup::test::writeNsysExport(path("foreign.sqlite"), "INSERT INTO accounts VALUES (1, 'x')",
        "CREATE TABLE accounts (id INTEGER, name TEXT);");
    expectError(path("foreign.sqlite"), "not a tuneup trace");
    try {
        importNsysSqlite(path("foreign.sqlite"));
        ADD_FAILURE();
    } catch (const ImportError& e) {
        EXPECT_EQ(e.kind(), ImportError::Kind::NotATrace);
        EXPECT_NE(std::string(e.what()).find("not an Nsight Systems export"), std::string::npos) << e.what();
    }
    // Missing.
    try {
        importNsysSqlite(path("missing.sqlite"));
        ADD_FAILURE();
    } catch (const ImportError& e) {
        EXPECT_EQ(e.kind(), ImportError::Kind::NotFound);
    }
}

TEST(NsysKinds, ApiNamesLoseTheirVersionTagOnly) {
    EXPECT_EQ(nsysApiName("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
    EXPECT_EQ(nsysApiName("cudaGetDeviceProperties_v2_v12000"), "cudaGetDeviceProperties_v2");
    EXPECT_EQ(nsysApiName("cuGetProcAddress_v2"), "cuGetProcAddress_v2");
    EXPECT_EQ(nsysApiName("cuMemcpyHtoD_v2"), "cuMemcpyHtoD_v2");
    EXPECT_EQ(nsysApiName("cuInit"), "cuInit");
    EXPECT_EQ(nsysApiName("_v1234"), "");
}

} // namespace
