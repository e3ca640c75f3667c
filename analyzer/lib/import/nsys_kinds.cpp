#include "import/nsys_kinds.h"

#include "import/nsys_db.h"

#include <string>
#include <utility>

namespace tuneup::analysis {

namespace {

// nsys's numbering as documented for export schemas 2.x and 3.x, for exports without ENUM_* tables.
const std::pair<std::string_view, MemoryKind> kMemoryKinds[] = { { "PAGEABLE", MemoryKind::Pageable },
    { "PINNED", MemoryKind::Pinned }, { "DEVICE", MemoryKind::Device }, { "ARRAY", MemoryKind::Array },
    { "MANAGED", MemoryKind::Managed }, { "DEVICE_STATIC", MemoryKind::DeviceStatic },
    { "MANAGED_STATIC", MemoryKind::ManagedStatic }, { "UNKNOWN", MemoryKind::Unknown } };
const std::pair<std::string_view, CopyKind> kCopyKinds[] = { { "UNKNOWN", CopyKind::Unknown },
    { "HTOD", CopyKind::HtoD }, { "DTOH", CopyKind::DtoH }, { "HTOA", CopyKind::HtoA }, { "ATOH", CopyKind::AtoH },
    { "ATOA", CopyKind::AtoA }, { "ATOD", CopyKind::AtoD }, { "DTOA", CopyKind::DtoA }, { "DTOD", CopyKind::DtoD },
    { "HTOH", CopyKind::HtoH }, { "PTOP", CopyKind::PtoP },
    // Unified-memory migrations are copies in the same directions.
    { "UVM_HTOD", CopyKind::HtoD }, { "UVM_DTOH", CopyKind::DtoH }, { "UVM_DTOD", CopyKind::DtoD } };
const std::pair<std::string_view, SyncType> kSyncTypes[] = { { "UNKNOWN", SyncType::Unknown },
    { "EVENT_SYNCHRONIZE", SyncType::EventSynchronize }, { "STREAM_WAIT_EVENT", SyncType::StreamWaitEvent },
    { "STREAM_SYNCHRONIZE", SyncType::StreamSynchronize }, { "CONTEXT_SYNCHRONIZE", SyncType::ContextSynchronize } };
// ENUM_NSYS_EVENT_TYPE ids (stable since schema 2); "Nvtxt" are the same events from NVTXT files.
const std::pair<int64_t, std::string_view> kNvtxTypes[]
    = { { 34, "NvtxMark" }, { 59, "NvtxPushPopRange" }, { 60, "NvtxStartEndRange" }, { 75, "NvtxDomainCreate" },
          { 39, "NvtxThread" }, { 65, "NvtxtMark" }, { 70, "NvtxtPushPopRange" }, { 71, "NvtxtStartEndRange" } };

NvtxEventKind nvtxKindByName(std::string_view name) {
    if (name == "NvtxMark" || name == "NvtxtMark") return NvtxEventKind::Mark;
    if (name == "NvtxPushPopRange" || name == "NvtxtPushPopRange") return NvtxEventKind::PushPopRange;
    if (name == "NvtxStartEndRange" || name == "NvtxtStartEndRange") return NvtxEventKind::StartEndRange;
    if (name == "NvtxDomainCreate") return NvtxEventKind::DomainCreate;
    if (name == "NvtxThread") return NvtxEventKind::ThreadName;
    return NvtxEventKind::Other;
}

// Reads ENUM table `table` (id, name) and maps each name that ends with one of `names` (after a '_',
// the longest match winning) to its value. False when the table is absent or empty.
template <class T, size_t N>
bool readEnum(NsysDb& db, const std::string& table, const std::pair<std::string_view, T> (&names)[N],
    std::unordered_map<int64_t, T>& out) {
    if (!db.hasTable(table) || !db.hasColumn(table, "id") || !db.hasColumn(table, "name")) return false;
    db.query("SELECT id, name FROM \"" + table + "\"", "reading " + table, [&](sqlite3_stmt* s) {
        const std::string_view name = columnText(s, 1);
        size_t best = 0;
        for (const auto& [suffix, value] : names)
            if (suffix.size() > best && name.size() > suffix.size() && name.ends_with(suffix)
                && name[name.size() - suffix.size() - 1] == '_') {
                best = suffix.size();
                out[columnInt(s, 0)] = value;
            }
    });
    return !out.empty();
}

} // namespace

NsysKinds NsysKinds::read(NsysDb& db) {
    NsysKinds k;
    if (!readEnum(db, "ENUM_CUDA_MEM_KIND", kMemoryKinds, k.m_memory))
        for (int64_t code = 0; code < 8; ++code) // 0 pageable .. 6 managed static, 7 unknown
            k.m_memory[code] = kMemoryKinds[code].second;
    if (!readEnum(db, "ENUM_CUDA_MEMCPY_OPER", kCopyKinds, k.m_copy))
        for (int64_t code = 0; code < int64_t(std::size(kCopyKinds)); ++code)
            k.m_copy[code] = kCopyKinds[code].second;
    if (!readEnum(db, "ENUM_CUPTI_SYNC_TYPE", kSyncTypes, k.m_sync))
        for (int64_t code = 0; code < int64_t(std::size(kSyncTypes)); ++code)
            k.m_sync[code] = kSyncTypes[code].second;

    const std::string events = "ENUM_NSYS_EVENT_TYPE";
    if (db.hasTable(events) && db.hasColumn(events, "id") && db.hasColumn(events, "name"))
        db.query("SELECT id, name FROM " + events, "reading " + events, [&](sqlite3_stmt* s) {
            if (const NvtxEventKind kind = nvtxKindByName(columnText(s, 1)); kind != NvtxEventKind::Other)
                k.m_nvtx[columnInt(s, 0)] = kind;
        });
    if (k.m_nvtx.empty())
        for (const auto& [code, name] : kNvtxTypes)
            k.m_nvtx[code] = nvtxKindByName(name);

    // Event classes: 0 CUDA runtime, 1 CUDA driver, 13 CUDA EGL driver; the enum table names them too.
    const std::string classes = "ENUM_NSYS_EVENT_CLASS";
    if (db.hasTable(classes) && db.hasColumn(classes, "id") && db.hasColumn(classes, "name"))
        db.query("SELECT id, name FROM " + classes, "reading " + classes, [&](sqlite3_stmt* s) {
            if (columnText(s, 1).find("CUDA_DRIVER") != std::string_view::npos
                || columnText(s, 1).find("CUDA_EGL_DRIVER") != std::string_view::npos)
                k.m_apiClass[columnInt(s, 0)] = ApiKind::Driver;
        });
    if (k.m_apiClass.empty()) k.m_apiClass = { { 1, ApiKind::Driver }, { 13, ApiKind::Driver } };
    return k;
}

std::string_view nsysApiName(std::string_view name) {
    const size_t tag = name.rfind("_v");
    if (tag == std::string_view::npos || name.size() - tag - 2 < 4) return name;
    for (size_t i = tag + 2; i < name.size(); ++i)
        if (name[i] < '0' || name[i] > '9') return name;
    return name.substr(0, tag);
}

} // namespace tuneup::analysis
