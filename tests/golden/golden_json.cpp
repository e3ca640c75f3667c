#include "golden_json.h"

#include <algorithm>
#include <cstdio>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <stdexcept>

namespace tuneup::golden {

namespace {

using rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

void replaceAll(std::string& text, const std::string& from, const std::string& to) {
    if (from.empty()) return;
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
}

void normalise(Value& v, const std::string& path, const Normalisation& n, Allocator& allocator) {
    if (v.IsString()) {
        std::string text(v.GetString(), v.GetStringLength());
        for (const auto& [from, to] : n.replacements)
            replaceAll(text, from, to);
        v.SetString(text.data(), rapidjson::SizeType(text.size()), allocator);
    } else if (v.IsArray()) {
        for (Value& element : v.GetArray())
            normalise(element, path + "[]", n, allocator);
    } else if (v.IsObject()) {
        for (auto m = v.MemberBegin(); m != v.MemberEnd();) {
            const std::string member = path.empty() ? m->name.GetString() : path + "." + m->name.GetString();
            if (std::find(n.dropMembers.begin(), n.dropMembers.end(), member) != n.dropMembers.end()) {
                m = v.EraseMember(m);
                continue;
            }
            normalise(m->value, member, n, allocator);
            ++m;
        }
    }
}

class Printer {
public:
    Printer(int significantDigits, size_t width)
        : m_digits(significantDigits)
        , m_width(width) { }

    // Appends `v` to `out`, whose current line already holds `used` columns, at nesting `indent`.
    void print(const Value& v, size_t indent, size_t used, std::string& out) const {
        const std::string flat = oneLine(v);
        if (!(v.IsObject() || v.IsArray()) || used + flat.size() + 1 <= m_width || flat.size() <= 2) {
            out += flat;
            return;
        }
        const std::string inner(indent + 2, ' ');
        if (v.IsObject()) {
            out += "{\n";
            for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
                const std::string key = scalar(m->name) + ": ";
                out += inner + key;
                print(m->value, indent + 2, inner.size() + key.size(), out);
                out += m + 1 != v.MemberEnd() ? ",\n" : "\n";
            }
            out += std::string(indent, ' ') + "}";
            return;
        }
        out += "[\n";
        const auto elements = v.GetArray();
        const bool pack = std::all_of(elements.begin(), elements.end(),
            [this](const Value& e) { return oneLine(e).size() <= kPackedElementWidth; });
        std::string line;
        for (rapidjson::SizeType i = 0; i < elements.Size(); ++i) {
            const bool last = i + 1 == elements.Size();
            if (pack) {
                const std::string item = oneLine(elements[i]) + (last ? "" : ",");
                if (!line.empty() && inner.size() + line.size() + 1 + item.size() > m_width) {
                    out += inner + line + "\n";
                    line.clear();
                }
                line += (line.empty() ? "" : " ") + item;
            } else {
                out += inner;
                print(elements[i], indent + 2, inner.size(), out);
                out += last ? "\n" : ",\n";
            }
        }
        if (!line.empty()) out += inner + line + "\n";
        out += std::string(indent, ' ') + "]";
    }

private:
    static constexpr size_t kPackedElementWidth = 40;

    std::string oneLine(const Value& v) const {
        if (v.IsObject()) {
            std::string s = "{";
            for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m)
                s += (m == v.MemberBegin() ? "" : ", ") + scalar(m->name) + ": " + oneLine(m->value);
            return s + "}";
        }
        if (v.IsArray()) {
            std::string s = "[";
            for (rapidjson::SizeType i = 0; i < v.Size(); ++i)
                s += (i ? ", " : "") + oneLine(v[i]);
            return s + "]";
        }
        return scalar(v);
    }

    std::string scalar(const Value& v) const {
        if (v.IsDouble() && !v.IsInt64() && !v.IsUint64()) {
            char text[64];
            std::snprintf(text, sizeof text, "%.*g", m_digits, v.GetDouble());
            return text;
        }
        rapidjson::StringBuffer buffer;
        rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
        v.Accept(writer);
        return { buffer.GetString(), buffer.GetSize() };
    }

    int m_digits;
    size_t m_width;
};

} // namespace

std::string goldenForm(std::string_view json, const Normalisation& normalisation, size_t width) {
    rapidjson::Document document;
    document.Parse<rapidjson::kParseFullPrecisionFlag>(json.data(), json.size());
    if (document.HasParseError())
        throw std::runtime_error(std::string("not JSON: ") + rapidjson::GetParseError_En(document.GetParseError())
            + " at offset " + std::to_string(document.GetErrorOffset()));
    normalise(document, "", normalisation, document.GetAllocator());
    std::string out;
    Printer(normalisation.significantDigits, width).print(document, 0, 0, out);
    return out + "\n";
}

} // namespace tuneup::golden
