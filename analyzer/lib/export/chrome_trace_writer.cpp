#include "export/chrome_trace_writer.h"

#include "utf8.h"

#include <array>
#include <cstdio>
#include <map>
#include <rapidjson/memorystream.h>
#include <rapidjson/ostreamwrapper.h>
#include <rapidjson/reader.h>
#include <rapidjson/writer.h>
#include <set>
#include <stdexcept>
#include <string>

namespace tuneup::analysis {

namespace {

using JsonWriter = rapidjson::Writer<rapidjson::OStreamWrapper>;

constexpr std::array<const char*, 11> kCopyKindNames
    = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" };
constexpr std::array<const char*, 8> kMemoryKindNames
    = { "Unknown", "Pageable", "Pinned", "Device", "Array", "Managed", "Device Static", "Managed Static" };
constexpr std::array<const char*, 5> kSyncNames
    = { "Unknown", "Event Sync", "Stream Wait Event", "Stream Sync", "Context Sync" };

template <size_t N, class E> const char* nameOf(const std::array<const char*, N>& names, E value) {
    const auto i = static_cast<size_t>(value);
    return i < N ? names[i] : names[0];
}

// Nanoseconds as microseconds with three decimals: exact, where a double would round.
std::string micros(int64_t ns) {
    const bool negative = ns < 0;
    const uint64_t magnitude = negative ? uint64_t(0) - uint64_t(ns) : uint64_t(ns);
    char text[32];
    std::snprintf(text, sizeof text, "%s%llu.%03llu", negative ? "-" : "",
        static_cast<unsigned long long>(magnitude / 1000), static_cast<unsigned long long>(magnitude % 1000));
    return text;
}

// True when `text` is one JSON array, valid UTF-8 throughout (checked with RapidJSON's SAX reader: no
// document is built, and nesting cannot exhaust the stack).
bool isJsonArray(std::string_view text) {
    if (text.empty() || text.front() != '[') return false;
    rapidjson::MemoryStream stream(text.data(), text.size());
    rapidjson::BaseReaderHandler<> ignore;
    rapidjson::Reader reader;
    constexpr unsigned kFlags
        = rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag | rapidjson::kParseStopWhenDoneFlag;
    if (reader.Parse<kFlags>(stream, ignore).IsError()) return false;
    return stream.Tell() == text.size(); // nothing after the array
}

class TraceWriter {
public:
    TraceWriter(std::ostream& out, const TraceModel& model)
        : m_stream(out)
        , m_json(m_stream)
        , m_model(model) { }

    void write(const ChromeTraceMarks& marks) {
        m_json.StartObject();
        header();
        m_json.Key("traceEvents");
        m_json.StartArray();
        metadata();
        gpuWork();
        hostWork();
        memory();
        flows();
        if (marks.steps) steps(*marks.steps);
        if (marks.findings) findings(*marks.findings);
        m_json.EndArray();
        m_json.EndObject();
        m_stream.Flush();
    }

private:
    // ---- the pieces of one event ----
    void begin(const char* phase, std::string_view name, std::string_view category, int64_t pid, int64_t tid) {
        m_json.StartObject();
        string("ph", phase);
        string("name", name);
        if (!category.empty()) string("cat", category);
        m_json.Key("pid");
        m_json.Int64(pid);
        m_json.Key("tid");
        m_json.Int64(tid);
    }
    void times(int64_t startNs, int64_t endNs) {
        time("ts", startNs);
        time("dur", endNs - startNs);
    }
    void time(const char* key, int64_t ns) {
        const std::string text = micros(ns);
        m_json.Key(key);
        m_json.RawValue(text.data(), text.size(), rapidjson::kNumberType);
    }
    void string(std::string_view key, std::string_view value) {
        text(key, true);
        text(value, false);
    }
    // Text from a trace may hold invalid UTF-8: written with U+FFFD in its place, so the file stays JSON.
    void text(std::string_view value, bool isKey) {
        std::string valid;
        if (!isValidUtf8(value)) value = valid = validUtf8(value);
        const auto size = static_cast<rapidjson::SizeType>(value.size());
        isKey ? m_json.Key(value.data(), size) : m_json.String(value.data(), size);
    }
    void integer(const char* key, int64_t value) {
        m_json.Key(key);
        m_json.Int64(value);
    }
    void complete(
        std::string_view name, std::string_view category, int64_t pid, int64_t tid, int64_t startNs, int64_t endNs) {
        begin("X", name, category, pid, tid);
        times(startNs, endNs);
    }
    // GPU args shared by kernels, copies and sets.
    void gpuArgs(int32_t device, int32_t stream, uint64_t correlation, uint64_t externalId) {
        integer("device", device);
        integer("stream", stream);
        if (correlation) integer("correlation", int64_t(correlation));
        if (externalId) integer("External id", int64_t(externalId));
    }
    void trackName(const char* what, int64_t pid, int64_t tid, std::string_view name) {
        begin("M", what, "", pid, tid);
        m_json.Key("args");
        m_json.StartObject();
        string("name", name);
        m_json.EndObject();
        m_json.EndObject();
    }

