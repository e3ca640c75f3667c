#include "report/xml_text.h"

#include <rapidjson/encodings.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/stringbuffer.h>

namespace tuneup::analysis {

std::string xmlText(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    size_t at = 0;
    while (at < text.size()) {
        const unsigned char c = static_cast<unsigned char>(text[at]);
        if (c < 0x80) {
            switch (c) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                if (c >= 0x20 || c == '\n' || c == '\t') out += char(c);
            }
            ++at;
            continue;
        }
        // One multi-byte code point; a bad sequence costs its first byte.
        rapidjson::MemoryStream bytes(text.data() + at, text.size() - at);
        rapidjson::StringBuffer ignored;
        if (rapidjson::UTF8<>::Validate(bytes, ignored) && bytes.Tell() > 0) {
            out.append(text.substr(at, bytes.Tell()));
            at += bytes.Tell();
        } else {
            out += '?';
            ++at;
        }
    }
    return out;
}

} // namespace tuneup::analysis
