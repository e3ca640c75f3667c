// What a complete (X) event becomes in the model, by its category: a kernel, copy, memset, CUDA call,
// CPU op, range, GPU annotation, synchronisation, counter range, profiler window or Python frame, and the
// collective an NCCL kernel or record_param_comms op stands for; and what a memory event becomes.

#include "import/kineto_names.h"
#include "import/kineto_sax_handler.h"

namespace tuneup::analysis {

using namespace kineto;

void KinetoHandler::completeEvent() {
    const auto ts = has(Field::Ts) ? nanosFromMicros(get(Field::Ts)) : std::nullopt;
    if (!ts) {
        count(Counter::NoTs);
        return;
    }
    int64_t dur = 0;
    if (const auto d = has(Field::Dur) ? nanosFromMicros(get(Field::Dur)) : std::nullopt; !d) {
        count(Counter::NoDur);
    } else if (*d < 0) {
        count(Counter::NegativeDur);
    } else {
        dur = *d;
    }
    const int64_t start = *ts;
    int64_t end = 0;
    if (__builtin_add_overflow(start, dur, &end)) end = start;
    const std::string_view name = get(Field::Name);

    switch (m_category) {
    case Category::Kernel: {
        Kernel k;
        k.startNs = start;
        k.endNs = end;
        k.device = deviceOf();
        k.stream = streamOf();
        k.correlation = unsignedOr(Field::Correlation, 0);
        k.externalId = unsignedOr(Field::ExternalId, 0);
        k.name = m_b.intern(name);
        k.gridX = m_grid[0];
        k.gridY = m_grid[1];
        k.gridZ = m_grid[2];
        k.blockX = m_block[0];
        k.blockY = m_block[1];
        k.blockZ = m_block[2];
        k.registersPerThread = int32Or(Field::Registers, 0);
        k.sharedMemoryBytes = int32Or(Field::SharedMemory, 0);
        // Kineto built with CUDA 12 or later writes it since kineto#1276 (2026): 0 for a kernel launched alone.
        k.graphId = uint32_t(unsignedOr(Field::GraphId, 0));
        const RowIndex row = m_b.addKernel(k);
        if (has(Field::CollectiveName) || isCollectiveKernel(name))
            addCollective(CollectiveOrigin::Kernel, row, start, end, name);
        if (get(Field::ArgKind) == "Dispatch Kernel") ++m_amdKernels; // ROCm's kernel records say so
        break;
    }
    case Category::Memcpy: {
        Memcpy c;
        c.startNs = start;
        c.endNs = end;
        c.device = deviceOf();
        c.stream = streamOf();
        c.correlation = unsignedOr(Field::Correlation, 0);
        c.externalId = unsignedOr(Field::ExternalId, 0);
        c.bytes = integerOr(Field::Bytes, -1);
        parseMemcpyName(name, c);
        if (c.copyKind == CopyKind::Unknown && has(Field::ArgKind)) c.copyKind = copyKindFromName(get(Field::ArgKind));
        m_b.addMemcpy(c);
        break;
    }
    case Category::Memset: {
        Memset s;
        s.startNs = start;
        s.endNs = end;
        s.device = deviceOf();
        s.stream = streamOf();
        s.correlation = unsignedOr(Field::Correlation, 0);
        s.externalId = unsignedOr(Field::ExternalId, 0);
        s.bytes = integerOr(Field::Bytes, -1);
        // "Memset (Device)"
        if (const size_t open = name.find('('), close = name.rfind(')');
            open != std::string_view::npos && close != std::string_view::npos && open < close)
            s.memoryKind = memoryKindFromName(name.substr(open + 1, close - open - 1));
        m_b.addMemset(s);
        break;
    }
    case Category::Runtime:
    case Category::Driver: {
        ApiCall a;
        a.startNs = start;
        a.endNs = end;
        a.thread = m_b.thread(trackId(Field::Pid), trackId(Field::Tid));
        a.api = m_category == Category::Driver ? ApiKind::Driver : ApiKind::Runtime;
        a.cbid = int32Or(Field::Cbid, -1);
        a.name = m_b.intern(name);
        a.correlation = unsignedOr(Field::Correlation, 0);
        a.externalId = unsignedOr(Field::ExternalId, 0);
        m_b.addApiCall(a);
        if (name.starts_with("hip"))
            ++m_hipCalls;
        else if (name.starts_with("cu"))
            ++m_cudaCalls;
        break;
    }
    case Category::LegacyOperator:
    case Category::CpuOp:
        if (m_category == Category::CpuOp || !isLegacyUserRange(name)) {
            CpuOp op;
            op.startNs = start;
            op.endNs = end;
            op.thread = m_b.thread(trackId(Field::Pid), trackId(Field::Tid));
            op.name = m_b.intern(name);
            op.externalId = unsignedOr(Field::ExternalId, 0);
            op.sequenceNumber = integerOr(Field::SequenceNumber, -1);
            if (has(Field::InputDims)) op.inputDims = m_b.intern(get(Field::InputDims));
            if (has(Field::InputTypes)) op.inputTypes = m_b.intern(get(Field::InputTypes));
            const RowIndex row = m_b.addCpuOp(op);
            if (has(Field::CollectiveName) || name == "record_param_comms")
                addCollective(CollectiveOrigin::CpuOp, row, start, end, {});
            break;
        }
        [[fallthrough]]; // a record_function range in a 2020 trace
    case Category::UserAnnotation: {
        Annotation a;
        a.startNs = start;
        a.endNs = end;
        a.thread = m_b.thread(trackId(Field::Pid), trackId(Field::Tid));
        a.name = m_b.intern(name);
        a.externalId = unsignedOr(Field::ExternalId, 0);
        m_b.addAnnotation(a);
        break;
    }
    case Category::GpuUserAnnotation: {
        GpuAnnotation g;
        g.startNs = start;
        g.endNs = end;
        g.device = deviceOf();
        g.stream = streamOf();
        g.name = m_b.intern(name);
        g.externalId = unsignedOr(Field::ExternalId, 0);
        m_b.addGpuAnnotation(g);
        break;
    }
    case Category::CudaSync: {
        Sync s;
        s.startNs = start;
        s.endNs = end;
        s.device = deviceOf();
        s.stream = streamOf();
        s.type = syncTypeFromName(has(Field::SyncKind) ? get(Field::SyncKind) : name);
        s.correlation = unsignedOr(Field::Correlation, 0);
        s.externalId = unsignedOr(Field::ExternalId, 0);
        s.eventId = integerOr(Field::WaitOnEvent, -1);
        s.waitStream = int32Or(Field::WaitOnStream, -1);
        m_b.addSync(s);
        break;
    }
    case Category::ProfilerRange: {
        CounterRange r;
        r.startNs = start;
        r.endNs = end;
        r.device = deviceOf();
        r.name = m_b.intern(name);
        m_counterValues.clear();
        for (size_t i = 0; i < m_counterCount; ++i) {
            const std::string& text = m_counterArgs[i].second;
            double v = 0;
            auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            (void)ptr;
            if (ec == std::errc()) m_counterValues.emplace_back(m_b.intern(m_counterArgs[i].first), v);
        }
        m_b.addCounterRange(r, m_counterValues);
        break;
    }
    case Category::Trace:
        m_b.info().profilerWindows.push_back({ start, end });
        break;
    case Category::PythonFunction: {
        PythonFunction f;
        f.startNs = start;
        f.endNs = end;
        f.thread = m_b.thread(trackId(Field::Pid), trackId(Field::Tid));
        f.name = m_b.intern(name);
        m_b.addPythonFunction(f);
        break;
    }
    case Category::Overhead:
        count(Counter::Overhead);
        break;
    case Category::CpuInstant:
    case Category::None:
    case Category::Other: {
        count(Counter::UnknownCategory);
        const std::string_view cat = get(Field::Cat);
        auto it = m_unknownCategories.find(cat);
        if (it == m_unknownCategories.end())
            m_unknownCategories.emplace(std::string(cat), 1);
        else
            ++it->second;
        break;
    }
    }
}

// A "[memory]" instant event (profile_memory=True): an allocation (Bytes > 0) or a free (Bytes < 0) from
// PyTorch's allocator on a device, with the caching allocator's totals after it in newer PyTorch (about
// 1.10 on; older traces: Bytes only).
void KinetoHandler::memoryEvent() {
    const auto ts = has(Field::Ts) ? nanosFromMicros(get(Field::Ts)) : std::nullopt;
    if (!ts) {
        count(Counter::NoTs);
        return;
    }
    MemoryEvent e;
    e.timeNs = *ts;
    // c10::DeviceType: 0 CPU, 1 CUDA (ROCm builds say CUDA too), 6 HIP.
    const int64_t type = integerOr(Field::DeviceType, -1);
    if (type == 1 || type == 6) e.device = int32Or(Field::DeviceId, -1);
    const bool known = type == 0 || e.device >= 0;
    const auto total = [this](Field f) {
        const int64_t v = integerOr(f, -1);
        return v >= 0 ? v : -1;
    };
    e.allocatedBytes = total(Field::TotalAllocated);
    e.reservedBytes = total(Field::TotalReserved);
    if (!known || (!has(Field::MemoryBytes) && e.allocatedBytes < 0 && e.reservedBytes < 0)) {
        count(Counter::MemoryUnread);
        return;
    }
    e.deltaBytes = integerOr(Field::MemoryBytes, 0);
    e.deltaOf = MemoryTotal::Allocated;
    e.address = unsignedOr(Field::Addr, 0);
    if (has(Field::Pid)) e.thread = m_b.thread(trackId(Field::Pid), trackId(Field::Tid));
    m_b.addMemoryEvent(e);
}

void KinetoHandler::addCollective(
    CollectiveOrigin origin, RowIndex row, int64_t start, int64_t end, std::string_view kernelName) {
    Collective c;
    c.startNs = start;
    c.endNs = end;
    c.origin = origin;
    c.eventRow = row;
    if (has(Field::CollectiveName))
        c.name = m_b.intern(get(Field::CollectiveName));
    else if (!kernelName.empty())
        c.name = m_b.intern(collectiveFromKernelName(kernelName));
    c.inNelems = integerOr(Field::InMsgNelems, -1);
    c.outNelems = integerOr(Field::OutMsgNelems, -1);
    c.groupSize = int32Or(Field::GroupSize, -1);
    if (has(Field::Dtype)) {
        c.dtype = m_b.intern(get(Field::Dtype));
        c.elementBytes = dtypeBytes(get(Field::Dtype));
    }
    if (has(Field::PgName)) c.processGroup = m_b.intern(get(Field::PgName));
    if (has(Field::PgRanks)) c.groupRanks = m_b.intern(get(Field::PgRanks));
    c.commsId = unsignedOr(Field::CommsId, 0);
    m_b.addCollective(c);
}

} // namespace tuneup::analysis
