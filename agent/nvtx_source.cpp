#include "nvtx_source.h"

#include "agent.h"
#include "bench_control.h"
#include "clock.h"
#include "host_events.h"
#include "log.h"
#include "ring_registry.h"
#include "torch_probe.h"
#include "writer.h"

#include <atomic>
#include <cstring>
#include <cwchar>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace tuneup::agent {

namespace {

// Handles we give out are small integers cast to pointers: the writer stores them as ids.
std::atomic<uint64_t> s_nextHandle { 1 };
std::atomic<uint64_t> s_nextRangeId { 1 };
// Push/pop nesting on this thread, and which of the open pushes were dropped (one bit per level,
// newest in bit 0): the pop of a dropped push is dropped too, so it cannot close the wrong range.
__attribute__((tls_model("initial-exec"))) thread_local int t_depth = 0;
__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_droppedPushes = 0;
// Pushes written whose pop is still to come. Every record but a pop leaves room in the ring for
// their pops (a 32-byte record and at most 16 bytes of padding before it), so the pop of a written
// push is never dropped: a dropped one left its range open and every later range on the thread
// nested in it.
__attribute__((tls_model("initial-exec"))) thread_local uint32_t t_openWritten = 0;
constexpr size_t kPopReserveBytes = 48;

size_t reserveFor(HostEventKind kind) {
    return (size_t(t_openWritten) + (kind == HostEventKind::NvtxPush ? 1 : 0)) * kPopReserveBytes;
}

int notePush(bool written) {
    t_droppedPushes = (t_droppedPushes << 1) | (written ? 0 : 1);
    if (written) ++t_openWritten;
    return t_depth++;
}

// Returns false when this pop's push was dropped.
bool notePop(int& level) {
    if (t_depth == 0) {
        level = -1;
        return true; // unmatched: written, and counted as such by the writer
    }
    level = --t_depth;
    const bool pushDropped = t_droppedPushes & 1;
    t_droppedPushes >>= 1;
    return !pushDropped;
}

// ---- torch probes: sampled on the calling thread, at most every kTorchSampleNs, changes only ----

constexpr uint64_t kTorchSampleNs = 200'000'000;
__attribute__((tls_model("initial-exec"))) thread_local uint64_t t_nextTorchSampleNs = 0;
__attribute__((tls_model("initial-exec"))) thread_local TorchFlags t_lastTorchFlags;
__attribute__((tls_model("initial-exec"))) thread_local bool t_torchFlagsWritten = false;

void emitTorchFlagChanges(uint64_t now) {
    t_nextTorchSampleNs = now + kTorchSampleNs;
    TorchFlags flags;
    if (!config().trace.torch || !readTorchFlags(flags)) return;
    for (size_t i = 0; i < kTorchFlagCount; ++i) {
        if (t_torchFlagsWritten && flags.values[i] == t_lastTorchFlags.values[i]) continue;
        const FrameworkFlagFixed fixed { flags.values[i] };
        if (!RingRegistry::emit(EventSource::Torch, HostEventKind::FrameworkFlag, now, &fixed, sizeof fixed,
                kTorchFlagNames[i], size_t(t_openWritten) * kPopReserveBytes))
            return; // dropped (and counted): try again at the next sample
        t_lastTorchFlags.values[i] = flags.values[i];
    }
    t_torchFlagsWritten = true;
}

// The hot path pays one compare; the probes run when a sample is due.
inline void sampleTorchFlags(uint64_t now) {
    if (now >= t_nextTorchSampleNs) [[unlikely]]
        emitTorchFlagChanges(now);
}

uint64_t domainOf(nvtxDomainHandle_t domain) {
    return uint64_t(reinterpret_cast<uintptr_t>(domain));
}

// Wide NVTX strings are rare (Windows-style APIs): converted to UTF-8 off the fast path.
std::string toUtf8(const wchar_t* text) {
    std::string out;
    if (!text) return out;
    for (; *text; ++text) {
        const uint32_t c = uint32_t(*text);
        if (c < 0x80)
            out += char(c);
        else if (c < 0x800)
            out += { char(0xC0 | (c >> 6)), char(0x80 | (c & 0x3F)) };
        else if (c < 0x10000)
            out += { char(0xE0 | (c >> 12)), char(0x80 | ((c >> 6) & 0x3F)), char(0x80 | (c & 0x3F)) };
        else
            out += { char(0xF0 | (c >> 18)), char(0x80 | ((c >> 12) & 0x3F)), char(0x80 | ((c >> 6) & 0x3F)),
                char(0x80 | (c & 0x3F)) };
    }
    return out;
}

// Fills the fixed part of an event from NVTX attributes; returns the message text, if any.
std::string_view describe(const nvtxEventAttributes_t* attributes, NvtxEventFixed& event, std::string& wideBuffer) {
    event = {};
    if (!attributes) return {};
    event.category = attributes->category;
    if (attributes->colorType == NVTX_COLOR_ARGB) {
        event.hasColor = 1;
        event.color = attributes->color;
    }
    if (attributes->payloadType > 0) {
        event.payloadType = uint8_t(attributes->payloadType);
        static_assert(sizeof attributes->payload == sizeof event.payload);
        memcpy(&event.payload, &attributes->payload, sizeof event.payload);
    }
    switch (attributes->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
        if (attributes->message.ascii) {
            event.messageKind = MessageKind::Text;
            return attributes->message.ascii;
        }
        break;
    case NVTX_MESSAGE_TYPE_UNICODE:
        if (attributes->message.unicode) {
            event.messageKind = MessageKind::Text;
            wideBuffer = toUtf8(attributes->message.unicode);
            return wideBuffer;
        }
        break;
    case NVTX_MESSAGE_TYPE_REGISTERED:
        event.messageKind = MessageKind::Registered;
        event.registeredId = uint64_t(reinterpret_cast<uintptr_t>(attributes->message.registered));
        break;
    default:
        break;
    }
    return {};
}

bool emitEvent(HostEventKind kind, uint64_t domain, uint64_t rangeId, const nvtxEventAttributes_t* attributes,
    EventSource source = EventSource::Nvtx) {
    const uint64_t now = nowNs();
    sampleTorchFlags(now);
    NvtxEventFixed event;
    std::string wide;
    const std::string_view text = describe(attributes, event, wide);
    event.domain = domain;
    event.rangeId = rangeId;
    return RingRegistry::emit(source, kind, now, &event, sizeof event, text, reserveFor(kind));
}

bool emitText(HostEventKind kind, uint64_t timeNs, const char* text) {
    sampleTorchFlags(timeNs);
    NvtxEventFixed event {};
    event.messageKind = MessageKind::Text;
    return RingRegistry::emit(EventSource::Nvtx, kind, timeNs, &event, sizeof event,
        text ? std::string_view(text) : std::string_view(), reserveFor(kind));
}

void emitScope(HostEventKind kind, uint64_t domain, uint64_t rangeId, EventSource source = EventSource::Nvtx) {
    const NvtxScopeFixed scope { domain, rangeId };
    RingRegistry::emit(source, kind, nowNs(), &scope, sizeof scope, {}, reserveFor(kind));
}

int push(uint64_t domain, const nvtxEventAttributes_t* attributes, EventSource source = EventSource::Nvtx) {
    if (benchControlled()) [[unlikely]]
        benchNotePush(attributes && attributes->messageType == NVTX_MESSAGE_TYPE_ASCII && attributes->message.ascii
                ? std::string_view(attributes->message.ascii)
                : std::string_view(),
            t_depth);
    return notePush(emitEvent(HostEventKind::NvtxPush, domain, 0, attributes, source));
}

int pop(uint64_t domain, EventSource source = EventSource::Nvtx) {
    int level;
    if (notePop(level)) {
        if (level >= 0 && t_openWritten > 0) --t_openWritten; // before the write: the pop may use the room kept for it
        emitScope(HostEventKind::NvtxPop, domain, 0, source);
    } else
        RingRegistry::countDropped(source);
    if (benchControlled()) [[unlikely]]
        benchNotePop(level); // may end the process: after the pop is recorded
    return level;
}

void emitName(HostEventKind kind, uint64_t domain, uint64_t id, std::string_view name) {
    const NvtxNameFixed fixed { domain, id };
    RingRegistry::emit(EventSource::Nvtx, kind, nowNs(), &fixed, sizeof fixed, name, reserveFor(kind));
}

// ---- CORE -------------------------------------------------------------------------------------

void NVTX_API markEx(const nvtxEventAttributes_t* a) {
    emitEvent(HostEventKind::NvtxMark, 0, 0, a);
}
void NVTX_API markA(const char* message) {
    emitText(HostEventKind::NvtxMark, nowNs(), message);
}
void NVTX_API markW(const wchar_t* message) {
    emitText(HostEventKind::NvtxMark, nowNs(), toUtf8(message).c_str());
}

nvtxRangeId_t NVTX_API rangeStartEx(const nvtxEventAttributes_t* a) {
    const uint64_t id = s_nextRangeId.fetch_add(1, std::memory_order_relaxed);
    emitEvent(HostEventKind::NvtxStart, 0, id, a);
    return id;
}

nvtxRangeId_t NVTX_API rangeStartA(const char* message) {
    const uint64_t now = nowNs();
    sampleTorchFlags(now);
    const uint64_t id = s_nextRangeId.fetch_add(1, std::memory_order_relaxed);
    NvtxEventFixed event {};
    event.messageKind = MessageKind::Text;
    event.rangeId = id;
    RingRegistry::emit(EventSource::Nvtx, HostEventKind::NvtxStart, now, &event, sizeof event, message ? message : "",
        reserveFor(HostEventKind::NvtxStart));
    return id;
}

nvtxRangeId_t NVTX_API rangeStartW(const wchar_t* message) {
    return rangeStartA(toUtf8(message).c_str());
}

void NVTX_API rangeEnd(nvtxRangeId_t id) {
    emitScope(HostEventKind::NvtxEnd, 0, id);
}

int NVTX_API rangePushEx(const nvtxEventAttributes_t* a) {
    return push(0, a);
}

int NVTX_API rangePushA(const char* message) {
    if (benchControlled()) [[unlikely]]
        benchNotePush(message ? std::string_view(message) : std::string_view(), t_depth);
    return notePush(emitText(HostEventKind::NvtxPush, nowNs(), message));
}

int NVTX_API rangePushW(const wchar_t* message) {
    return rangePushA(toUtf8(message).c_str());
}

int NVTX_API rangePop() {
    return pop(0);
}

void NVTX_API nameCategoryA(uint32_t category, const char* name) {
    emitName(HostEventKind::NvtxCategoryName, 0, category, name ? name : "");
}
void NVTX_API nameCategoryW(uint32_t category, const wchar_t* name) {
    nameCategoryA(category, toUtf8(name).c_str());
}

void NVTX_API nameOsThreadA(uint32_t threadId, const char* name) {
    emitName(HostEventKind::NvtxThreadName, 0, threadId, name ? name : "");
}
void NVTX_API nameOsThreadW(uint32_t threadId, const wchar_t* name) {
    nameOsThreadA(threadId, toUtf8(name).c_str());
}

// ---- CORE2 (domains) ----------------------------------------------------------------------------

void NVTX_API domainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    emitEvent(HostEventKind::NvtxMark, domainOf(d), 0, a);
}

