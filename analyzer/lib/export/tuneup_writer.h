#pragma once
// Writes a TraceModel in the tuneup trace schema (agent/schema/schema.sql): for SQL rules over any
// input format, and for `tuneup import IN -o run.db`.
//
// Mapped: kernels, memcpys, memsets, syncs, api_calls, annotations (as push/pop nvtx_ranges), devices,
// processes, threads, strings, meta and the import's stats. Ids are row index + 1, in the model's
// (time) order. Schema v1 has no tables for CPU ops, GPU annotations, collectives, flows, counters,
// Python frames or framework flags: their row counts go to `stats` as export.not_written.* so the
// file says what it lacks.

#include "model/trace_model.h"

#include <string>

struct sqlite3;

namespace tuneup::analysis {

// Creates the schema in `db` (which must hold no tables) and fills it, in one transaction.
// Throws std::runtime_error with SQLite's message on failure.
void writeTuneupSchema(const TraceModel& model, sqlite3* db);

// Writes a new tuneup file at `path` (via `path`.partial, renamed when complete, so a failed write
// never leaves a truncated trace under the final name). Throws std::runtime_error naming the file
// when it exists already or cannot be written.
void writeTuneupFile(const TraceModel& model, const std::string& path);

} // namespace tuneup::analysis
