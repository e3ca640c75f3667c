#include "report/xml_text.h"

#include "utf8.h"

namespace tuneup::analysis {

std::string xmlText(std::string_view text) {
    const std::string valid = validUtf8(text);
    std::string out;
    out.reserve(valid.size());
    for (const char ch : valid) {
        switch (ch) {
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
            // XML 1.0 cannot hold control characters but tab and line breaks.
            if (static_cast<unsigned char>(ch) >= 0x20 || ch == '\n' || ch == '\t') out += ch;
        }
    }
    return out;
}

} // namespace tuneup::analysis
