#pragma once
// The tuneup trace format: one definition for the writer (agent) and every reader (analyzer, GUI).

#include <string_view>

namespace tuneup::schema {

// Bumped on every change to schema.sql. Readers open every version up to this one.
// 2: framework_flags, thread_states.
inline constexpr int kSchemaVersion = 2;
// Stored in meta('format') and in SQLite's application_id, so a foreign file is recognised.
inline constexpr std::string_view kFormatName = "tuneup-trace";
inline constexpr int kApplicationId = 0x54554E45; // "TUNE"

// The full DDL of schema.sql (generated into trace_schema_sql.h at build time).
std::string_view schemaSql();

// memcpys.src_kind / dst_kind values (CUpti_ActivityMemoryKind).
enum MemoryKind : int { kMemoryUnknown = 0, kMemoryPageable = 1, kMemoryPinned = 2, kMemoryDevice = 3 };
// memcpys.copy_kind values (CUpti_ActivityMemcpyKind).
enum CopyKind : int { kCopyUnknown = 0, kCopyHtoD = 1, kCopyDtoH = 2, kCopyDtoD = 8, kCopyHtoH = 9, kCopyPtoP = 10 };
// nvtx_ranges.kind values.
enum RangeKind : int { kRangePushPop = 1, kRangeStartEnd = 2 };
// api_calls.api values (ours: CUPTI numbers its callback domains the other way round).
enum ApiKind : int { kApiRuntime = 1, kApiDriver = 2 };

} // namespace tuneup::schema