    // ---- sections ----
    void header() {
        const TraceInfo& info = m_model.info;
        m_json.Key("schemaVersion");
        m_json.Int(1);
        string("displayTimeUnit", "ns");
        string("traceName", info.traceName.empty() ? info.path : info.traceName);
        if (info.rank) {
            m_json.Key("distributedInfo");
            m_json.StartObject();
            integer("rank", *info.rank);
            if (info.worldSize) integer("world_size", *info.worldSize);
            if (!info.backend.empty()) string("backend", info.backend);
            m_json.EndObject();
        }
        m_json.Key("deviceProperties");
        m_json.StartArray();
        for (const DeviceInfo& d : m_model.devices) {
            m_json.StartObject();
            integer("id", d.id);
            string("name", d.name);
            integer("computeMajor", d.computeMajor);
            integer("computeMinor", d.computeMinor);
            integer("numSms", d.smCount);
            integer("totalGlobalMem", d.globalMemoryBytes);
            if (d.warpSize) integer("warpSize", d.warpSize);
            m_json.EndObject();
        }
        m_json.EndArray();
    }

    void metadata() {
        for (const ProcessInfo& p : m_model.processes)
            if (!p.name.empty()) trackName("process_name", p.pid, 0, p.name);
        for (const ThreadInfo& t : m_model.threads)
            if (t.name != kEmptyString) trackName("thread_name", t.pid, t.tid, m_model.str(t.name));
        // GPU tracks: a process per device, a thread per stream, named as Kineto names them.
        std::set<std::pair<int32_t, int32_t>> streams;
        auto note = [&](const auto& table) {
            for (size_t i = 0; i < table.size(); ++i)
                streams.emplace(table.device[i], table.stream[i]);
        };
        note(m_model.kernels);
        note(m_model.memcpys);
        note(m_model.memsets);
        note(m_model.gpuAnnotations);
        std::set<int32_t> devices;
        for (const auto& [device, stream] : streams) {
            if (devices.insert(device).second) {
                const DeviceInfo* info = m_model.device(device);
                trackName("process_name", device, 0,
                    "GPU " + std::to_string(device) + (info && !info->name.empty() ? ": " + info->name : ""));
            }
            trackName("thread_name", device, stream, "stream " + std::to_string(stream));
        }
        trackName("process_name", kTuneupMarksPid, 0, "tuneup: steps and findings");
        trackName("thread_name", kTuneupMarksPid, 1, "steps");
        trackName("thread_name", kTuneupMarksPid, 2, "findings");
    }

    void gpuWork() {
        const auto& k = m_model.kernels;
        for (size_t i = 0; i < k.size(); ++i) {
            complete(m_model.str(k.name[i]), "kernel", k.device[i], k.stream[i], k.startNs[i], k.endNs[i]);
            m_json.Key("args");
            m_json.StartObject();
            gpuArgs(k.device[i], k.stream[i], k.correlation[i], k.externalId[i]);
            integer("registers per thread", k.registersPerThread[i]);
            integer("shared memory", k.sharedMemoryBytes[i]);
            if (k.graphId[i] != 0) integer("graph id", k.graphId[i]); // the key Kineto writes (kineto#1276)
            dims("grid", k.gridX[i], k.gridY[i], k.gridZ[i]);
            dims("block", k.blockX[i], k.blockY[i], k.blockZ[i]);
            m_json.EndObject();
            m_json.EndObject();
        }
        const auto& c = m_model.memcpys;
        for (size_t i = 0; i < c.size(); ++i) {
            const std::string name = std::string("Memcpy ") + nameOf(kCopyKindNames, c.copyKind[i]) + " ("
                + nameOf(kMemoryKindNames, c.srcKind[i]) + " -> " + nameOf(kMemoryKindNames, c.dstKind[i]) + ")";
            complete(name, "gpu_memcpy", c.device[i], c.stream[i], c.startNs[i], c.endNs[i]);
            m_json.Key("args");
            m_json.StartObject();
            gpuArgs(c.device[i], c.stream[i], c.correlation[i], c.externalId[i]);
            if (c.bytes[i] >= 0) integer("bytes", c.bytes[i]);
            m_json.EndObject();
            m_json.EndObject();
        }
        const auto& s = m_model.memsets;
        for (size_t i = 0; i < s.size(); ++i) {
            const std::string name = std::string("Memset (") + nameOf(kMemoryKindNames, s.memoryKind[i]) + ")";
            complete(name, "gpu_memset", s.device[i], s.stream[i], s.startNs[i], s.endNs[i]);
            m_json.Key("args");
            m_json.StartObject();
            gpuArgs(s.device[i], s.stream[i], s.correlation[i], s.externalId[i]);
            if (s.bytes[i] >= 0) integer("bytes", s.bytes[i]);
            m_json.EndObject();
            m_json.EndObject();
        }
        const auto& g = m_model.gpuAnnotations;
        for (size_t i = 0; i < g.size(); ++i) {
            complete(m_model.str(g.name[i]), "gpu_user_annotation", g.device[i], g.stream[i], g.startNs[i], g.endNs[i]);
            m_json.Key("args");
            m_json.StartObject();
            gpuArgs(g.device[i], g.stream[i], 0, g.externalId[i]);
            m_json.EndObject();
            m_json.EndObject();
        }
        const auto& y = m_model.syncs;
        for (size_t i = 0; i < y.size(); ++i) {
            const char* name = nameOf(kSyncNames, y.type[i]);
            complete(name, "cuda_sync", y.device[i], y.stream[i], y.startNs[i], y.endNs[i]);
            m_json.Key("args");
            m_json.StartObject();
            gpuArgs(y.device[i], y.stream[i], y.correlation[i], y.externalId[i]);
            string("cuda_sync_kind", name);
            if (y.waitStream[i] >= 0) integer("wait_on_stream", y.waitStream[i]);
            if (y.eventId[i] >= 0) integer("wait_on_cuda_event_id", y.eventId[i]);
            m_json.EndObject();
            m_json.EndObject();
        }
    }

