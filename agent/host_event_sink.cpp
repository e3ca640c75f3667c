#include "host_event_sink.h"

#include "library_functions.h"
#include "nvtx_source.h"
#include "process_role.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace tuneup::agent {

namespace {
template <typename T> T readFixed(const std::byte* body) {
    T value;
    memcpy(&value, body, sizeof value);
    return value;
}

template <typename T> std::string_view textAfter(const RecordHeader& header, const std::byte* body) {
    return { reinterpret_cast<const char*>(body + sizeof(T)), header.textBytes };
}
} // namespace

HostEventSink::HostEventSink(TraceDb& db, int pid)
    : m_db(db)
    , m_pid(pid)
    , m_nextRangeId(db.maxRangeId() + 1) {
    m_db.addDomain(0, std::nullopt);
    m_knownDomains[0] = true;
}

void HostEventSink::noteThread(int tid) {
    if (!m_knownThreads.emplace(tid, true).second) return;
    m_db.addThread(tid, m_pid);
    // The kernel's name for the thread (pthread_setname_np, Python's threading names on 3.x do
    // not reach it); nvtxNameOsThread, if called, replaces it.
    const std::string path = "/proc/self/task/" + std::to_string(tid) + "/comm";
    if (FILE* f = fopen(path.c_str(), "re")) {
        char name[64] = {};
        if (fgets(name, sizeof name, f)) {
            name[strcspn(name, "\n")] = '\0';
            if (*name) m_db.nameThread(tid, m_pid, m_db.intern(name));
        }
        fclose(f);
    }
}

int64_t HostEventSink::functionName(uint16_t function) {
    if (function >= m_functionNames.size()) m_functionNames.resize(size_t(function) + 1, -1);
    int64_t& id = m_functionNames[function];
    if (id < 0) id = m_db.intern(libraryFunctionName(function));
    return id;
}

int64_t HostEventSink::domainId(uint64_t handle) {
    // Domains made by nvtxDomainCreate carry the agent's id as handle; an unknown handle (made
    // before the agent attached) still gets a row so its events keep their domain apart.
    if (m_knownDomains.emplace(handle, true).second) {
        // A forked child's domains were created in its parent: their names come from the table the
        // child inherited.
        const auto name = nvtxDomainName(handle);
        m_db.addDomain(int64_t(handle), name ? std::optional(m_db.intern(*name)) : std::nullopt);
        if (name && *name == kBootstrapDomain) m_bootstrapDomain = handle;
    }
    return int64_t(handle);
}

std::optional<int64_t> HostEventSink::messageId(const NvtxEventFixed& event, std::string_view text) {
    switch (event.messageKind) {
    case MessageKind::Text:
        return m_db.intern(text);
    case MessageKind::Registered:
        if (auto it = m_registeredStrings.find(event.registeredId); it != m_registeredStrings.end()) return it->second;
        return std::nullopt;
    case MessageKind::None:
        break;
    }
    return std::nullopt;
}

