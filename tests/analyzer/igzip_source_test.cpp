// Gzip input through ISA-L's igzip (import/igzip_source.h) reads exactly as through zlib: the same bytes
// of a real trace, several members and data after them, and the same kind of error — and place where zlib
// can say it — for truncated and damaged files. Skips (saying so) in a build without ISA-L.

#include "import/chunk_reader.h"
#include "import/igzip_source.h"
#include "import/import_error.h"
#include "shared_traces.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <random>
#include <sstream>
#include <string>
#include <zlib.h>

using namespace tuneup::analysis;
namespace fs = std::filesystem;

namespace {

const fs::path kTraces = TUNEUP_SHARED_TRACES;

std::string gzip(const std::string& text) {
    std::string out(compressBound(uLong(text.size())) + 64, '\0');
    z_stream z {};
    deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
    z.avail_in = uInt(text.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = uInt(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

// A text that compresses but not to nothing: JSON-like lines with varying numbers.
std::string sampleText(size_t lines) {
    std::mt19937 random(7);
    std::string text;
    for (size_t i = 0; i < lines; ++i)
        text += R"({"ph": "X", "name": "kernel_)" + std::to_string(random() % 1000) + R"(", "ts": )"
            + std::to_string(i * 17) + "},\n";
    return text;
}

// Everything the source gives, read in odd-sized pieces; the error if one ends it.
struct Outcome {
    std::string bytes;
    std::optional<ImportError> error;
};

Outcome readAll(std::unique_ptr<ByteSource> source, size_t pieceBytes = 7777) {
    Outcome out;
    std::string buffer(pieceBytes, '\0');
    try {
        for (size_t n; (n = source->read(buffer.data(), buffer.size())) > 0;)
            out.bytes.append(buffer.data(), n);
    } catch (const ImportError& e) {
        out.error = e;
    }
    return out;
}

Outcome viaIsal(const std::string& gz, size_t pieceBytes = 7777) {
    return readAll(isalGzipSource(memorySource(gz), "test.json.gz"), pieceBytes);
}

Outcome viaZlib(const std::string& gz) {
    return readAll(streamingGzipSource(memorySource(gz), "test.json.gz"));
}

#define REQUIRE_ISAL()                                                                                                 \
    do {                                                                                                               \
        if (!haveIsal()) GTEST_SKIP() << "built without ISA-L (libisal-dev): gzip input goes through zlib only";       \
    } while (0)

TEST(IsalGzip, RealTraceReadsAsWithZlib) {
    REQUIRE_ISAL();
    TUNEUP_REQUIRE_SHARED_TRACES(kTraces);
    std::ifstream file(kTraces / "hta/tests/data/trace_diff/control/control.json.gz", std::ios::binary);
    std::ostringstream bytes;
    bytes << file.rdbuf();
    const std::string gz = bytes.str();
    const Outcome isal = viaIsal(gz), zlib = viaZlib(gz);
    ASSERT_FALSE(isal.error) << isal.error->what();
    ASSERT_FALSE(zlib.error) << zlib.error->what();
    EXPECT_EQ(isal.bytes.size(), 34'825'284u);
    EXPECT_TRUE(isal.bytes == zlib.bytes);
}

TEST(IsalGzip, MembersFollowEachOtherAndTrailingDataEnds) {
    REQUIRE_ISAL();
    const std::string a = sampleText(3000), b = sampleText(10);
    const std::string gz = gzip(a) + gzip(b) + "trailing bytes that are not gzip";
    const Outcome isal = viaIsal(gz);
    ASSERT_FALSE(isal.error) << isal.error->what();
    EXPECT_TRUE(isal.bytes == a + b) << isal.bytes.size() << " of " << a.size() << " + " << b.size();
    EXPECT_TRUE(viaZlib(gz).bytes == isal.bytes);
    // Read into one large buffer: the second member starts inside a read, whose output must carry on.
    EXPECT_TRUE(viaIsal(gz, 1 << 20).bytes == a + b);
    EXPECT_EQ(viaIsal(gzip("")).bytes, "");
}

TEST(IsalGzip, TruncatedFileIsTruncatedWithWhatCameBefore) {
    REQUIRE_ISAL();
    const std::string text = sampleText(20000);
    const std::string gz = gzip(text);
    for (size_t cut : { gz.size() / 2, gz.size() - 4, size_t(12) }) {
        const Outcome isal = viaIsal(gz.substr(0, cut)), zlib = viaZlib(gz.substr(0, cut));
        ASSERT_TRUE(isal.error) << cut;
        ASSERT_TRUE(zlib.error) << cut;
        EXPECT_EQ(importErrorKindName(isal.error->kind()), importErrorKindName(zlib.error->kind())) << cut;
        EXPECT_EQ(isal.error->kind(), ImportError::Kind::Truncated) << cut << ": " << isal.error->what();
        EXPECT_NE(std::string(isal.error->what()).find("the file is truncated"), std::string::npos);
        // What came before the cut is handed out, and the offset is where it stopped.
        EXPECT_EQ(text.compare(0, isal.bytes.size(), isal.bytes), 0) << cut;
        EXPECT_EQ(isal.error->offset(), isal.bytes.size()) << cut;
    }
}

TEST(IsalGzip, DamagedDataIsCorrupt) {
    REQUIRE_ISAL();
    const std::string text = sampleText(5000);
    std::string badCrc = gzip(text);
    badCrc[badCrc.size() - 6] ^= 0x55; // the CRC-32 in the trailer
    const Outcome isal = viaIsal(badCrc), zlib = viaZlib(badCrc);
    ASSERT_TRUE(isal.error);
    ASSERT_TRUE(zlib.error);
    EXPECT_EQ(isal.error->kind(), ImportError::Kind::Corrupt) << isal.error->what();
    EXPECT_EQ(zlib.error->kind(), ImportError::Kind::Corrupt) << zlib.error->what();
    EXPECT_NE(std::string(isal.error->what()).find("the gzip data is damaged (incorrect data check"), std::string::npos)
        << isal.error->what();

    std::string badHeader = gzip(text);
    badHeader[2] = 9; // compression method: not deflate
    const Outcome header = viaIsal(badHeader);
    ASSERT_TRUE(header.error);
    EXPECT_EQ(header.error->kind(), ImportError::Kind::Corrupt) << header.error->what();

    // Noise in the middle of the deflate stream: damaged, never a crash or endless output.
    std::string noisy = gzip(text);
    for (size_t i = noisy.size() / 3; i < noisy.size() / 3 + 64; ++i)
        noisy[i] = char(i * 31);
    const Outcome noise = viaIsal(noisy);
    ASSERT_TRUE(noise.error);
    EXPECT_LE(noise.bytes.size(), text.size() + 64 * 1032);
}

} // namespace
