#include "import/json_windows.h"

#include <algorithm>
#include <cstring>
#include <rapidjson/stream.h>

namespace tuneup::analysis {

namespace {

// Zeros after the text: RapidJSON's SIMD loops read aligned 16-byte blocks that may pass the '\0'.
constexpr size_t kPadding = JsonWindow::kPadding;

// A window that grew this many times past its size without an element ending holds a huge element, a
// long run of scalars, or text that is not JSON: from then on it is also cut at commas, and checked
// for an error whenever it doubles, so that bad text cannot make it grow to the end of the file.
constexpr size_t kGrowthBeforeChecks = 8;

// Bytes kept either side of a window's content for error messages.
constexpr size_t kContextBytes = 32;

bool isWhitespace(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

} // namespace

uint64_t JsonWindow::textOffset(size_t local) const {
    const size_t inContent = local <= prefix ? 0 : std::min(local - prefix, contentSize);
    return offset + inContent;
}

std::string JsonWindow::context(uint64_t at, size_t radius) const {
    const std::string text = before + std::string(content()) + after;
    const size_t pos = before.size() + static_cast<size_t>(std::min<uint64_t>(at - std::min(at, offset), contentSize));
    std::string out;
    for (size_t i = pos > radius ? pos - radius : 0; i < std::min(text.size(), pos + radius); ++i) {
        if (i == pos) out += "<HERE>"; // ASCII, so that any log or terminal shows it
        const auto c = static_cast<unsigned char>(text[i]);
        out += c < 0x20 ? ' ' : static_cast<char>(c);
    }
    if (pos >= text.size()) out += endOfText ? "<HERE><end of data>" : "<HERE>";
    return out;
}

JsonWindowReader::JsonWindowReader(JsonCursor& input, size_t windowBytes)
    : m_input(input)
    , m_windowBytes(std::max<size_t>(windowBytes, 1))
    , m_tail(input.recent(kContextBytes)) {
}

void JsonWindowReader::append(JsonWindow& window, const char* bytes, size_t n) {
    const size_t needed = window.size + n + kPadding;
    if (needed > window.capacity) {
        const size_t capacity = std::max(needed, window.capacity * 2);
        LargeBuffer grown = allocateLargeBuffer(capacity);
        if (window.size > 0) std::memcpy(grown.get(), window.buffer.get(), window.size);
        window.buffer = std::move(grown);
        window.capacity = capacity;
    }
    std::memcpy(window.buffer.get() + window.size, bytes, n);
    window.size += n;
}

// Whether the text so far holds a JSON error before its end (not just an unfinished element).
bool JsonWindowReader::hasErrorInside(JsonWindow& window) {
    std::memset(window.buffer.get() + window.size, 0, kPadding);
    const rapidjson::ParseResult result = parseBytewise(window.buffer.get());
    return result.IsError() && result.Offset() < window.size;
}

rapidjson::ParseResult parseBytewise(const char* text) {
    BytewiseStream stream(text);
    rapidjson::BaseReaderHandler<> ignore;
    return rapidjson::Reader().Parse<kJsonParseFlags>(stream, ignore);
}

void JsonWindowReader::next(JsonWindow& window) {
    if (window.capacity == 0) {
        // Room for the usual window at once (its content ends at the first element end past
        // m_windowBytes), rather than growing to it through copies.
        window.capacity = std::min<size_t>(m_windowBytes + m_windowBytes / 16, size_t(64) << 20) + kPadding + 2;
        window.buffer = allocateLargeBuffer(window.capacity);
    }
    window.size = window.contentSize = 0;
    window.offset = m_input.offset();
    window.placeholder = m_afterElement;
    window.endOfText = window.last = false;
    append(window, "[\"\"", m_afterElement ? 3 : 1);
    window.prefix = window.size;
    m_splitter.startWindow();

    // The first windows are smaller, so that the parsing threads start while the text is still being
    // read, rather than after a whole window of it: m_windowBytes / 16, doubling up to m_windowBytes.
    const size_t target = std::max<size_t>(m_windowBytes >> std::max(4 - m_windowsCut, 0), 1);
    ++m_windowsCut;
    const size_t growthLimit = m_windowBytes * kGrowthBeforeChecks;
    size_t nextCheck = growthLimit;
    bool closed = false;
    while (!closed) {
        const std::string_view bytes = m_input.available();
        if (bytes.empty()) {
            window.endOfText = window.last = true;
            break;
        }
        size_t n = bytes.size();
        auto cut = JsonArraySplitter::Cut::AfterElement;
        if (window.contentSize < target) {
            cut = JsonArraySplitter::Cut::None;
            n = std::min(n, target - window.contentSize);
        } else if (window.contentSize >= growthLimit) {
            cut = JsonArraySplitter::Cut::AfterElementOrComma;
            if (window.contentSize >= nextCheck) {
                nextCheck *= 2;
                if (hasErrorInside(window)) {
                    window.last = true; // its parser reports the error; nothing after it matters
                    break;
                }
            }
        }
        const JsonArraySplitter::Result scanned = m_splitter.scan(bytes.data(), n, cut);
        append(window, bytes.data(), scanned.used);
        window.contentSize += scanned.used;
        m_input.consume(scanned.used);
        switch (scanned.stop) {
        case JsonArraySplitter::Stop::More:
            break;
        case JsonArraySplitter::Stop::AfterElement:
            m_afterElement = true;
            closed = true;
            break;
        case JsonArraySplitter::Stop::AfterComma:
            m_afterElement = false;
            closed = true;
            break;
        case JsonArraySplitter::Stop::ArrayEnd:
            window.last = true;
            closed = true;
            break;
        }
    }
    if (closed) append(window, "]", 1);
    std::memset(window.buffer.get() + window.size, 0, kPadding); // append() left room for it

    window.maxDepth = m_splitter.maxDepth() + 1; // and the "[" around the elements
    window.escapes = m_splitter.sawBackslash();
    window.controlBytes = m_splitter.sawControlByte();
    const std::string_view content = window.content();
    window.before = m_tail;
    const std::string_view next = m_input.available();
    window.after.assign(next.substr(0, std::min(next.size(), kContextBytes)));
    if (content.size() >= kContextBytes)
        m_tail.assign(content.substr(content.size() - kContextBytes));
    else
        m_tail = (m_tail + std::string(content))
                     .substr(std::max(m_tail.size() + content.size(), kContextBytes) - kContextBytes);
    for (size_t i = content.size(); i > 0; --i)
        if (!isWhitespace(content[i - 1])) {
            m_lastByte = content[i - 1];
            break;
        }
}

std::string_view JsonWindowReader::parserState() const {
    return m_lastByte == '\0' ? "[" : m_lastByte == ',' ? "[\"\"," : "[\"\"";
}

} // namespace tuneup::analysis
