#pragma once
// What an Nsight Systems export says about its capture rather than its events: the export's metadata
// (nsys version, command line, host, rank), the machine's GPUs, the tables the import left out, and why
// an export without CUDA activity has nothing to advise on. Internal to the nsys importer.

#include "import/nsys_db.h"
#include "model/trace_builder.h"

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

namespace tuneup::analysis {

// The export's own facts into `info`: nsys version, export schema, when the capture started, what ran
// (command line, host, RANK / WORLD_SIZE). Returns the capture's COLLECT_CUDA_TRACE setting, "" when
// the export does not say.
std::string readNsysMetadata(NsysDb& db, TraceInfo& info);

// GPUs: TARGET_INFO_GPU describes the machine's GPUs by nsys's id; TARGET_INFO_CUDA_DEVICE (newer
// exports) maps each process's CUDA device id, the deviceId of the activity tables, to one of them,
// preferring processes with GPU work (`gpuPids`).
void readNsysDevices(NsysDb& db, const std::set<int64_t>& gpuPids, TraceBuilder& builder);

// Tables with events tuneup does not model (OS runtime calls, sampling, CUDA graphs...): counted in
// `stats`, so the import says what it left out. `readTables` were read (or found unreadable).
void noteNsysTablesNotRead(NsysDb& db, const std::set<std::string>& readTables, ImportStats& stats);

// What the user reads when the export has nothing to advise on.
std::string nsysNoActivityMessage(NsysDb& db, std::string_view cudaTraceSetting);

} // namespace tuneup::analysis