nvtxRangeId_t NVTX_API domainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    const uint64_t id = s_nextRangeId.fetch_add(1, std::memory_order_relaxed);
    emitEvent(HostEventKind::NvtxStart, domainOf(d), id, a);
    return id;
}

void NVTX_API domainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) {
    emitScope(HostEventKind::NvtxEnd, domainOf(d), id);
}

int NVTX_API domainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
    return push(domainOf(d), a);
}

int NVTX_API domainRangePop(nvtxDomainHandle_t d) {
    return pop(domainOf(d));
}

nvtxResourceHandle_t NVTX_API domainResourceCreate(nvtxDomainHandle_t, nvtxResourceAttributes_t*) {
    // Resource naming is not recorded in schema v1; a non-null handle keeps callers happy.
    return reinterpret_cast<nvtxResourceHandle_t>(uintptr_t(s_nextHandle.fetch_add(1)));
}
void NVTX_API domainResourceDestroy(nvtxResourceHandle_t) {
}

void NVTX_API domainNameCategoryA(nvtxDomainHandle_t d, uint32_t category, const char* name) {
    emitName(HostEventKind::NvtxCategoryName, domainOf(d), category, name ? name : "");
}
void NVTX_API domainNameCategoryW(nvtxDomainHandle_t d, uint32_t category, const wchar_t* name) {
    domainNameCategoryA(d, category, toUtf8(name).c_str());
}

