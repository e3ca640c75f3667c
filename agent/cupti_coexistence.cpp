#include "cupti_coexistence.h"

#include <algorithm>

namespace tuneup::agent {

namespace {

const char* callName(OtherCuptiCall call) {
    switch (call) {
    case OtherCuptiCall::Subscribe:
        return "subscribe";
    case OtherCuptiCall::RegisterBuffers:
        return "activity buffers";
    case OtherCuptiCall::Enable:
        return "enable";
    case OtherCuptiCall::Disable:
        return "disable";
    case OtherCuptiCall::Timestamp:
        return "timestamp callback";
    case OtherCuptiCall::Finalize:
        return "finalize";
    }
    return "?";
}

std::string joined(const std::vector<std::string>& items, const char* separator) {
    std::string out;
    for (const std::string& item : items)
        out += (out.empty() ? "" : separator) + item;
    return out;
}

} // namespace

void CuptiCoexistence::captureStarted(std::vector<Kind> kinds) {
    std::lock_guard lock(m_mutex);
    m_ours = std::move(kinds);
}

bool CuptiCoexistence::lostAnything() const {
    std::lock_guard lock(m_mutex);
    return !m_lost.empty();
}

std::string CuptiCoexistence::kindName(int kind) const {
    for (const Kind& k : m_ours)
        if (k.kind == kind) return k.name;
    return "kind " + std::to_string(kind);
}

CuptiCoexistence::Update CuptiCoexistence::note(
    OtherCuptiCall call, int kind, std::string_view caller, uint64_t nowNs) {
    std::lock_guard lock(m_mutex);
    Update update;
    // What the other client did, by library, each call once: "libtorch_cuda.so: activity buffers, disable".
    std::string what = callName(call);
    if (call == OtherCuptiCall::Enable || call == OtherCuptiCall::Disable) what += " " + kindName(kind);
    const std::string client = caller.empty() ? std::string("unknown library") : std::string(caller);
    auto entry = std::find_if(m_clients.begin(), m_clients.end(),
        [&](const std::string& c) { return c.compare(0, client.size() + 1, client + ":") == 0; });
    if (entry == m_clients.end()) {
        m_clients.push_back(client + ": " + what);
        update.meta.emplace_back("cupti.other_clients", joined(m_clients, "; "));
    } else if (entry->find(what) == std::string::npos) {
        *entry += ", " + what;
        update.meta.emplace_back("cupti.other_clients", joined(m_clients, "; "));
    }
    if (m_ours.empty()) return update; // our capture is off: nothing of ours to lose

    // What of ours it took.
    std::vector<std::string> lostNow;
    std::string why;
    switch (call) {
    case OtherCuptiCall::RegisterBuffers:
    case OtherCuptiCall::Finalize:
        if (call == OtherCuptiCall::RegisterBuffers ? m_buffersTaken : m_finalized) break;
        (call == OtherCuptiCall::RegisterBuffers ? m_buffersTaken : m_finalized) = true;
        update.buffersTaken = true;
        for (const Kind& k : m_ours)
            lostNow.push_back(k.name);
        why = call == OtherCuptiCall::RegisterBuffers ? " took CUPTI's activity buffers" : " detached CUPTI";
        break;
    case OtherCuptiCall::Disable:
        for (const Kind& k : m_ours)
            if (k.kind == kind) lostNow.push_back(k.name);
        if (!lostNow.empty()) why = " disabled " + kindName(kind); // else a kind of its own
        break;
    case OtherCuptiCall::Timestamp:
        if (!m_clockChanged) {
            m_clockChanged = true;
            why = " changed CUPTI's timestamp source";
        }
        break;
    case OtherCuptiCall::Subscribe:
    case OtherCuptiCall::Enable:
        break;
    }
    bool changed = false;
    for (const std::string& name : lostNow)
        if (std::find(m_lost.begin(), m_lost.end(), name) == m_lost.end()) {
            m_lost.push_back(name);
            changed = true;
        }
    if (!changed && why.empty()) return update;
    if (m_lostNs == 0) {
        m_lostNs = nowNs;
        update.meta.emplace_back("capture.cuda.lost_ns", std::to_string(nowNs));
    }
    std::string text = m_lost.empty() ? std::string("the clock of GPU records") : joined(m_lost, ",") + " records";
    text += " after " + std::to_string(m_lostNs) + " ns: another CUPTI client (" + client + ")" + why;
    if (m_clockChanged && !m_lost.empty()) text += "; timestamps changed too";
    text += " (torch.profiler, Nsight, or the program's own CUPTI code); its own trace holds that part";
    update.meta.emplace_back("capture.cuda.lost", text);
    return update;
}

} // namespace tuneup::agent
