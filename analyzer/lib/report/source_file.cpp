#include "report/source_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace tuneup::analysis {

namespace fs = std::filesystem;

std::optional<fs::path> findSourceFile(const std::string& file, const std::vector<fs::path>& folders) {
    if (file.empty()) return std::nullopt;
    std::error_code error;
    const fs::path path(file);
    if (path.is_absolute()) return fs::is_regular_file(path, error) ? std::optional(path) : std::nullopt;
    for (const fs::path& folder : folders) {
        const fs::path candidate = folder / path;
        if (fs::is_regular_file(candidate, error)) return candidate;
    }
    return std::nullopt;
}

std::vector<fs::path> sourceFolders(const std::string& traceFile) {
    std::vector<fs::path> folders;
    std::error_code error;
    if (!traceFile.empty()) {
        const fs::path folder = fs::absolute(traceFile, error).parent_path();
        if (!error) folders.push_back(folder);
    }
    const fs::path current = fs::current_path(error);
    if (!error && (folders.empty() || folders.front() != current)) folders.push_back(current);
    return folders;
}

SourceText readSourceText(const fs::path& path, size_t maxBytes) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path.string() + ": " + std::strerror(errno));
    SourceText source;
    source.text.resize(maxBytes + 1);
    in.read(source.text.data(), std::streamsize(source.text.size()));
    if (in.bad()) throw std::runtime_error(path.string() + ": cannot be read");
    source.text.resize(size_t(in.gcount()));
    if (source.text.size() > maxBytes) {
        // Longer than shown: keep whole lines only, so that no half line reads as the file's own.
        source.truncated = true;
        source.text.resize(maxBytes);
        const size_t lastNewline = source.text.rfind('\n');
        source.text.resize(lastNewline == std::string::npos ? 0 : lastNewline + 1);
    }
    return source;
}

std::optional<std::string> lineOf(const SourceText& source, int64_t line) {
    size_t begin = 0;
    for (int64_t n = 1; n < line; ++n) {
        begin = source.text.find('\n', begin);
        if (begin == std::string::npos) return std::nullopt;
        ++begin;
    }
    if (line <= 0 || begin >= source.text.size()) return std::nullopt;
    std::string text = source.text.substr(begin, source.text.find('\n', begin) - begin);
    while (!text.empty() && (text.back() == '\r' || text.back() == ' '))
        text.pop_back();
    return text;
}

} // namespace tuneup::analysis
