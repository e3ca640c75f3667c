#pragma once
// The error every trace importer throws: which file, where in it, and what was wrong.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tuneup::analysis {

class ImportError : public std::runtime_error {
public:
    enum class Kind {
        NotFound, // no such file
        Unreadable, // a directory, no permission, an I/O error
        Empty, // zero bytes, or nothing but whitespace
        UnknownFormat, // not a format tuneup reads
        NotATrace, // well-formed input that is not a trace (e.g. JSON without traceEvents)
        Malformed, // a syntax error (JSON)
        Truncated, // the data ends early (cut-off download, gzip without its end)
        Corrupt, // damaged compressed data
    };

    // offset: byte position of the problem. For compressed files it counts the uncompressed
    // stream (uncompressedOffset = true), which is where a JSON error is.
    ImportError(Kind kind, std::string path, std::string problem, std::optional<uint64_t> offset = std::nullopt,
        bool uncompressedOffset = false);

    Kind kind() const { return m_kind; }
    const std::string& path() const { return m_path; }
    const std::string& problem() const { return m_problem; }
    std::optional<uint64_t> offset() const { return m_offset; }

private:
    Kind m_kind;
    std::string m_path;
    std::string m_problem;
    std::optional<uint64_t> m_offset;
};

std::string_view importErrorKindName(ImportError::Kind kind); // "malformed"

} // namespace tuneup::analysis
