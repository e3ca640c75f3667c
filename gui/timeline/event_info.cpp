#include "timeline/event_info.h"

#include "advise/kernel_class.h"
#include "advise/rule_context.h"

#include <cstdio>
#include <cstdlib>

namespace tuneup::gui {

using namespace analysis;

namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

std::string num(int64_t v) {
    return std::to_string(v);
}

// "aten::mm (op)" for a CPU op or API call row, "" when none.
std::string opName(const TraceModel& m, RowIndex op) {
    return op != kNoRow && size_t(op) < m.cpuOps.size() ? std::string(m.str(m.cpuOps.name[size_t(op)])) : std::string();
}
std::string apiName(const TraceModel& m, RowIndex call) {
    return call != kNoRow && size_t(call) < m.apiCalls.size() ? std::string(m.str(m.apiCalls.name[size_t(call)]))
                                                              : std::string();
}

void launchedBy(const TraceModel& m, RowIndex api, RowIndex op, uint64_t correlation, Fields& f) {
    if (correlation) f.emplace_back("correlation", std::to_string(correlation));
    if (const std::string a = apiName(m, api); !a.empty()) f.emplace_back("launched by", a);
    if (const std::string o = opName(m, op); !o.empty()) f.emplace_back("CPU op", o);
}

std::string threadLabel(const TraceModel& m, ThreadIndex t) {
    if (t >= m.threads.size()) return {};
    std::string s = "tid " + std::to_string(m.threads[t].tid) + " (pid " + std::to_string(m.threads[t].pid) + ")";
    if (!m.str(m.threads[t].name).empty()) s += " " + std::string(m.str(m.threads[t].name));
    return s;
}

std::string bandwidth(int64_t bytes, int64_t ns) {
    if (bytes <= 0 || ns <= 0) return {};
    char text[32];
    snprintf(text, sizeof text, "%.1f GB/s", double(bytes) / double(ns));
    return text;
}

} // namespace

std::optional<TimeRange> eventSpan(const TimelineData& data, const EventId& id) {
    if (id.model >= data.modelCount() || id.row < 0) return std::nullopt;
    const TraceModel& m = data.model(id.model);
    const size_t r = size_t(id.row);
    auto from = [r](const auto& table) -> std::optional<TimeRange> {
        if (r >= table.size()) return std::nullopt;
        return TimeRange { table.startNs[r], std::max(table.endNs[r], table.startNs[r]) };
    };
    switch (id.source) {
    case Source::Kernel:
        return from(m.kernels);
    case Source::Memcpy:
        return from(m.memcpys);
    case Source::Memset:
        return from(m.memsets);
    case Source::Sync:
        return from(m.syncs);
    case Source::ApiCall:
        return from(m.apiCalls);
    case Source::CpuOp:
        return from(m.cpuOps);
    case Source::Annotation:
        return from(m.annotations);
    case Source::Collective:
        return from(m.collectives);
    case Source::GemmCall:
        return from(m.gemmCalls);
    case Source::ConvCall:
        return from(m.convCalls);
    case Source::Step: {
        const StepAnalysis* s = data.steps(id.model);
        if (!s || r >= s->detection.steps.size()) return std::nullopt;
        return TimeRange { s->detection.steps[r].startNs, s->detection.steps[r].endNs };
    }
    case Source::IdleGap: {
        const StepAnalysis* s = data.steps(id.model);
        if (!s || r >= s->gaps.size()) return std::nullopt;
        return TimeRange { s->gaps[r].span.startNs, s->gaps[r].span.endNs };
    }
    case Source::GpuAnnotation:
        return from(m.gpuAnnotations);
    case Source::ThreadState:
        return data.threadStateSpan(id.model, id.row);
    case Source::MemoryEvent: // an instant: the allocation or free
        if (r >= m.memoryEvents.size()) return std::nullopt;
        return TimeRange { m.memoryEvents.timeNs[r], m.memoryEvents.timeNs[r] };
    }
    return std::nullopt;
}

