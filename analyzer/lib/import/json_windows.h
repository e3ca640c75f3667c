#pragma once
// Cuts the body of a JSON array, read from a stream, into windows: runs of whole elements in one
// contiguous buffer each, parsed on their own as "[" + elements + "]" (so on several threads, and on
// RapidJSON's fast in-memory paths). Only a bounded number of windows need exist at once, whatever the
// size of the array; an element larger than a window grows that window.

#include "import/json_window_splitter.h"
#include "import/large_buffer.h"

#include <cstdint>
#include <memory>
#include <rapidjson/reader.h>
#include <string>
#include <string_view>

namespace tuneup::analysis {

// How the importer parses JSON: numbers as text (exact timestamps), NaN/Infinity and trailing commas
// tolerated (Python's json and some writers produce them), iterative (no recursion on deep nesting).
inline constexpr unsigned kJsonParseFlags = rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseNanAndInfFlag
    | rapidjson::kParseTrailingCommasFlag | rapidjson::kParseIterativeFlag;

// A '\0'-terminated text as a RapidJSON stream of a type of its own, so that RapidJSON reads it byte
// by byte (its generic code) rather than with its SIMD paths for StringStream: the way the document's
// parser reads, for the same verdict on the same text (see JsonWindow::controlBytes).
class BytewiseStream {
public:
    using Ch = char;
    explicit BytewiseStream(const char* text)
        : m_begin(text)
        , m_cur(text) { }
    Ch Peek() const { return *m_cur; }
    Ch Take() { return *m_cur++; }
    size_t Tell() const { return static_cast<size_t>(m_cur - m_begin); }
    // Only needed by RapidJSON for in-situ parsing, which this stream is not for.
    Ch* PutBegin() { return nullptr; }
    void Put(Ch) { }
    void Flush() { }
    size_t PutEnd(Ch*) { return 0; }

private:
    const char* m_begin;
    const char* m_cur;
};

// Checks a '\0'-terminated text with kJsonParseFlags, byte by byte: the error the document's parser
// would report there (code, offset), if any.
rapidjson::ParseResult parseBytewise(const char* text);

/** Where the window reader takes its bytes: the stream the document parser reads. */
class JsonCursor {
public:
    virtual ~JsonCursor() = default;
    // The bytes at the cursor (at least one), or empty at the end of the text.
    virtual std::string_view available() = 0;
    virtual void consume(size_t bytes) = 0;
    virtual uint64_t offset() const = 0; // of the cursor in the whole text
    // Up to n of the bytes just before the cursor, where still in memory (for error messages).
    virtual std::string recent(size_t n) const = 0;
};

// A run of whole elements of the array, as the text "[" + content + "]", a '\0' and zeros (so that
// SIMD loads near the end stay in the buffer). A window that follows an element rather than a comma
// starts with that comma; a placeholder element, an empty string, then comes first:
// "[\"\"" + ", {...}, {...}" + "]". (A string, as whatever follows cannot be read as part of it.)
struct JsonWindow {
    static constexpr size_t kPadding = 64; // the '\0' and the zeros after text()
    LargeBuffer buffer;
    size_t capacity = 0;
    size_t size = 0; // of the text to parse, without the '\0'
    size_t prefix = 0; // bytes before the content: 1 for "[", 3 with the placeholder
    size_t contentSize = 0;
    uint64_t offset = 0; // of the content in the whole text
    bool placeholder = false; // the text starts with "[\"\"": the parser must skip one element
    bool endOfText = false; // the text ended inside this window: no "]" was added
    bool last = false; // the array (or the text) ends in this window
    std::string before, after; // a few bytes of the text either side of the content, for context()
    int64_t maxDepth = 0; // at least the deepest nesting in text()
    bool escapes = true; // false: the content holds no backslash
    // The content may hold a control byte other than whitespace: never valid JSON, and RapidJSON's SSE2
    // string scan (1.1.0) lets 0x1a..0x1f through inside strings, so such a window must be parsed
    // byte by byte for the error to be found, where the document's parser would find it.
    bool controlBytes = true;

    char* text() { return buffer.get(); }
    std::string_view content() const { return { buffer.get() + prefix, contentSize }; }
    // Where an error the parser found at `local` (in text()) is in the whole text.
    uint64_t textOffset(size_t local) const;
    // Up to `radius` bytes of the content either side of textOffset, "<HERE>" marking it.
    std::string context(uint64_t at, size_t radius = 32) const;
};

class JsonWindowReader {
public:
    // Reads the array whose '[' the cursor has just passed. windowBytes: about how much content a
    // window holds (a window ends at the first element end past it); the first four hold less (1/16,
    // 1/8, 1/4, 1/2 of it) so that parsing starts early.
    JsonWindowReader(JsonCursor& input, size_t windowBytes);

    // Fills `window` (reusing its buffer) with the next elements. After a window marked `last` the
    // cursor is at the array's closing bracket (or at the end of the text).
    void next(JsonWindow& window);

    // What a parser reading the array would hold back at the closing bracket: "[" when the array is
    // empty, "[\"\"" after an element, "[\"\"," after a trailing comma; the document parser is handed
    // this (with the placeholder element) so that it is where the one reading everything would be.
    std::string_view parserState() const;

private:
    void append(JsonWindow& window, const char* bytes, size_t n);
    bool hasErrorInside(JsonWindow& window);

    JsonCursor& m_input;
    JsonArraySplitter m_splitter;
    size_t m_windowBytes;
    int m_windowsCut = 0;
    bool m_afterElement = false; // the last window ended just after an element, not after a comma
    char m_lastByte = '\0'; // the last byte of the array's body that is not whitespace
    std::string m_tail; // the last bytes of the previous window's content
};

} // namespace tuneup::analysis
