#include "import/kineto_json.h"

#include "import/chunk_reader.h"
#include "import/format_detect.h"
#include "import/import_error.h"
#include "import/json_chunk_input.h"
#include "import/json_windows.h"
#include "import/kineto_handler.h"
#include "model/trace_builder.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <rapidjson/error/en.h>
#include <thread>

namespace tuneup::analysis {

namespace {

// Text per parsing window: big enough that the per-window costs (a builder, the merge) vanish, small
// enough that a few in flight stay a small part of memory and two cores share even small traces. 3.75 MiB:
// a window's buffer (its text, up to a sixteenth more to end on an element, and padding) then fills two
// huge pages rather than touching part of a third (large_buffer.h).
constexpr size_t kDefaultWindowBytes = size_t(15) << 18;

bool isTruncationError(rapidjson::ParseErrorCode code) {
    switch (code) {
    case rapidjson::kParseErrorObjectMissName:
    case rapidjson::kParseErrorObjectMissColon:
    case rapidjson::kParseErrorObjectMissCommaOrCurlyBracket:
    case rapidjson::kParseErrorArrayMissCommaOrSquareBracket:
    case rapidjson::kParseErrorStringMissQuotationMark:
    case rapidjson::kParseErrorValueInvalid:
    case rapidjson::kParseErrorNumberMissFraction:
    case rapidjson::kParseErrorNumberMissExponent:
    case rapidjson::kParseErrorStringEscapeInvalid:
    case rapidjson::kParseErrorStringUnicodeEscapeInvalidHex:
        return true;
    default:
        return false;
    }
}

// What a JSON syntax error at `offset` is: the text cut short (Truncated), or malformed.
KinetoDocument::Failure describeSyntaxError(
    rapidjson::ParseErrorCode code, uint64_t offset, bool atEndOfText, const std::string& near) {
    std::string problem = rapidjson::GetParseError_En(code);
    if (!problem.empty() && problem.back() == '.') problem.pop_back();
    KinetoDocument::Failure failure { ImportError::Kind::Malformed, "malformed JSON: " + problem, offset };
    if (atEndOfText && isTruncationError(code)) {
        failure.kind = ImportError::Kind::Truncated;
        failure.problem = "the JSON text ends early (the file is truncated?): " + problem;
    }
    if (!near.empty()) failure.problem += ", near \"" + near + "\"";
    return failure;
}

// Reads the body of an array of events for the document: this thread cuts it into windows, workers
// parse them (each into its own KinetoPart), and this thread merges the parts in text order. A
// bounded number of windows is in flight (m_slots), so memory stays bounded whatever the size of the
// text. Without workers (background = false) windows are parsed here.
class EventsReader {
public:
    EventsReader(JsonChunkInput& input, KinetoDocument& document, size_t windowBytes, int workers)
        : m_input(input)
        , m_document(document)
        , m_windowBytes(windowBytes)
        , m_workers(workers)
        , m_slots(static_cast<size_t>(workers) + 2) { }
    ~EventsReader() {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_queued.notify_all();
        for (auto& t : m_threads)
            t.join();
    }
    EventsReader(const EventsReader&) = delete;
    EventsReader& operator=(const EventsReader&) = delete;

    // The readEvents callback of KinetoDocument::parse.
    bool read();

private:
    struct Slot {
        JsonWindow window;
        KinetoPart part;
        rapidjson::ParseResult result;
        std::exception_ptr error;
        bool parsed = false; // set by the worker, under m_mutex
    };
    Slot& slot(uint64_t n) { return m_slots[n % m_slots.size()]; }
    static void parse(Slot& slot, std::vector<char>& scratch);
    void work();
    bool mergeOldest();