nvtxStringHandle_t NVTX_API domainRegisterStringA(nvtxDomainHandle_t d, const char* text) {
    const uint64_t id = s_nextHandle.fetch_add(1, std::memory_order_relaxed);
    emitName(HostEventKind::NvtxStringRegister, domainOf(d), id, text ? text : "");
    return reinterpret_cast<nvtxStringHandle_t>(uintptr_t(id));
}
nvtxStringHandle_t NVTX_API domainRegisterStringW(nvtxDomainHandle_t d, const wchar_t* text) {
    return domainRegisterStringA(d, toUtf8(text).c_str());
}

// Every library that uses NVTX creates its own handle for a shared domain name: one id per name
// keeps a domain's events together. Rare call, so a lock is fine here.
std::mutex& domainMutex() {
    static auto* mutex = new std::mutex;
    return *mutex;
}

// Domain name -> handle, under domainMutex(). Forked children inherit it (nvtxDomainName).
std::unordered_map<std::string, uint64_t>& domainIds() {
    static auto* ids = new std::unordered_map<std::string, uint64_t>;
    return *ids;
}

nvtxDomainHandle_t NVTX_API domainCreateA(const char* name) {
    auto* ids = &domainIds();
    const std::string key = name ? name : "";
    uint64_t id;
    bool created = false;
    {
        std::lock_guard lock(domainMutex());
        auto [it, inserted] = ids->emplace(key, 0);
        if (inserted) it->second = s_nextHandle.fetch_add(1, std::memory_order_relaxed);
        id = it->second;
        created = inserted;
    }
    if (created) emitName(HostEventKind::NvtxDomainCreate, id, id, key);
    return reinterpret_cast<nvtxDomainHandle_t>(uintptr_t(id));
}
nvtxDomainHandle_t NVTX_API domainCreateW(const wchar_t* name) {
    return domainCreateA(toUtf8(name).c_str());
}
void NVTX_API domainDestroy(nvtxDomainHandle_t) {
}
void NVTX_API initialize(const void*) {
}

