#include "import/nsys_capture.h"

#include <cstdlib>
#include <map>
#include <optional>

namespace tuneup::analysis {

namespace {

// Tables that describe the capture rather than events: read for facts, or of no use to the advisor.
bool isDescriptionTable(const std::string& t) {
    for (const char* prefix : { "ENUM_", "TARGET_INFO_", "META_DATA_", "ANALYSIS_" })
        if (t.starts_with(prefix)) return true;
    for (const char* name : { "StringIds", "ThreadNames", "ProcessStreams", "PROCESSES", "EXPORT_META_DATA",
             "UnwindMethodType", "DIAGNOSTIC_EVENT", "PROFILER_OVERHEAD" })
        if (t == name) return true;
    return false;
}

} // namespace

std::string readNsysMetadata(NsysDb& db, TraceInfo& info) {
    std::string cudaTraceSetting;
    info.vendor = GpuVendor::Nvidia;
    for (const char* table : { "META_DATA_EXPORT", "EXPORT_META_DATA" })
        if (db.hasTable(table) && db.hasColumn(table, "name") && db.hasColumn(table, "value"))
            db.query(std::string("SELECT t.name, t.value FROM ") + table + " t", std::string("reading ") + table,
                [&](sqlite3_stmt* s) {
                    const std::string_view key = columnText(s, 0), value = columnText(s, 1);
                    if (key == "EXPORT_PRODUCT_VERSION")
                        info.metadata.emplace_back("nsys.version", value);
                    else if (key == "EXPORT_SCHEMA_VERSION")
                        info.metadata.emplace_back("nsys.export_schema_version", value);
                });
    const std::string start = "TARGET_INFO_SESSION_START_TIME";
    if (db.hasTable(start) && db.hasColumn(start, "utcEpochNs"))
        db.query("SELECT t.utcEpochNs FROM " + start + " t LIMIT 1", "reading " + start, [&](sqlite3_stmt* s) {
            if (sqlite3_column_type(s, 0) == SQLITE_INTEGER)
                info.metadata.emplace_back("nsys.session_start_utc_ns", std::to_string(columnInt(s, 0)));
        });
    const std::string capture = "META_DATA_CAPTURE";
    if (!db.hasTable(capture) || !db.hasColumn(capture, "name") || !db.hasColumn(capture, "value"))
        return cudaTraceSetting;
    std::string command;
    std::map<int64_t, std::string> arguments;
    db.query("SELECT t.name, t.value FROM " + capture + " t", "reading " + capture, [&](sqlite3_stmt* s) {
        const std::string_view key = columnText(s, 0), value = columnText(s, 1);
        if (key == "PROCESS_0:COMMAND")
            command = value;
        else if (key.starts_with("PROCESS_0:ARGUMENT_"))
            arguments[std::strtoll(std::string(key.substr(19)).c_str(), nullptr, 10)] = value;
        else if (key == "DEVICE_DISPLAY_NAME")
            info.metadata.emplace_back("host", value);
        else if (key == "PROCESS_0:COLLECT_CUDA_TRACE")
            cudaTraceSetting = value;
        else if (key == "PROCESS_0:ENVIRONMENT_VARIABLE") {
            // torchrun and most launchers tell each process its place in the job.
            const auto number = [&](std::string_view prefix) -> std::optional<int> {
                if (!value.starts_with(prefix)) return std::nullopt;
                std::string digits;
                for (char c : value.substr(prefix.size()))
                    if (c >= '0' && c <= '9' && digits.size() < 9) digits += c;
                return digits.empty() ? std::nullopt : std::optional<int>(std::stoi(digits));
            };
            if (auto rank = number("RANK=")) info.rank = rank;
            if (auto world = number("WORLD_SIZE=")) info.worldSize = world;
        }
    });
    for (const auto& [index, argument] : arguments)
        command += " " + argument;
    if (!command.empty()) info.metadata.emplace_back("command_line", command);
    return cudaTraceSetting;
}

void readNsysDevices(NsysDb& db, const std::set<int64_t>& gpuPids, TraceBuilder& builder) {
    const std::string gpus = "TARGET_INFO_GPU";
    if (!db.hasTable(gpus) || !db.hasColumn(gpus, "id")) return;
    std::map<int64_t, DeviceInfo> byId;
    std::string sql = "SELECT t.id";
    for (const char* c : { "name", "computeMajor", "computeMinor", "smCount", "totalMemory", "threadsPerWarp" })
        sql += ", " + db.columnOr(gpus, c);
    db.query(sql + " FROM " + gpus + " t", "reading " + gpus, [&](sqlite3_stmt* s) {
        DeviceInfo d;
        d.id = toInt32(columnInt(s, 0));
        d.name = std::string(columnText(s, 1));
        d.computeMajor = toInt32(columnInt(s, 2));
        d.computeMinor = toInt32(columnInt(s, 3));
        d.smCount = toInt32(columnInt(s, 4));
        d.globalMemoryBytes = columnInt(s, 5);
        d.warpSize = toInt32(columnInt(s, 6));
        d.vendor = GpuVendor::Nvidia;
        byId.emplace(d.id, d);
    });
    std::map<int64_t, int64_t> cudaToGpu; // first mapping per CUDA id, preferring processes with GPU work
    const std::string map = "TARGET_INFO_CUDA_DEVICE";
    if (db.hasTable(map) && db.hasColumn(map, "gpuId") && db.hasColumn(map, "cudaId")) {
        db.query("SELECT t.cudaId, t.gpuId, " + db.columnOr(map, "pid") + " FROM " + map + " t", "reading " + map,
            [&](sqlite3_stmt* s) {
                const bool active = gpuPids.count(columnInt(s, 2)) > 0;
                if (active || !cudaToGpu.count(columnInt(s, 0))) cudaToGpu[columnInt(s, 0)] = columnInt(s, 1);
            });
    }
    if (cudaToGpu.empty()) {
        for (auto& [id, device] : byId)
            builder.addDevice(device);
        return;
    }
    for (const auto& [cudaId, gpuId] : cudaToGpu)
        if (auto it = byId.find(gpuId); it != byId.end()) {
            DeviceInfo device = it->second;
            device.id = toInt32(cudaId);
            builder.addDevice(device);
        }
}

void noteNsysTablesNotRead(NsysDb& db, const std::set<std::string>& readTables, ImportStats& stats) {
    for (const std::string& t : db.tables()) {
        if (readTables.count(t) || isDescriptionTable(t)) continue;
        if (const int64_t rows = db.rowEstimate(t); rows > 0)
            stats.add("nsys.not_read." + t, StatSeverity::Info, rows, "rows of " + t + ": not used by the advisor");
    }
}

std::string nsysNoActivityMessage(NsysDb& db, std::string_view cudaTraceSetting) {
    std::string held;
    for (const std::string& t : db.tables())
        if (!t.starts_with("ENUM_") && db.rowEstimate(t) > 0) held += (held.empty() ? "" : ", ") + t;
    std::string message = "an Nsight Systems export with no CUDA activity: the capture recorded no kernels, "
                          "memory copies or CUDA API calls, and no NVTX ranges";
    message += held.empty() ? " (every table is empty)" : " (it holds only " + held + ")";
    if (cudaTraceSetting == "false") message += "; CUDA tracing was off in this capture";
    message += "; profile again with CUDA tracing while the program uses the GPU (`nsys profile --trace=cuda,nvtx "
               "-o report python train.py`, then `nsys export --type sqlite report.nsys-rep`), or record it with "
               "`tuneup record -o run.db -- python train.py`";
    return message;
}

} // namespace tuneup::analysis