    JsonChunkInput& m_input;
    KinetoDocument& m_document;
    const size_t m_windowBytes;
    const int m_workers;
    // A ring: window n in slot n % size. One per worker, one being cut and one parsed, waiting for
    // its turn to be merged.
    std::vector<Slot> m_slots;
    std::vector<char> m_scratch; // for windows parsed on this thread
    uint64_t m_cut = 0, m_taken = 0, m_merged = 0; // windows cut, taken by a worker, merged
    std::vector<std::thread> m_threads;
    std::mutex m_mutex;
    std::condition_variable m_queued, m_parsed;
    bool m_stop = false;
};

void EventsReader::parse(Slot& slot, std::vector<char>& scratch) {
    try {
        slot.result = slot.part.parse(slot.window, scratch);
    } catch (...) {
        slot.error = std::current_exception();
    }
}

void EventsReader::work() {
    std::vector<char> scratch;
    for (;;) {
        Slot* next = nullptr;
        {
            std::unique_lock lock(m_mutex);
            m_queued.wait(lock, [&] { return m_stop || m_taken < m_cut; });
            if (m_stop) return;
            next = &slot(m_taken++);
        }
        parse(*next, scratch);
        {
            std::lock_guard lock(m_mutex);
            next->parsed = true;
        }
        m_parsed.notify_all();
    }
}

bool EventsReader::read() {
    assert(m_input.available().starts_with('['));
    m_input.consume(1); // the '[' (see KinetoDocument::parse)
    JsonWindowReader reader(m_input, m_windowBytes);
    bool last = false;
    while (!last) {
        if (m_cut - m_merged == m_slots.size() && !mergeOldest()) return false;
        Slot& s = slot(m_cut);
        reader.next(s.window);
        last = s.window.last;
        // Without workers, or for a single window (a small trace: threads would cost more than they
        // save), the window is parsed and merged here.
        if (m_workers == 0 || (last && m_cut == m_merged)) {
            parse(s, m_scratch);
            {
                std::lock_guard lock(m_mutex);
                s.parsed = true;
                ++m_cut;
                ++m_taken;
            }
            if (!mergeOldest()) return false;
        } else {
            if (m_threads.empty())
                for (int i = 0; i < m_workers; ++i)
                    m_threads.emplace_back([this] { work(); });
            {
                std::lock_guard lock(m_mutex);
                ++m_cut;
            }
            m_queued.notify_one();
        }
    }
    while (m_merged < m_cut)
        if (!mergeOldest()) return false;
    // For the document's parser: the '[' it has yet to take, and as much as leaves it in the state
    // it would be in had it read the elements, so that what follows is judged the same.
    m_document.expectPlaceholder(reader.parserState().size() > 1);
    m_input.hold(reader.parserState());
    return true;
}

// Waits for the oldest window not merged yet, and merges it (or records its error).
bool EventsReader::mergeOldest() {
    Slot& s = slot(m_merged);
    {
        std::unique_lock lock(m_mutex);
        m_parsed.wait(lock, [&] { return s.parsed; });
        s.parsed = false;
    }
    ++m_merged;
    if (s.error) std::rethrow_exception(std::exchange(s.error, nullptr));
    if (s.result.IsError()) {
        // The first error in the text: windows are merged in order, and the text before this
        // window parsed without one.
        const JsonWindow& w = s.window;
        const uint64_t at = w.textOffset(s.result.Offset());
        const bool atEnd = w.endOfText && at == w.offset + w.contentSize;
        m_document.fail(describeSyntaxError(s.result.Code(), at, atEnd, w.context(at)));
        return false;
    }
    m_document.merge(s.part);
    return true;
}

// Parsing workers: one per core, as the thread cutting windows and the one inflating take little.
int parsingWorkers(const KinetoImportOptions& options) {
    if (!options.background) return 0;
    if (options.parsingThreads > 0) return options.parsingThreads;
    return static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
}

void addNotes(TraceModel& model) {
    TraceInfo& info = model.info;
    for (const auto& d : model.devices) {
        if (d.vendor == GpuVendor::Amd)
            info.vendor = GpuVendor::Amd;
        else if (d.vendor == GpuVendor::Nvidia && info.vendor == GpuVendor::Unknown)
            info.vendor = GpuVendor::Nvidia;
    }
    if (info.vendor == GpuVendor::Unknown && !model.kernels.empty())
        info.vendor = GpuVendor::Nvidia; // Kineto traces are CUDA unless something says ROCm
    auto& notes = model.stats.notes;
    if (model.kernels.empty() && !model.counterRanges.empty())
        notes.push_back("no kernel activity, only counter ranges: " + std::to_string(model.counterRanges.size())
            + " CUPTI range-profiler results (cuda_profiler_range) with instruction counters; the trace has no "
              "kernel timings");
    else if (!model.hasGpuActivity())
        notes.push_back("no GPU activity: a CPU-only trace (no kernels, copies or sets)");
    if (info.vendor == GpuVendor::Amd)
        notes.push_back("an AMD GPU (ROCm) trace: advice specific to NVIDIA GPUs does not apply");
    if (info.legacyArrayForm)
        notes.push_back("the 2020 Kineto format (a bare array of events): no device properties or rank");
}

TraceModel importFromSource(
    std::unique_ptr<ByteSource> raw, const std::string& path, const KinetoImportOptions& options) {
    const auto startTime = std::chrono::steady_clock::now();
    // The first bytes decide between gzip and plain text, and catch files that are not JSON at all.
    std::string head(kFormatHeadBytes, '\0');
    size_t got = 0;
    while (got < head.size()) {
        const size_t n = raw->read(head.data() + got, head.size() - got);
        if (n == 0) break;
        got += n;
    }
    head.resize(got);
    if (got == 0) throw ImportError(ImportError::Kind::Empty, path, "the file is empty");
    const auto headBytes = std::span<const unsigned char>(reinterpret_cast<const unsigned char*>(head.data()), got);
    const bool compressed = isGzip(headBytes);
    const TraceFileFormat format = detectFormat(headBytes);
    if (format == TraceFileFormat::TuneupDb || format == TraceFileFormat::NsysSqlite)
        throw ImportError(ImportError::Kind::UnknownFormat, path,
            "this is a SQLite database, not a Kineto JSON trace (read it as a tuneup or Nsight Systems file)");

    std::unique_ptr<ByteSource> source = prefixedSource(std::move(head), std::move(raw));
    if (compressed) source = gzipSource(std::move(source), path);
    ChunkReader reader(std::move(source), options.background);
    JsonChunkInput input(reader, options.progress);

    TraceBuilder builder(SourceFormat::KinetoJson, path);
    KinetoDocument document(builder);
    rapidjson::ParseResult result;
    {
        EventsReader events(input, document, options.windowBytes > 0 ? options.windowBytes : kDefaultWindowBytes,
            parsingWorkers(options));
        result = document.parse(input, [&events] { return events.read(); });
    }

    // A damaged or cut gzip stream is the real cause of whatever the JSON parser then saw.
    if (auto error = reader.error()) {
        try {
            std::rethrow_exception(error);
        } catch (const ImportError&) {
            throw;
        } catch (const std::exception& e) {
            throw ImportError(ImportError::Kind::Unreadable, path, e.what(), input.bytesRead(), compressed);
        }
    }
    if (result.IsError()) {
        if (const auto& failure = document.failure())
            throw ImportError(
                failure->kind, path, failure->problem, failure->offset.value_or(result.Offset()), compressed);
        const auto code = result.Code();
        if (code == rapidjson::kParseErrorDocumentEmpty)
            throw ImportError(ImportError::Kind::Empty, path, "the file holds only whitespace");
        const uint64_t offset = result.Offset();
        if (!document.sawContainer()) {
            std::string problem = rapidjson::GetParseError_En(code);
            if (!problem.empty() && problem.back() == '.') problem.pop_back();
            problem = "not JSON (" + problem + "): a Kineto trace starts with '{' or '['";
            const std::string near = input.context(offset);
            if (!near.empty()) problem += ", near \"" + near + "\"";
            throw ImportError(ImportError::Kind::NotATrace, path, problem, offset, compressed);
        }
        const bool atEnd = input.atEnd() && offset >= input.bytesRead();
        const auto failure = describeSyntaxError(code, offset, atEnd, input.context(offset));
        throw ImportError(failure.kind, path, failure.problem, offset, compressed);
    }
    if (!document.sawTraceEvents())
        throw ImportError(
            ImportError::Kind::NotATrace, path, "JSON without \"traceEvents\": not a Chrome/Kineto trace");

    document.finish();
    builder.stats().bytesRead = input.bytesRead();
    TraceModel model = builder.finish();
    addNotes(model);
    model.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - startTime).count();
    return model;
}

} // namespace

TraceModel importKinetoJson(const std::string& path, const KinetoImportOptions& options) {
    return importFromSource(openFileSource(path), path, options);
}

TraceModel importKinetoJsonBytes(std::string_view bytes, const std::string& name, const KinetoImportOptions& options) {
    return importFromSource(memorySource(bytes), name, options);
}

} // namespace tuneup::analysis