    void hostWork() {
        const auto& a = m_model.apiCalls;
        for (size_t i = 0; i < a.size(); ++i) {
            const ThreadInfo& t = m_model.threads[a.thread[i]];
            complete(m_model.str(a.name[i]), a.api[i] == ApiKind::Driver ? "cuda_driver" : "cuda_runtime", t.pid, t.tid,
                a.startNs[i], a.endNs[i]);
            m_json.Key("args");
            m_json.StartObject();
            integer("cbid", a.cbid[i]);
            if (a.correlation[i]) integer("correlation", int64_t(a.correlation[i]));
            if (a.externalId[i]) integer("External id", int64_t(a.externalId[i]));
            m_json.EndObject();
            m_json.EndObject();
        }
        const auto& o = m_model.cpuOps;
        for (size_t i = 0; i < o.size(); ++i) {
            const ThreadInfo& t = m_model.threads[o.thread[i]];
            complete(m_model.str(o.name[i]), "cpu_op", t.pid, t.tid, o.startNs[i], o.endNs[i]);
            m_json.Key("args");
            m_json.StartObject();
            if (o.externalId[i]) integer("External id", int64_t(o.externalId[i]));
            if (o.sequenceNumber[i] >= 0) integer("Sequence number", o.sequenceNumber[i]);
            if (o.inputDims[i] != kEmptyString) {
                const std::string_view dims = m_model.str(o.inputDims[i]);
                // Raw only when it is a JSON array (the importer keeps arrays as compact JSON): a string
                // there ("Input Dims": "x\"]}") would otherwise be written into the file as JSON.
                if (isJsonArray(dims)) {
                    m_json.Key("Input Dims");
                    m_json.RawValue(dims.data(), dims.size(), rapidjson::kArrayType);
                } else {
                    string("Input Dims", dims);
                }
            }
            if (o.inputTypes[i] != kEmptyString) {
                m_json.Key("Input type");
                m_json.StartArray();
                std::string_view types = m_model.str(o.inputTypes[i]);
                while (true) {
                    const size_t comma = types.find(',');
                    const std::string_view type = types.substr(0, comma);
                    text(type, false);
                    if (comma == std::string_view::npos) break;
                    types.remove_prefix(comma + 1);
                }
                m_json.EndArray();
            }
            m_json.EndObject();
            m_json.EndObject();
        }
        const auto& n = m_model.annotations;
        for (size_t i = 0; i < n.size(); ++i) {
            const ThreadInfo& t = m_model.threads[n.thread[i]];
            complete(m_model.str(n.name[i]), "user_annotation", t.pid, t.tid, n.startNs[i], n.endNs[i]);
            if (n.externalId[i]) {
                m_json.Key("args");
                m_json.StartObject();
                integer("External id", int64_t(n.externalId[i]));
                m_json.EndObject();
            }
            m_json.EndObject();
        }
        const auto& p = m_model.pythonFunctions;
        for (size_t i = 0; i < p.size(); ++i) {
            const ThreadInfo& t = m_model.threads[p.thread[i]];
            complete(m_model.str(p.name[i]), "python_function", t.pid, t.tid, p.startNs[i], p.endNs[i]);
            m_json.EndObject();
        }
    }

