#include "import/format_detect.h"

#include "import/chunk_reader.h"
#include "import/import_error.h"
#include "trace_schema.h"

#include <cstring>
#include <string_view>
#include <zlib.h>

namespace tuneup::analysis {

namespace {

constexpr unsigned char kSqliteMagic[] = "SQLite format 3"; // followed by a NUL: 16 bytes

bool isSpace(unsigned char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

// A JSON object or array start: '{' then '"' or '}', or '[' then '{' or ']' (whitespace allowed).
// When the bytes run out before the second token, the first one decides.
bool looksLikeJson(std::span<const unsigned char> text) {
    size_t i = 0;
    if (text.size() >= 3 && text[0] == 0xEF && text[1] == 0xBB && text[2] == 0xBF) i = 3; // UTF-8 byte order mark
    while (i < text.size() && isSpace(text[i]))
        ++i;
    if (i >= text.size() || (text[i] != '{' && text[i] != '[')) return false;
    const unsigned char open = text[i++];
    while (i < text.size() && isSpace(text[i]))
        ++i;
    if (i >= text.size()) return true;
    return open == '{' ? (text[i] == '"' || text[i] == '}') : (text[i] == '{' || text[i] == ']');
}

// A tuneup job summary: a JSON object whose first member is "format": "tuneup-job-summary".
bool isJobSummary(std::span<const unsigned char> text) {
    std::string_view rest(reinterpret_cast<const char*>(text.data()), text.size());
    auto skipSpace = [&rest] {
        while (!rest.empty() && isSpace(static_cast<unsigned char>(rest.front())))
            rest.remove_prefix(1);
    };
    auto take = [&](std::string_view token) {
        skipSpace();
        if (!rest.starts_with(token)) return false;
        rest.remove_prefix(token.size());
        return true;
    };
    if (rest.starts_with("\xEF\xBB\xBF")) rest.remove_prefix(3);
    return take("{") && take("\"format\"") && take(":") && take(kJobSummaryFormatName);
}

// Inflates as much of a gzip head as the bytes allow.
std::vector<unsigned char> inflateHead(std::span<const unsigned char> head) {
    std::vector<unsigned char> out(kFormatHeadBytes);
    z_stream z;
    std::memset(&z, 0, sizeof(z));
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return {};
    z.next_in = const_cast<Bytef*>(head.data());
    z.avail_in = static_cast<uInt>(head.size());
    z.next_out = out.data();
    z.avail_out = static_cast<uInt>(out.size());
    inflate(&z, Z_SYNC_FLUSH); // partial input is expected: whatever came out is enough
    out.resize(out.size() - z.avail_out);
    inflateEnd(&z);
    return out;
}

} // namespace

std::string_view traceFileFormatName(TraceFileFormat format) {
    switch (format) {
    case TraceFileFormat::TuneupDb:
        return "tuneup";
    case TraceFileFormat::NsysSqlite:
        return "sqlite";
    case TraceFileFormat::KinetoJson:
        return "kineto-json";
    case TraceFileFormat::JobSummary:
        return "tuneup-job-summary";
    case TraceFileFormat::Unknown:
        break;
    }
    return "unknown";
}

bool isGzip(std::span<const unsigned char> head) {
    return head.size() >= 2 && head[0] == 0x1f && head[1] == 0x8b;
}

TraceFileFormat detectFormat(std::span<const unsigned char> head) {
    if (head.size() >= sizeof(kSqliteMagic) && std::memcmp(head.data(), kSqliteMagic, sizeof(kSqliteMagic)) == 0) {
        // The SQLite header keeps the application id big-endian at offset 68; tuneup sets its own.
        if (head.size() >= 72) {
            const uint32_t appId = (uint32_t(head[68]) << 24) | (uint32_t(head[69]) << 16) | (uint32_t(head[70]) << 8)
                | uint32_t(head[71]);
            if (appId == static_cast<uint32_t>(schema::kApplicationId)) return TraceFileFormat::TuneupDb;
        }
        return TraceFileFormat::NsysSqlite;
    }
    if (isGzip(head)) {
        const auto inflated = inflateHead(head);
        if (isJobSummary(inflated)) return TraceFileFormat::JobSummary;
        return !inflated.empty() && looksLikeJson(inflated) ? TraceFileFormat::KinetoJson : TraceFileFormat::Unknown;
    }
    if (isJobSummary(head)) return TraceFileFormat::JobSummary;
    return looksLikeJson(head) ? TraceFileFormat::KinetoJson : TraceFileFormat::Unknown;
}

TraceFileFormat detectFileFormat(const std::string& path) {
    auto source = openFileSource(path);
    std::vector<unsigned char> head(kFormatHeadBytes);
    size_t got = 0;
    while (got < head.size()) {
        const size_t n = source->read(reinterpret_cast<char*>(head.data() + got), head.size() - got);
        if (n == 0) break;
        got += n;
    }
    if (got == 0) throw ImportError(ImportError::Kind::Empty, path, "the file is empty");
    return detectFormat(std::span<const unsigned char>(head.data(), got));
}

} // namespace tuneup::analysis
