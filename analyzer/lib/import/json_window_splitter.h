#pragma once
// Finds the boundaries between the elements of a JSON array without parsing them, so that runs of
// elements ("windows") can be parsed on several threads. It follows only what decides where an
// element ends: whether a byte is inside a string (quotes, backslash escapes) and the bracket depth.
// Compact and pretty-printed JSON cut alike; nothing is assumed about lines.
//
// It does not validate. Up to the first error in the text its view of strings and depth is the
// parser's, so the windows hold whole elements; after an error it may cut anywhere, and the parser
// of the window holding the error reports it at its exact place.

#include <cstddef>
#include <cstdint>

namespace tuneup::analysis {

class JsonArraySplitter {
public:
    // Where scan() may stop besides the end of the array.
    enum class Cut : uint8_t {
        None, // nowhere: scan all the bytes
        AfterElement, // just after the next element that ends with '}' or ']'
        AfterElementOrComma, // also just after a comma between elements (arrays of scalars)
    };
    enum class Stop : uint8_t {
        More, // every byte was scanned
        AfterElement, // `used` is just past the '}' or ']' that closed an element
        AfterComma, // `used` is just past a comma between elements
        ArrayEnd, // `used` is at the ']' closing the array (or a '}' in its place: an error)
    };
    struct Result {
        size_t used = 0;
        Stop stop = Stop::More;
    };

    // Scans text that follows what was scanned before; the first call starts just after the '['.
    Result scan(const char* text, size_t size, Cut cut);
    // The same, one byte at a time: the reference for tests, and the path for tails and comma cuts.
    Result scanBytes(const char* text, size_t size, Cut cut);

    // Since startWindow(): at least the deepest nesting inside the array (a parser that recurses can
    // then be chosen where it cannot run out of stack); whether a backslash may have been scanned
    // (without one, a parse in place changes nothing but closing quotes); whether a control byte other
    // than whitespace may have been (never valid JSON; see JsonWindow::controlBytes).
    void startWindow() {
        m_maxDepth = m_depth;
        m_backslash = m_control = false;
    }
    int64_t maxDepth() const { return m_maxDepth; }
    bool sawBackslash() const { return m_backslash; }
    bool sawControlByte() const { return m_control; }

private:
    int64_t m_depth = 0; // inside the array: 0 between elements
    int64_t m_maxDepth = 0;
    bool m_backslash = false, m_control = false;
    bool m_inString = false;
    bool m_escaped = false; // the next byte follows a backslash
};

} // namespace tuneup::analysis
