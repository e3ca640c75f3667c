// The Kineto handler's two roles (kineto_handler.h): a window's part, read on any thread, and the
// document, which reads the top-level keys and merges the parts in text order.

#include "import/kineto_handler.h"

#include "import/json_chunk_input.h"
#include "import/json_windows.h"
#include "import/kineto_sax_handler.h"

#include <algorithm>
#include <cstring>
#include <rapidjson/reader.h>

namespace tuneup::analysis {

KinetoPart::KinetoPart()
    : m_builder(std::make_unique<TraceBuilder>(SourceFormat::KinetoJson, std::string()))
    , m_handler(std::make_unique<KinetoHandler>(*m_builder, KinetoHandler::Role::Window)) {
}

KinetoPart::~KinetoPart() = default;
KinetoPart::KinetoPart(KinetoPart&&) noexcept = default;
KinetoPart& KinetoPart::operator=(KinetoPart&&) noexcept = default;

namespace {

// Windows are parsed in place: strings and numbers are handed out where they lie, not copied.
constexpr unsigned kInSituFlags = (kJsonParseFlags & ~rapidjson::kParseIterativeFlag) | rapidjson::kParseInsituFlag;
// Nesting up to which the recursive parser (faster) cannot run out of stack.
constexpr int64_t kMaxRecursion = 256;

} // namespace

rapidjson::ParseResult KinetoPart::parse(JsonWindow& window, std::vector<char>& scratch) {
    m_handler->setPlaceholder(window.placeholder);
    if (window.controlBytes) {
        // Not JSON (see JsonWindow::controlBytes): read as the document's parser reads, for its verdict.
        BytewiseStream stream(window.buffer.get());
        return rapidjson::Reader().Parse<kJsonParseFlags>(stream, *m_handler);
    }
    char* text = window.buffer.get();
    if (window.escapes) {
        // Unescaping moves string bytes: parse a copy, the window stays as read.
        const size_t bytes = window.size + JsonWindow::kPadding;
        if (scratch.size() < bytes) scratch.resize(bytes);
        std::memcpy(scratch.data(), text, bytes);
        text = scratch.data();
    }
    rapidjson::InsituStringStream stream(text);
    rapidjson::Reader reader;
    const rapidjson::ParseResult result = window.maxDepth <= kMaxRecursion
        ? reader.Parse<kInSituFlags>(stream, *m_handler)
        : reader.Parse<kInSituFlags | rapidjson::kParseIterativeFlag>(stream, *m_handler);
    if (!result.IsError()) return result;
    if (!window.escapes) {
        // Without escapes the parse wrote only the '\0' ending each string, over its closing quote,
        // and only before where it stopped; a '\0' there can be nothing else (one in the text stops
        // the parse where it is).
        const size_t written = std::min(result.Offset(), window.size);
        std::replace(window.buffer.get(), window.buffer.get() + written, '\0', '"');
    }
    // A window's handler never stops the parse: the error is in the text. Found again as the document's
    // parser finds errors (byte by byte, iterative, not in place), for the same code and offset.
    return parseBytewise(window.buffer.get());
}

KinetoDocument::KinetoDocument(TraceBuilder& builder)
    : m_builder(builder)
    , m_handler(std::make_unique<KinetoHandler>(builder, KinetoHandler::Role::Document)) {
}

KinetoDocument::~KinetoDocument() = default;

rapidjson::ParseResult KinetoDocument::parse(JsonChunkInput& input, const std::function<bool()>& readEvents) {
    m_handler->setReadEvents(&readEvents);
    rapidjson::Reader reader;
    const rapidjson::ParseResult result = reader.Parse<kJsonParseFlags>(input, *m_handler);
    m_handler->setReadEvents(nullptr);
    return result;
}

void KinetoDocument::merge(KinetoPart& part) {
    const std::vector<StringId> strings = m_builder.append(*part.m_builder);
    m_handler->absorb(*part.m_handler, strings);
    part = KinetoPart();
}

void KinetoDocument::fail(Failure failure) {
    m_handler->fail(std::move(failure));
}
void KinetoDocument::expectPlaceholder(bool pending) {
    m_handler->setPlaceholder(pending);
}
const std::optional<KinetoDocument::Failure>& KinetoDocument::failure() const {
    return m_handler->failure();
}
bool KinetoDocument::sawContainer() const {
    return m_handler->sawContainer();
}
bool KinetoDocument::sawTraceEvents() const {
    return m_handler->sawTraceEvents();
}
void KinetoDocument::finish() {
    m_handler->finish();
}

} // namespace tuneup::analysis
