#pragma once
// What a host thread did at a moment, from the agent's sampled thread states (ThreadStateTable):
// running, or blocked in a system call — a lock, a pipe, a sleep, a child, the driver. Tells, for a
// stretch when the GPU idles, a training thread that waits for something from one that works.

#include "model/trace_model.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace tuneup::analysis {

enum class HostActivity : uint8_t {
    Unknown = 0, // no sample covers the time (not a tuneup recording, or sampling was off)
    Running, // on a CPU or ready for one: Python, launching work, CPU computation
    Lock, // futex: a lock (the GIL), a condition variable, a queue between threads
    Pipe, // read, poll, select, epoll, recv: a pipe (DataLoader workers send batches so), socket or file
    Sleep, // nanosleep, clock_nanosleep, sched_yield
    Child, // wait4, waitid: waiting for a child process to end
    Driver, // ioctl: inside a driver call (a blocking CUDA synchronisation)
    OtherWait, // another system call, or sleeping in one not known
};
inline constexpr size_t kHostActivities = 8;

struct HostState {
    HostActivity activity = HostActivity::Unknown;
    int16_t syscall = -2; // as recorded: the machine's number, -1 running in user space, -2 unknown
    bool operator==(const HostState&) const = default;
};

// The name of a system call number on `machine` ("x86_64", "aarch64"): "futex", "read"...; "" when
// not one this analysis knows.
std::string_view syscallName(std::string_view machine, int syscall);
HostActivity classifyHostState(std::string_view machine, char state, int syscall);
// A few words: "running", "waiting (futex)", "waiting (read)", "sleeping (nanosleep)", "unknown".
std::string describeHostState(const HostState& state, std::string_view machine);
std::string_view hostActivityName(HostActivity activity); // "running", "lock", "pipe"...

using HostTime = std::array<int64_t, kHostActivities>; // nanoseconds, indexed by HostActivity
// "70% waiting to read (pipe, socket, file), 25% running": each activity with 5% or more of the sampled time,
// largest first; "" when less than half of the time was sampled.
std::string describeHostTime(const HostTime& ns);
// What it means when one activity holds at least half of the sampled time while the GPU idles: a
// sentence for a finding's detail ("The main thread mostly waited on a lock (futex): …"); "" otherwise.
std::string explainHostTime(const HostTime& ns);

// The sampled thread: the one with the most thread-state rows (the agent samples the main thread only).
std::optional<ThreadIndex> sampledThread(const TraceModel& model);

// One thread's states as a step function of time: each sample holds until that thread's next one.
class HostStateTimeline {
public:
    HostStateTimeline() = default; // no samples
    // The sampledThread's states; empty when there is none.
    explicit HostStateTimeline(const TraceModel& model);
    bool empty() const { return m_times.empty(); }
    ThreadIndex thread() const { return m_thread; }

    // The state that covers most of the span.
    HostState dominant(TimeSpan span) const;
    // Time spent in each activity over the spans, clipped to them; unsampled time counts as Unknown.
    HostTime timeIn(const std::vector<TimeSpan>& spans) const;

private:
    template <class F> void forEachPiece(TimeSpan span, F&& f) const; // f(HostState, ns)
    std::vector<int64_t> m_times;
    std::vector<HostState> m_states;
    ThreadIndex m_thread = 0;
};

} // namespace tuneup::analysis