void HostEventSink::consume(int tid, const RecordHeader& header, const std::byte* body) {
    ++m_consumed;
    m_written.add(tid, header.source);
    noteThread(tid);
    switch (header.kind) {
    case HostEventKind::NvtxPush:
    case HostEventKind::NvtxStart: {
        const auto event = readFixed<NvtxEventFixed>(body);
        OpenRange open;
        RangeRow& row = open.row;
        row.id = m_nextRangeId++;
        row.startNs = header.timeNs;
        row.tid = tid;
        row.domainId = domainId(event.domain);
        row.nameId = messageId(event, textAfter<NvtxEventFixed>(header, body));
        row.category = event.category;
        if (event.hasColor) row.color = event.color;
        row.payloadType = event.payloadType;
        row.payloadBits = event.payload;
        if (header.kind == HostEventKind::NvtxPush) {
            row.kind = schema::kRangePushPop;
            auto& stack = m_pushStacks[{ tid, event.domain }];
            row.depth = int(stack.size());
            if (!stack.empty()) row.parentId = stack.back().row.id;
            stack.push_back(open);
        } else {
            row.kind = schema::kRangeStartEnd;
            m_startedRanges[event.rangeId] = open;
        }
        break;
    }
    case HostEventKind::NvtxPop: {
        const auto scope = readFixed<NvtxScopeFixed>(body);
        auto it = m_pushStacks.find({ tid, scope.domain });
        if (it == m_pushStacks.end() || it->second.empty()) {
            ++m_unmatchedEnds;
            break;
        }
        RangeRow row = it->second.back().row;
        it->second.pop_back();
        row.endNs = header.timeNs;
        m_db.addRange(row);
        break;
    }
    case HostEventKind::NvtxEnd: {
        const auto scope = readFixed<NvtxScopeFixed>(body);
        auto it = m_startedRanges.find(scope.rangeId);
        if (it == m_startedRanges.end()) {
            ++m_unmatchedEnds;
            break;
        }
        RangeRow row = it->second.row;
        m_startedRanges.erase(it);
        row.endNs = header.timeNs;
        row.endTid = tid;
        m_db.addRange(row);
        break;
    }
    case HostEventKind::NvtxMark: {
        const auto event = readFixed<NvtxEventFixed>(body);
        MarkRow mark;
        mark.tsNs = header.timeNs;
        mark.tid = tid;
        mark.domainId = domainId(event.domain);
        mark.nameId = messageId(event, textAfter<NvtxEventFixed>(header, body));
        mark.category = event.category;
        if (event.hasColor) mark.color = event.color;
        mark.payloadType = event.payloadType;
        mark.payloadBits = event.payload;
        m_db.addMark(mark);
        // The Python bootstrap says so in a DataLoader worker (it inherited the domain from its parent).
        if (!m_workerNoted && m_bootstrapDomain != 0 && event.domain == m_bootstrapDomain
            && event.messageKind == MessageKind::Text
            && textAfter<NvtxEventFixed>(header, body) == "tuneup.dataloader.worker_id") {
            m_db.setProcessRole(m_pid, processRoleName(ProcessRole::DataLoaderWorker));
            m_workerNoted = true;
        }
        break;
    }
    case HostEventKind::NvtxDomainCreate: {
        const auto name = readFixed<NvtxNameFixed>(body);
        m_knownDomains[name.domain] = true;
        m_db.addDomain(int64_t(name.domain), m_db.intern(textAfter<NvtxNameFixed>(header, body)));
        if (textAfter<NvtxNameFixed>(header, body) == kBootstrapDomain) m_bootstrapDomain = name.domain;
        break;
    }
    case HostEventKind::NvtxStringRegister: {
        const auto name = readFixed<NvtxNameFixed>(body);
        m_registeredStrings[name.id] = m_db.intern(textAfter<NvtxNameFixed>(header, body));
        break;
    }
    case HostEventKind::NvtxCategoryName: {
        const auto name = readFixed<NvtxNameFixed>(body);
        m_db.nameCategory(
            domainId(name.domain), uint32_t(name.id), m_db.intern(textAfter<NvtxNameFixed>(header, body)));
        break;
    }
    case HostEventKind::NvtxThreadName: {
        const auto name = readFixed<NvtxNameFixed>(body);
        m_db.nameThread(int(name.id), m_pid, m_db.intern(textAfter<NvtxNameFixed>(header, body)));
        m_knownThreads[int(name.id)] = true;
        break;
    }
    case HostEventKind::FrameworkFlag: {
        const auto flag = readFixed<FrameworkFlagFixed>(body);
        m_db.addFrameworkFlag(header.timeNs, tid, m_db.intern(textAfter<FrameworkFlagFixed>(header, body)), flag.value);
        break;
    }
    case HostEventKind::GemmCall: {
        const auto call = readFixed<GemmCallFixed>(body);
        m_db.addGemmCall(header.timeNs, tid, functionName(call.function), call);
        break;
    }
    case HostEventKind::ConvCall: {
        const auto call = readFixed<ConvCallFixed>(body);
        m_db.addConvCall(header.timeNs, tid, functionName(call.function), call);
        break;
    }
    case HostEventKind::PythonName: {
        const auto name = readFixed<NvtxNameFixed>(body);
        m_pythonNames[name.id] = m_db.intern(textAfter<NvtxNameFixed>(header, body));
        break;
    }
    case HostEventKind::PythonCall: {
        const auto call = readFixed<PythonCallFixed>(body);
        m_db.addPythonCall(header.timeNs, call.endNs, pythonName(call.call), pythonFrame(call.frame));
        break;
    }
    case HostEventKind::PythonSample:
        m_db.addPythonSample(header.timeNs, pythonFrame(readFixed<PythonFrameFixed>(body)));
        break;
    case HostEventKind::MemoryReading: {
        const auto r = readFixed<MemoryReadingFixed>(body);
        m_db.addAllocatorReading(header.timeNs,
            { tid, r.device, r.sinceNs, r.allocatedBytes, r.reservedBytes, r.peakAllocatedBytes, r.peakReservedBytes });
        break;
    }
    }
}

int64_t HostEventSink::pythonName(int64_t id) const {
    const auto it = m_pythonNames.find(uint64_t(id));
    return it == m_pythonNames.end() ? 0 : it->second;
}

TraceDb::PythonFrameRow HostEventSink::pythonFrame(const PythonFrameFixed& frame) {
    const int tid = int(frame.tid);
    noteThread(tid);
    return { tid, pythonName(frame.file), frame.line, pythonName(frame.function) };
}

void HostEventSink::closeOpenRanges() {
    for (auto& [key, stack] : m_pushStacks)
        for (const OpenRange& open : stack)
            m_db.addRange(open.row);
    m_pushStacks.clear();
    for (auto& [id, open] : m_startedRanges)
        m_db.addRange(open.row);
    m_startedRanges.clear();
}

} // namespace tuneup::agent