template <typename F> void install(NvtxFunctionTable table, unsigned size, unsigned id, F function) {
    if (table && id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(function);
}

std::atomic<bool> s_announced { false };

// The Python bootstrap's domain: created once, on first use.
nvtxDomainHandle_t bootstrapDomain() {
    static const nvtxDomainHandle_t domain = domainCreateA("tuneup");
    return domain;
}

} // namespace

bool bootstrapRecording() {
    if (!ensureStarted() || !config().trace.nvtx) return false;
    if (!s_announced.exchange(true)) Writer::setMeta("capture.nvtx", "on");
    return true;
}

int bootstrapRangePush(const char* name) {
    if (!bootstrapRecording()) return -1;
    nvtxEventAttributes_t a {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name ? name : "";
    return push(domainOf(bootstrapDomain()), &a, EventSource::Python);
}

int bootstrapRangePop() {
    return bootstrapRecording() ? pop(domainOf(bootstrapDomain()), EventSource::Python) : -1;
}

void bootstrapMark(const char* name, int64_t value) {
    if (!bootstrapRecording()) return;
    nvtxEventAttributes_t a {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name ? name : "";
    a.payloadType = NVTX_PAYLOAD_TYPE_INT64;
    a.payload.llValue = value;
    emitEvent(HostEventKind::NvtxMark, domainOf(bootstrapDomain()), 0, &a, EventSource::Python);
}

bool nvtxAttached() {
    return s_announced.load();
}

std::optional<std::string> nvtxDomainName(uint64_t handle) {
    // try_lock: in a forked child the lock may have been held by a parent thread that is gone; the
    // name is then unknown, which beats hanging the child's writer.
    std::unique_lock lock(domainMutex(), std::try_to_lock);
    if (!lock.owns_lock()) return std::nullopt;
    for (const auto& [name, id] : domainIds())
        if (id == handle) return name;
    return std::nullopt;
}

size_t openRangeReserveBytes() {
    return size_t(t_openWritten) * kPopReserveBytes;
}

int attachNvtx(NvtxGetExportTableFunc_t getExportTable) {
    if (!ensureStarted() || !config().trace.nvtx || !getExportTable) return 0;
    auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(getExportTable(NVTX_ETID_CALLBACKS));
    if (!callbacks || !callbacks->GetModuleFunctionTable) {
        TUNEUP_LOG(Warn, "NVTX gave no callback table; NVTX ranges are not recorded from one library");
        return 0;
    }
    NvtxFunctionTable table = nullptr;
    unsigned size = 0;
    if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size)) {
        install(table, size, NVTX_CBID_CORE_MarkEx, markEx);
        install(table, size, NVTX_CBID_CORE_MarkA, markA);
        install(table, size, NVTX_CBID_CORE_MarkW, markW);
        install(table, size, NVTX_CBID_CORE_RangeStartEx, rangeStartEx);
        install(table, size, NVTX_CBID_CORE_RangeStartA, rangeStartA);
        install(table, size, NVTX_CBID_CORE_RangeStartW, rangeStartW);
        install(table, size, NVTX_CBID_CORE_RangeEnd, rangeEnd);
        install(table, size, NVTX_CBID_CORE_RangePushEx, rangePushEx);
        install(table, size, NVTX_CBID_CORE_RangePushA, rangePushA);
        install(table, size, NVTX_CBID_CORE_RangePushW, rangePushW);
        install(table, size, NVTX_CBID_CORE_RangePop, rangePop);
        install(table, size, NVTX_CBID_CORE_NameCategoryA, nameCategoryA);
        install(table, size, NVTX_CBID_CORE_NameCategoryW, nameCategoryW);
        install(table, size, NVTX_CBID_CORE_NameOsThreadA, nameOsThreadA);
        install(table, size, NVTX_CBID_CORE_NameOsThreadW, nameOsThreadW);
    }
    if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size)) {
        install(table, size, NVTX_CBID_CORE2_DomainMarkEx, domainMarkEx);
        install(table, size, NVTX_CBID_CORE2_DomainRangeStartEx, domainRangeStartEx);
        install(table, size, NVTX_CBID_CORE2_DomainRangeEnd, domainRangeEnd);
        install(table, size, NVTX_CBID_CORE2_DomainRangePushEx, domainRangePushEx);
        install(table, size, NVTX_CBID_CORE2_DomainRangePop, domainRangePop);
        install(table, size, NVTX_CBID_CORE2_DomainResourceCreate, domainResourceCreate);
        install(table, size, NVTX_CBID_CORE2_DomainResourceDestroy, domainResourceDestroy);
        install(table, size, NVTX_CBID_CORE2_DomainNameCategoryA, domainNameCategoryA);
        install(table, size, NVTX_CBID_CORE2_DomainNameCategoryW, domainNameCategoryW);
        install(table, size, NVTX_CBID_CORE2_DomainRegisterStringA, domainRegisterStringA);
        install(table, size, NVTX_CBID_CORE2_DomainRegisterStringW, domainRegisterStringW);
        install(table, size, NVTX_CBID_CORE2_DomainCreateA, domainCreateA);
        install(table, size, NVTX_CBID_CORE2_DomainCreateW, domainCreateW);
        install(table, size, NVTX_CBID_CORE2_DomainDestroy, domainDestroy);
        install(table, size, NVTX_CBID_CORE2_Initialize, initialize);
    }
    if (!s_announced.exchange(true)) Writer::setMeta("capture.nvtx", "on");
    return 1;
}

} // namespace tuneup::agent
