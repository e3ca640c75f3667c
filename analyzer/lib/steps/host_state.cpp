#include "steps/host_state.h"

#include "saturating.h"

#include <algorithm>
#include <map>

namespace tuneup::analysis {

namespace {

struct Syscall {
    int x86_64, aarch64;
    std::string_view name;
    HostActivity activity;
};

// The calls a training thread blocks in, with their numbers on the two architectures GPUs train on
// (arch/x86/entry/syscalls/syscall_64.tbl; aarch64 uses include/uapi/asm-generic/unistd.h). -1: none.
constexpr Syscall kSyscalls[] = {
    { 202, 98, "futex", HostActivity::Lock },
    { 449, 449, "futex_waitv", HostActivity::Lock },
    { 0, 63, "read", HostActivity::Pipe },
    { 17, 67, "pread64", HostActivity::Pipe },
    { 19, 65, "readv", HostActivity::Pipe },
    { 7, -1, "poll", HostActivity::Pipe },
    { 271, 73, "ppoll", HostActivity::Pipe },
    { 23, -1, "select", HostActivity::Pipe },
    { 270, 72, "pselect6", HostActivity::Pipe },
    { 232, -1, "epoll_wait", HostActivity::Pipe },
    { 281, 22, "epoll_pwait", HostActivity::Pipe },
    { 441, 441, "epoll_pwait2", HostActivity::Pipe },
    { 45, 207, "recvfrom", HostActivity::Pipe },
    { 47, 212, "recvmsg", HostActivity::Pipe },
    { 35, 101, "nanosleep", HostActivity::Sleep },
    { 230, 115, "clock_nanosleep", HostActivity::Sleep },
    { 24, 124, "sched_yield", HostActivity::Sleep },
    { 61, 260, "wait4", HostActivity::Child },
    { 247, 95, "waitid", HostActivity::Child },
    { 16, 29, "ioctl", HostActivity::Driver },
    { 1, 64, "write", HostActivity::OtherWait },
};

const Syscall* findSyscall(std::string_view machine, int number) {
    if (number < 0) return nullptr;
    const bool arm = machine == "aarch64" || machine == "arm64";
    if (!arm && machine != "x86_64" && !machine.empty()) return nullptr;
    for (const Syscall& s : kSyscalls)
        if ((arm ? s.aarch64 : s.x86_64) == number) return &s;
    return nullptr;
}

} // namespace

std::string_view syscallName(std::string_view machine, int syscall) {
    const Syscall* s = findSyscall(machine, syscall);
    return s ? s->name : std::string_view();
}

HostActivity classifyHostState(std::string_view machine, char state, int syscall) {
    // In user space, or runnable: working (a thread in a system call that is 'R' is working in the kernel).
    if (state == 'R' || syscall == -1) return HostActivity::Running;
    if (const Syscall* s = findSyscall(machine, syscall)) return s->activity;
    return state == '?' ? HostActivity::Unknown : HostActivity::OtherWait;
}

std::string_view hostActivityName(HostActivity activity) {
    switch (activity) {
    case HostActivity::Unknown:
        return "unknown";
    case HostActivity::Running:
        return "running";
    case HostActivity::Lock:
        return "lock";
    case HostActivity::Pipe:
        return "pipe";
    case HostActivity::Sleep:
        return "sleep";
    case HostActivity::Child:
        return "child";
    case HostActivity::Driver:
        return "driver";
    case HostActivity::OtherWait:
        return "other wait";
    }
    return "unknown";
}

std::string describeHostTime(const HostTime& ns) {
    static constexpr std::string_view kWords[kHostActivities]
        = { "unknown", "running", "waiting on a lock", "waiting to read (pipe, socket, file)", "sleeping",
              "waiting for a child process", "in the driver (ioctl)", "in other system calls" };
    int64_t total = 0;
    for (int64_t v : ns)
        total += v;
    if (total <= 0 || ns[size_t(HostActivity::Unknown)] * 2 > total) return {};
    std::array<size_t, kHostActivities> order {};
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ns[a] > ns[b]; });
    std::string text;
    for (size_t i : order) {
        const int64_t percent = (ns[i] * 100 + total / 2) / total;
        if (i == size_t(HostActivity::Unknown) || percent < 5) continue;
        text += (text.empty() ? "" : ", ") + std::to_string(percent) + "% " + std::string(kWords[i]);
    }
    return text;
}

