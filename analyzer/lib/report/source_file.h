#pragma once
// The user's source file behind a finding's "Where in the code" (the GUI's link, the HTML report's line),
// found where tuneup runs. The
// profiler names a file as Python saw it: absolute for the script, relative to sys.path for installed
// packages ("transformers/models/bert/modeling_bert.py"). A trace is often opened on another machine
// than the one it was recorded on, so a file may be absent: the caller then says so.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tuneup::analysis {

// `file` as it exists here: itself when absolute, else the first of `folders`/file that is a regular
// file; nullopt when there is none.
std::optional<std::filesystem::path> findSourceFile(
    const std::string& file, const std::vector<std::filesystem::path>& folders);

// Where a relative path is looked for: beside the trace that names it, then the current directory.
std::vector<std::filesystem::path> sourceFolders(const std::string& traceFile);

struct SourceText {
    std::string text; // the file's first maxBytes bytes, cut at the last whole line
    bool truncated = false; // the file is longer than that
};
// Reads at most `maxBytes` of `path` (a source file is small; a path to something else must not stall the
// window or fill its memory). Throws std::runtime_error when it cannot be read.
inline constexpr size_t kSourceMaxBytes = size_t(8) << 20; // "8 MB" in what the GUI says
SourceText readSourceText(const std::filesystem::path& path, size_t maxBytes = kSourceMaxBytes);
// Line `line` (from 1) of such a text, its line break and trailing blanks left out; nullopt past its end.
std::optional<std::string> lineOf(const SourceText& source, int64_t line);

} // namespace tuneup::analysis
