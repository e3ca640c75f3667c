#pragma once
// Cuts the body of a JSON array, read from a stream, into windows: runs of whole elements in one
// contiguous buffer each, parsed on their own as "[" + elements + "]" (so on several threads, and on
// RapidJSON's fast in-memory paths). Only a bounded number of windows need exist at once, whatever the
// size of the array; an element larger than a window grows that window.

#include "import/json_window_splitter.h"

#include <rapidjson/reader.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tuneup::analysis {

// How the importer parses JSON: numbers as text (exact timestamps), NaN/Infinity and trailing commas
// tolerated (Python's json and some writers produce them), iterative (no recursion on deep nesting).
inline constexpr unsigned kJsonParseFlags = rapidjson::kParseNumbersAsStringsFlag | rapidjson::kParseNanAndInfFlag
    | rapidjson::kParseTrailingCommasFlag | rapidjson::kParseIterativeFlag;

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

struct JsonWindow {
    // "[" + content + "]" and a '\0', then zeros, so that SIMD loads near the end stay in the buffer.
    static constexpr size_t kPadding = 64; // the '\0' and the zeros after text()
    // When the window follows an element rather than a comma, its content starts with the comma, and
    // a placeholder element "0" comes first: "[0" + ", {...}, {...}" + "]".
    std::unique_ptr<char[]> buffer;
    size_t capacity = 0;
    size_t size = 0;        // of the text to parse, without the '\0'
    size_t prefix = 0;      // bytes before the content: 1 for "[", 2 for "[0"
    size_t contentSize = 0;
    uint64_t offset = 0;    // of the content in the whole text
    bool placeholder = false; // the text starts with "[0": the parser must skip one element
    bool endOfText = false;   // the text ended inside this window: no "]" was added
    bool last = false;        // the array (or the text) ends in this window
    std::string before, after; // a few bytes of the text either side of the content, for context()
    int64_t maxDepth = 0;      // at least the deepest nesting in text()

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
    // window holds (a window ends at the first element end past it).
    JsonWindowReader(JsonCursor& input, size_t windowBytes);

    // Fills `window` (reusing its buffer) with the next elements. After a window marked `last` the
    // cursor is at the array's closing bracket (or at the end of the text).
    void next(JsonWindow& window);

    // What a parser reading the array would hold back at the closing bracket: "[" when the array is
    // empty, "[0" after an element, "[0," after a trailing comma; the document parser is handed this
    // (with the placeholder element "0") so that it is where the one reading everything would be.
    std::string_view parserState() const;

private:
    void append(JsonWindow& window, const char* bytes, size_t n);
    bool hasErrorInside(JsonWindow& window);

    JsonCursor& m_input;
    JsonArraySplitter m_splitter;
    size_t m_windowBytes;
    bool m_afterElement = false; // the last window ended just after an element, not after a comma
    char m_lastByte = '\0';      // the last byte of the array's body that is not whitespace
    std::string m_tail;          // the last bytes of the previous window's content
};

} // namespace tuneup::analysis