std::string explainHostTime(const HostTime& ns) {
    int64_t sampled = 0;
    for (size_t i = 1; i < ns.size(); ++i)
        sampled += ns[i];
    if (sampled <= 0 || ns[size_t(HostActivity::Unknown)] * 2 > sampled + ns[size_t(HostActivity::Unknown)]) return {};
    const auto top = size_t(std::max_element(ns.begin() + 1, ns.end()) - ns.begin());
    if (ns[top] * 2 < sampled) return {};
    switch (HostActivity(top)) {
    case HostActivity::Running:
        return "The main thread was running: Python or CPU work between launches, not a wait.";
    case HostActivity::Lock:
        return "The main thread mostly waited on a lock (futex): the GIL held by another thread (a logger, a "
               "metrics or data thread), or a queue between threads.";
    case HostActivity::Pipe:
        return "The main thread mostly waited to read from a pipe, socket or file: another process (DataLoader "
               "workers outside a __next__ range, another rank), a remote store, or storage.";
    case HostActivity::Sleep:
        return "The main thread was mostly sleeping: time.sleep, or a polling loop, inside the step.";
    case HostActivity::Child:
        return "The main thread mostly waited for a child process to end (subprocess, os.system).";
    case HostActivity::Driver:
        return "The main thread was mostly inside a driver call (ioctl): a blocking CUDA call that the trace did "
               "not mark as a synchronisation, or a slow allocation.";
    case HostActivity::OtherWait:
        return "The main thread mostly waited in other system calls (file I/O, for one).";
    case HostActivity::Unknown:
        break;
    }
    return {};
}

std::string describeHostState(const HostState& state, std::string_view machine) {
    if (state.activity == HostActivity::Unknown) return "unknown";
    if (state.activity == HostActivity::Running) return "running";
    std::string call(syscallName(machine, state.syscall));
    if (call.empty() && state.syscall >= 0) call = "system call " + std::to_string(state.syscall);
    const char* verb = state.activity == HostActivity::Sleep ? "sleeping" : "waiting";
    return call.empty() ? std::string(verb) : std::string(verb) + " (" + call + ")";
}

std::optional<ThreadIndex> sampledThread(const TraceModel& model) {
    std::map<ThreadIndex, size_t> rows;
    for (const ThreadIndex thread : model.threadStates.thread)
        ++rows[thread];
    if (rows.empty()) return std::nullopt;
    return std::max_element(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
        return a.second < b.second;
    })->first;
}

HostStateTimeline::HostStateTimeline(const TraceModel& model) {
    const std::optional<ThreadIndex> thread = sampledThread(model);
    if (!thread) return;
    m_thread = *thread;
    const ThreadStateTable& t = model.threadStates;
    for (size_t i = 0; i < t.size(); ++i) {
        if (t.thread[i] != m_thread) continue;
        m_times.push_back(t.timeNs[i]);
        m_states.push_back({ classifyHostState(model.info.machine, t.state[i], t.syscall[i]), int16_t(t.syscall[i]) });
    }
}

template <class F> void HostStateTimeline::forEachPiece(TimeSpan span, F&& f) const {
    // The sample in force at the span's start (the last at or before it), then each later one inside.
    auto it = std::upper_bound(m_times.begin(), m_times.end(), span.startNs);
    size_t i = it == m_times.begin() ? 0 : size_t(it - m_times.begin()) - 1;
    for (; i < m_times.size() && m_times[i] < span.endNs; ++i) {
        const int64_t from = std::max(m_times[i], span.startNs);
        const int64_t to = i + 1 < m_times.size() ? std::min(m_times[i + 1], span.endNs) : span.endNs;
        if (to > from) f(m_states[i], to - from);
    }
}

HostState HostStateTimeline::dominant(TimeSpan span) const {
    // A few distinct states at most inside one gap: a short list beats a map.
    std::array<std::pair<HostState, int64_t>, 8> seen {};
    size_t count = 0;
    forEachPiece(span, [&](const HostState& state, int64_t ns) {
        for (size_t k = 0; k < count; ++k)
            if (seen[k].first == state) {
                seen[k].second += ns;
                return;
            }
        if (count < seen.size()) seen[count++] = { state, ns };
    });
    const auto best = std::max_element(
        seen.begin(), seen.begin() + long(count), [](const auto& a, const auto& b) { return a.second < b.second; });
    return best == seen.begin() + long(count) ? HostState {} : best->first;
}

HostTime HostStateTimeline::timeIn(const std::vector<TimeSpan>& spans) const {
    HostTime ns {};
    for (const TimeSpan& span : spans) {
        int64_t sampled = 0;
        forEachPiece(span, [&](const HostState& state, int64_t d) {
            ns[size_t(state.activity)] = saturatingAdd(ns[size_t(state.activity)], d);
            sampled = saturatingAdd(sampled, d);
        });
        ns[size_t(HostActivity::Unknown)] // before the first sample
            = saturatingAdd(ns[size_t(HostActivity::Unknown)], span.durationNs() - sampled);
    }
    return ns;
}

} // namespace tuneup::analysis
