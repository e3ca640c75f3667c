#pragma once
// Recognises a trace file by its first bytes, never by its name.

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace tuneup::analysis {

enum class TraceFileFormat {
    Unknown,
    TuneupDb, // SQLite whose application_id is tuneup's
    NsysSqlite, // any other SQLite database: the caller decides (nsys export tables, or foreign)
    KinetoJson, // a JSON object or array, plain or gzip-compressed
    JobSummary, // a job summary (`tuneup advise --summary-out`): JSON starting {"format": "tuneup-job-summary"
};

// The quoted value of a job summary's first member, "format".
inline constexpr std::string_view kJobSummaryFormatName = "\"tuneup-job-summary\"";

std::string_view traceFileFormatName(TraceFileFormat format); // "kineto-json"

// How many leading bytes detectFormat() wants (fewer work, with less certainty).
inline constexpr size_t kFormatHeadBytes = 4096;

// Decides from the first bytes of a file (gzip data is inflated as far as the bytes allow).
TraceFileFormat detectFormat(std::span<const unsigned char> head);
bool isGzip(std::span<const unsigned char> head);

// Reads the head of a file and detects its format. Throws ImportError when the file cannot be read.
TraceFileFormat detectFileFormat(const std::string& path);

} // namespace tuneup::analysis
