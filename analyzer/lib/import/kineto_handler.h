#pragma once
// Kineto JSON to TraceBuilder rows, in two roles. The document reads the top-level keys (devices,
// distributedInfo, baseTimeNanoseconds, ...) and hands the body of each array of events to a callback;
// that body is cut into windows (json_windows.h), each read into a KinetoPart of its own on any thread,
// and the parts are merged into the document in text order. What depends on the whole file is settled
// in the merge: strings and threads renumbered, flows paired across windows, names applied in order.

#include "import/import_error.h"
#include "model/trace_builder.h"

#include <functional>
#include <memory>
#include <optional>
#include <rapidjson/error/error.h>
#include <string>
#include <vector>

namespace tuneup::analysis {

class JsonChunkInput;
struct JsonWindow;
class KinetoHandler; // the SAX handler (kineto_sax_handler.h)

/** The events of one window, read into a builder of their own. */
class KinetoPart {
public:
    KinetoPart();
    ~KinetoPart();
    KinetoPart(KinetoPart&&) noexcept;
    KinetoPart& operator=(KinetoPart&&) noexcept;

    // Reads window.text(), in place: strings and numbers are handed out where they lie, not copied.
    // A window with backslashes is read in a copy (`scratch`, reused between calls); any other only
    // has its closing quotes changed, and put back if the parse fails, so that the window is intact
    // for the error message. A failed result is the error the document's parser would report, its
    // offset in window.text() (see JsonWindow::textOffset).
    rapidjson::ParseResult parse(JsonWindow& window, std::vector<char>& scratch);

private:
    friend class KinetoDocument;
    std::unique_ptr<TraceBuilder> m_builder;
    std::unique_ptr<KinetoHandler> m_handler;
};

class KinetoDocument {
public:
    explicit KinetoDocument(TraceBuilder& builder);
    ~KinetoDocument();
    KinetoDocument(const KinetoDocument&) = delete;
    KinetoDocument& operator=(const KinetoDocument&) = delete;

    struct Failure {
        ImportError::Kind kind;
        std::string problem;
        std::optional<uint64_t> offset; // unset: where the parser stopped
    };

    // Parses the whole text. At each array of events, readEvents is called with the input at its
    // '['; it must take the array's elements and leave the input at its closing bracket with the '['
    // held back (JsonChunkInput::hold, JsonWindowReader::parserState), or call fail() and return false.
    rapidjson::ParseResult parse(JsonChunkInput& input, const std::function<bool()>& readEvents);
    // Adds a part's events; parts must come in text order. The part is empty afterwards.
    void merge(KinetoPart& part);
    void fail(Failure failure);
    // The next element of the events array is a placeholder, not an event (see JsonWindowReader).
    void expectPlaceholder(bool pending);

    const std::optional<Failure>& failure() const;
    bool sawContainer() const; // the text starts with an object or an array
    bool sawTraceEvents() const; // ... and holds an array of events
    // Stats, base time and vendor, once the whole text was read.
    void finish();

private:
    TraceBuilder& m_builder;
    std::unique_ptr<KinetoHandler> m_handler;
};

} // namespace tuneup::analysis
