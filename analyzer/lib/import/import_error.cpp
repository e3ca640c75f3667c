#include "import/import_error.h"

#include <utility>

namespace tuneup::analysis {

namespace {
std::string describe(
    const std::string& path, const std::string& problem, std::optional<uint64_t> offset, bool uncompressedOffset) {
    std::string text = path.empty() ? std::string("<input>") : path;
    text += ": ";
    if (offset) {
        text += "at byte " + std::to_string(*offset);
        if (uncompressedOffset) text += " of the uncompressed data";
        text += ": ";
    }
    text += problem;
    return text;
}
} // namespace

ImportError::ImportError(
    Kind kind, std::string path, std::string problem, std::optional<uint64_t> offset, bool uncompressedOffset)
    : std::runtime_error(describe(path, problem, offset, uncompressedOffset))
    , m_kind(kind)
    , m_path(std::move(path))
    , m_problem(std::move(problem))
    , m_offset(offset) {
}

std::string_view importErrorKindName(ImportError::Kind kind) {
    switch (kind) {
    case ImportError::Kind::NotFound:
        return "not-found";
    case ImportError::Kind::Unreadable:
        return "unreadable";
    case ImportError::Kind::Empty:
        return "empty";
    case ImportError::Kind::UnknownFormat:
        return "unknown-format";
    case ImportError::Kind::NotATrace:
        return "not-a-trace";
    case ImportError::Kind::Malformed:
        return "malformed";
    case ImportError::Kind::Truncated:
        return "truncated";
    case ImportError::Kind::Corrupt:
        return "corrupt";
    }
    return "unknown";
}

} // namespace tuneup::analysis