EventInfo describeEvent(const TimelineData& data, const EventId& id) {
    EventInfo info;
    const auto span = eventSpan(data, id);
    if (!span) return info;
    info.span = *span;
    const TraceModel& m = data.model(id.model);
    const size_t r = size_t(id.row);
    if (const auto place = data.place(id)) info.track = data.tracks[place->track].title;
    Fields& f = info.fields;
    switch (id.source) {
    case Source::Kernel: {
        const auto& k = m.kernels;
        info.kind = "kernel";
        info.name = m.str(k.name[r]);
        f.emplace_back("class", std::string(kernelClassName(classifyKernel(info.name))));
        if (const Precision p = kernelPrecision(info.name); p != Precision::Unknown)
            f.emplace_back("precision", std::string(precisionName(p)));
        f.emplace_back("device / stream", num(k.device[r]) + " / " + num(k.stream[r]));
        if (k.gridX[r] > 0) f.emplace_back("grid", num(k.gridX[r]) + " × " + num(k.gridY[r]) + " × " + num(k.gridZ[r]));
        if (k.blockX[r] > 0)
            f.emplace_back("block", num(k.blockX[r]) + " × " + num(k.blockY[r]) + " × " + num(k.blockZ[r]));
        if (k.registersPerThread[r] > 0) f.emplace_back("registers / thread", num(k.registersPerThread[r]));
        if (k.sharedMemoryBytes[r] > 0) f.emplace_back("shared memory / block", formatBytes(k.sharedMemoryBytes[r]));
        launchedBy(m, k.apiCall[r], k.cpuOp[r], k.correlation[r], f);
        break;
    }
    case Source::Memcpy: {
        const auto& c = m.memcpys;
        info.kind = "memory copy";
        info.name = "Memcpy " + std::string(copyKindName(c.copyKind[r]));
        f.emplace_back("device / stream", num(c.device[r]) + " / " + num(c.stream[r]));
        if (c.bytes[r] >= 0) f.emplace_back("bytes", formatBytes(c.bytes[r]));
        if (const std::string bw = bandwidth(c.bytes[r], c.endNs[r] - c.startNs[r]); !bw.empty())
            f.emplace_back("bandwidth", bw);
        f.emplace_back("source memory", std::string(memoryKindName(c.srcKind[r])));
        f.emplace_back("destination memory", std::string(memoryKindName(c.dstKind[r])));
        launchedBy(m, c.apiCall[r], c.cpuOp[r], c.correlation[r], f);
        break;
    }
    case Source::Memset: {
        const auto& s = m.memsets;
        info.kind = "memset";
        info.name = "Memset";
        f.emplace_back("device / stream", num(s.device[r]) + " / " + num(s.stream[r]));
        if (s.bytes[r] >= 0) f.emplace_back("bytes", formatBytes(s.bytes[r]));
        f.emplace_back("memory", std::string(memoryKindName(s.memoryKind[r])));
        launchedBy(m, s.apiCall[r], s.cpuOp[r], s.correlation[r], f);
        break;
    }
    case Source::Sync: {
        const auto& s = m.syncs;
        info.kind = "synchronisation";
        info.name = std::string(syncTypeName(s.type[r]));
        f.emplace_back("device / stream", num(s.device[r]) + " / " + num(s.stream[r]));
        if (const std::string a = apiName(m, s.apiCall[r]); !a.empty()) f.emplace_back("CUDA call", a);
        break;
    }
    case Source::ApiCall: {
        const auto& a = m.apiCalls;
        info.kind = a.api[r] == ApiKind::Driver ? "CUDA driver call" : "CUDA runtime call";
        info.name = m.str(a.name[r]);
        f.emplace_back("thread", threadLabel(m, a.thread[r]));
        if (a.correlation[r]) {
            f.emplace_back("correlation", std::to_string(a.correlation[r]));
            if (const auto k = m.kernelByCorrelation(a.correlation[r]))
                f.emplace_back("launched", std::string(m.str(m.kernels.name[size_t(*k)])));
        }
        if (const std::string o = opName(m, a.cpuOp[r]); !o.empty()) f.emplace_back("CPU op", o);
        break;
    }
    case Source::CpuOp: {
        const auto& o = m.cpuOps;
        info.kind = "CPU op";
        info.name = m.str(o.name[r]);
        f.emplace_back("thread", threadLabel(m, o.thread[r]));
        if (!m.str(o.inputDims[r]).empty()) f.emplace_back("input dims", std::string(m.str(o.inputDims[r])));
        if (!m.str(o.inputTypes[r]).empty()) f.emplace_back("input types", std::string(m.str(o.inputTypes[r])));
        if (o.sequenceNumber[r] >= 0) f.emplace_back("sequence number", num(o.sequenceNumber[r]));
        if (const std::string p = opName(m, o.parent[r]); !p.empty()) f.emplace_back("parent", p);
        break;
    }
    case Source::Annotation: {
        const auto& a = m.annotations;
        info.kind = isDataLoaderWait(m.str(a.name[r])) ? "DataLoader wait" : "range";
        info.name = m.str(a.name[r]);
        f.emplace_back("thread", threadLabel(m, a.thread[r]));
        f.emplace_back("depth", num(a.depth[r]));
        if (a.parent[r] != kNoRow && size_t(a.parent[r]) < a.size())
            f.emplace_back("in", std::string(m.str(a.name[size_t(a.parent[r])])));
        break;
    }
    case Source::Collective: {
        const auto& c = m.collectives;
        info.kind = "collective";
        info.name = m.str(c.name[r]);
        if (c.inNelems[r] >= 0) f.emplace_back("elements in / out", num(c.inNelems[r]) + " / " + num(c.outNelems[r]));
        if (!m.str(c.dtype[r]).empty()) f.emplace_back("dtype", std::string(m.str(c.dtype[r])));
        if (c.groupSize[r] >= 0) f.emplace_back("group size", num(c.groupSize[r]));
        break;
    }
    case Source::GemmCall: {
        const auto& g = m.gemmCalls;
        info.kind = "cuBLAS call";
        info.name = m.str(g.name[r]);
        f.emplace_back("thread", threadLabel(m, g.thread[r]));
        f.emplace_back("m × n × k", num(g.m[r]) + " × " + num(g.n[r]) + " × " + num(g.k[r]));
        if (g.batch[r] != 1) f.emplace_back("batch", num(g.batch[r]));
        f.emplace_back("lda / ldb / ldc", num(g.lda[r]) + " / " + num(g.ldb[r]) + " / " + num(g.ldc[r]));
        break;
    }
    case Source::ConvCall: {
        const auto& c = m.convCalls;
        info.kind = "cuDNN call";
        info.name = m.str(c.name[r]);
        f.emplace_back("thread", threadLabel(m, c.thread[r]));
        f.emplace_back("input n, c, h, w", num(c.n[r]) + ", " + num(c.c[r]) + ", " + num(c.h[r]) + ", " + num(c.w[r]));
        f.emplace_back(
            "filter k, c, r, s", num(c.k[r]) + ", " + num(c.filterC[r]) + ", " + num(c.r[r]) + ", " + num(c.s[r]));
        if (c.algo[r] >= 0) f.emplace_back("algorithm", num(c.algo[r]));
        break;
    }
    case Source::Step: {
        const StepAnalysis& s = *data.steps(id.model);
        const Step& step = s.detection.steps[r];
        info.kind = "step";
        info.name = step.annotation != kNoRow && size_t(step.annotation) < m.annotations.size()
            ? std::string(m.str(m.annotations.name[size_t(step.annotation)]))
            : "step " + std::to_string(step.number);
        f.emplace_back("found from", std::string(stepSourceName(s.detection.source)));
        if (r < s.perStep.size() && !s.gpuActivity()) {
            const StepBreakdown& b = s.perStep[r];
            f.emplace_back("CPU only", "no GPU activity recorded");
            f.emplace_back("waiting for data", formatDuration(b.idleDataNs));
            f.emplace_back("other work", formatDuration(b.idleHostNs));
        } else if (r < s.perStep.size()) {
            const StepBreakdown& b = s.perStep[r];
            f.emplace_back("GPU compute", formatDuration(b.computeNs));
            if (b.communicationNs) f.emplace_back("communication", formatDuration(b.communicationNs));
            f.emplace_back("copies", formatDuration(b.memcpyNs));
            f.emplace_back("memset", formatDuration(b.memsetNs));
            f.emplace_back("GPU idle", formatDuration(b.idleNs));
            if (b.idleGraphNs) f.emplace_back("... inside CUDA graph replays", formatDuration(b.idleGraphNs));
        }
        break;
    }
    case Source::GpuAnnotation: {
        const auto& a = m.gpuAnnotations;
        info.kind = "range on the GPU";
        info.name = m.str(a.name[r]);
        f.emplace_back("device / stream", num(a.device[r]) + " / " + num(a.stream[r]));
        break;
    }
    case Source::IdleGap: {
        const IdleGap& g = data.steps(id.model)->gaps[r];
        info.kind = "GPU idle";
        info.name = "GPU idle " + formatDuration(g.span.durationNs());
        f.emplace_back("host waiting for data", formatDuration(g.dataNs));
        f.emplace_back("host in a synchronisation", formatDuration(g.syncNs()));
        f.emplace_back("launch / Python overhead", formatDuration(g.hostNs()));
        if (g.inGraph) f.emplace_back("inside a CUDA graph replay", formatDuration(g.graphNs()));
        if (const HostState state = data.steps(id.model)->hostStateDuring(r); state.activity != HostActivity::Unknown)
            f.emplace_back("main thread (sampled)", describeHostState(state, m.info.machine));
        break;
    }
    case Source::MemoryEvent: {
        const auto& e = m.memoryEvents;
        info.kind = "memory event";
        const char* change = e.deltaBytes[r] < 0 ? "free " : "allocation ";
        info.name = change + formatBytes(std::llabs(e.deltaBytes[r]));
        f.emplace_back("device", e.device[r] == kHostMemory ? std::string("host memory") : "GPU " + num(e.device[r]));
        if (e.allocatedBytes[r] >= 0) f.emplace_back("allocated after it", formatBytes(e.allocatedBytes[r]));
        if (e.reservedBytes[r] >= 0) f.emplace_back("reserved after it", formatBytes(e.reservedBytes[r]));
        f.emplace_back("of",
            e.deltaOf[r] == MemoryTotal::Reserved ? "memory from the driver (cudaMalloc/cudaFree)"
                                                  : "the caching allocator (tensors)");
        if (e.address[r]) {
            char address[32];
            snprintf(address, sizeof address, "0x%llx", static_cast<unsigned long long>(e.address[r]));
            f.emplace_back("address", address);
        }
        if (e.thread[r] != kNoThread) f.emplace_back("thread", threadLabel(m, e.thread[r]));
        // The allocator's peak over the step read around it (the bar drawn across that step).
        if (const auto place = data.place(id)) {
            for (const WindowPeak& w : data.tracks[place->track].memory.windowPeaks)
                if (w.startNs <= e.timeNs[r] && e.timeNs[r] <= w.endNs) {
                    if (w.allocated >= 0) f.emplace_back("the step's peak, allocated", formatBytes(w.allocated));
                    if (w.reserved >= 0) f.emplace_back("the step's peak, reserved", formatBytes(w.reserved));
                    break;
                }
        }
        break;
    }
    case Source::ThreadState: {
        const auto& s = m.threadStates;
        const HostActivity activity = classifyHostState(m.info.machine, s.state[r], s.syscall[r]);
        info.kind = "thread state (sampled)";
        info.name = describeHostState({ activity, int16_t(s.syscall[r]) }, m.info.machine);
        f.emplace_back("activity", std::string(hostActivityName(activity)));
        f.emplace_back("scheduler state", std::string(1, s.state[r]));
        if (s.syscall[r] >= 0) {
            // "futex (202 on x86_64)": the number is the recording machine's.
            const std::string_view call = syscallName(m.info.machine, s.syscall[r]);
            const std::string number = num(s.syscall[r]) + (m.info.machine.empty() ? "" : " on " + m.info.machine);
            f.emplace_back("system call", call.empty() ? number : std::string(call) + " (" + number + ")");
        }
        break;
    }
    }
    return info;
}

} // namespace tuneup::gui
