#pragma once
// The tuneup trace format: one definition for the writer (agent) and every reader (analyzer, GUI).

#include <string_view>

namespace tuneup::schema {

// Bumped on every change to schema.sql. Readers open every version up to this one.
// 2: framework_flags, thread_states. 3: gemm_calls, conv_calls, external_correlations. 4: event_counts. 5:
// python_calls, python_samples. 6: memory_events, memory_peaks. 7: native_samples.
inline constexpr int kSchemaVersion = 7;
// Stored in meta('format') and in SQLite's application_id, so a foreign file is recognised.
inline constexpr std::string_view kFormatName = "tuneup-trace";
inline constexpr int kApplicationId = 0x54554E45; // "TUNE"

// The full DDL of schema.sql (generated into trace_schema_sql.h at build time).
std::string_view schemaSql();

// memcpys.src_kind / dst_kind values (CUpti_ActivityMemoryKind).
enum MemoryKind : int { kMemoryUnknown = 0, kMemoryPageable = 1, kMemoryPinned = 2, kMemoryDevice = 3 };
// memcpys.copy_kind values (CUpti_ActivityMemcpyKind).
enum CopyKind : int { kCopyUnknown = 0, kCopyHtoD = 1, kCopyDtoH = 2, kCopyDtoD = 8, kCopyHtoH = 9, kCopyPtoP = 10 };
// memory_events.source and .delta_of values.
enum MemoryEventSource : int { kMemoryFromCupti = 1, kMemoryFromAllocator = 2, kMemoryImported = 3 };
enum MemoryEventTotal : int { kTotalAllocated = 1, kTotalReserved = 2 };
// nvtx_ranges.kind values.
enum RangeKind : int { kRangePushPop = 1, kRangeStartEnd = 2 };
// api_calls.api values (ours: CUPTI numbers its callback domains the other way round).
enum ApiKind : int { kApiRuntime = 1, kApiDriver = 2 };
// gemm_calls.api and conv_calls.api values.
enum GemmApi : int { kGemmCublas = 1, kGemmCublasLt = 2 };
enum ConvApi : int { kConvLegacy = 1, kConvBackend = 2 };
// conv_calls.call_kind: what the call did.
enum ConvCallKind : int { kConvRun = 1, kConvFind = 2, kConvHeuristic = 3 };
// conv_calls.direction.
enum ConvDirection : int { kConvForward = 1, kConvBackwardData = 2, kConvBackwardFilter = 3 };
// conv_calls.algo_source: how a run's algorithm was chosen, as far as the call tells.
enum AlgoSource : int { kAlgoUnknown = 0, kAlgoFind = 1, kAlgoHeuristic = 2, kAlgoGiven = 3 };
// conv_calls.layout.
enum TensorLayout : int { kLayoutOther = 0, kLayoutNchw = 1, kLayoutNhwc = 2 };
// external_correlations.kind of the agent's own ids (CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2).
inline constexpr int kExternalKindTuneup = 5;

} // namespace tuneup::schema