    // Launch -> GPU work arrows (Kineto's ac2g flows), by correlation id.
    // Memory events as PyTorch writes them with profile_memory=True: "[memory]" instants with the caching
    // allocator's totals. nsys's driver-level allocations (deltaOf Reserved) have no such form: left out.
    void memory() {
        const MemoryEventTable& e = m_model.memoryEvents;
        for (size_t i = 0; i < e.size(); ++i) {
            if (e.deltaOf[i] != MemoryTotal::Allocated) continue;
            const ThreadInfo* t = e.thread[i] < m_model.threads.size() ? &m_model.threads[e.thread[i]] : nullptr;
            begin("i", "[memory]", "cpu_instant_event", t ? t->pid : 0, t ? t->tid : 0);
            string("s", "t");
            time("ts", e.timeNs[i]);
            m_json.Key("args");
            m_json.StartObject();
            if (e.allocatedBytes[i] >= 0) integer("Total Allocated", e.allocatedBytes[i]);
            if (e.reservedBytes[i] >= 0) integer("Total Reserved", e.reservedBytes[i]);
            integer("Bytes", e.deltaBytes[i]);
            if (e.address[i]) {
                m_json.Key("Addr");
                m_json.Uint64(e.address[i]);
            }
            integer("Device Id", e.device[i]);
            integer("Device Type", e.device[i] == kHostMemory ? 0 : 1); // c10::DeviceType CPU, CUDA
            m_json.EndObject();
            m_json.EndObject();
        }
    }

    void flows() {
        auto arrows = [&](const auto& table) {
            for (size_t i = 0; i < table.size(); ++i) {
                const RowIndex call = table.apiCall[i];
                if (call == kNoRow || table.correlation[i] == 0) continue;
                const ThreadInfo& t = m_model.threads[m_model.apiCalls.thread[size_t(call)]];
                const auto id = int64_t(table.correlation[i]);
                begin("s", "ac2g", "ac2g", t.pid, t.tid);
                time("ts", m_model.apiCalls.startNs[size_t(call)]);
                integer("id", id);
                m_json.EndObject();
                begin("f", "ac2g", "ac2g", table.device[i], table.stream[i]);
                time("ts", table.startNs[i]);
                integer("id", id);
                string("bp", "e");
                m_json.EndObject();
            }
        };
        arrows(m_model.kernels);
        arrows(m_model.memcpys);
        arrows(m_model.memsets);
    }

    // Steps found from the trace's own ranges (ProfilerStep#N, step, ...) are exported with them; derived
    // ones (optimizer or framework ranges where steps begin, the kernel pattern) get ranges named as the Python
    // bootstrap names steps.
    void steps(const StepDetection& detection) {
        if (!lastStepRunsToTheEnd(detection.source) && detection.source != StepSource::KernelPattern) return;
        for (const Step& s : detection.steps) {
            complete("tuneup.step", "user_annotation", kTuneupMarksPid, 1, s.startNs, s.endNs);
            m_json.Key("args");
            m_json.StartObject();
            integer("step", s.number);
            string("found from", stepSourceName(detection.source));
            m_json.EndObject();
            m_json.EndObject();
        }
    }

    void findings(const std::vector<Finding>& list) {
        for (const Finding& f : list) {
            const std::string name = "tuneup finding: " + f.ruleId;
            for (const TimeSpan& span : f.evidence.spans) {
                complete(name, "user_annotation", kTuneupMarksPid, 2, span.startNs, span.endNs);
                m_json.Key("args");
                m_json.StartObject();
                string("severity", severityName(f.severity));
                string("title", f.title);
                if (f.gain) integer("gain per step (ns)", f.gain->perStepNs);
                for (const auto& [label, value] : f.evidence.facts)
                    string(label, value);
                if (!f.fixPython.empty()) string("fix (Python)", f.fixPython);
                if (!f.fixCpp.empty()) string("fix (C++)", f.fixCpp);
                m_json.EndObject();
                m_json.EndObject();
            }
        }
    }

    void dims(const char* key, int32_t x, int32_t y, int32_t z) {
        m_json.Key(key);
        m_json.StartArray();
        m_json.Int(x);
        m_json.Int(y);
        m_json.Int(z);
        m_json.EndArray();
    }

    rapidjson::OStreamWrapper m_stream;
    JsonWriter m_json;
    const TraceModel& m_model;
};

} // namespace

void writeChromeTrace(std::ostream& out, const TraceModel& model, const ChromeTraceMarks& marks) {
    TraceWriter(out, model).write(marks);
    out.flush();
    if (!out) throw std::runtime_error("writing the trace failed (is the disk full?)");
}

} // namespace tuneup::analysis
