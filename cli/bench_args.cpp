#include "bench_args.h"

#include <cctype>
#include <cstdlib>
#include <string_view>

namespace tuneup::cli {

std::vector<std::string> splitCommandLine(const std::string& text, std::string& error) {
    std::vector<std::string> words;
    std::string word;
    bool inWord = false;
    char quote = 0;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quote == '\'') {
            if (c == '\'')
                quote = 0;
            else
                word += c;
        } else if (quote == '"') {
            if (c == '"')
                quote = 0;
            else if (c == '\\' && i + 1 < text.size()
                && std::string_view("\"\\$`").find(text[i + 1]) != std::string::npos)
                word += text[++i];
            else
                word += c;
        } else if (c == '\'' || c == '"') {
            quote = c;
            inWord = true;
        } else if (c == '\\' && i + 1 < text.size()) {
            word += text[++i];
            inWord = true;
        } else if (c == ' ' || c == '\t' || c == '\n') {
            if (inWord) words.push_back(word), word.clear(), inWord = false;
        } else {
            word += c;
            inWord = true;
        }
    }
    if (quote) {
        error = std::string("--candidate has an unclosed ") + (quote == '\'' ? "single" : "double") + " quote: " + text;
        return {};
    }
    if (inWord) words.push_back(word);
    return words;
}

std::optional<double> parseDuration(const std::string& text) {
    double total = 0;
    size_t pos = 0;
    bool any = false;
    while (pos < text.size()) {
        size_t end = pos;
        while (end < text.size() && (isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.'))
            ++end;
        if (end == pos) return std::nullopt;
        const double value = std::strtod(text.substr(pos, end - pos).c_str(), nullptr);
        double unit = 1;
        if (end < text.size()) {
            const char u = text[end++];
            unit = u == 's' ? 1 : u == 'm' ? 60 : u == 'h' ? 3600 : 0;
            if (unit == 0) return std::nullopt;
        } else if (any)
            return std::nullopt; // "1h30": the 30 of what?
        total += value * unit;
        any = true;
        pos = end;
    }
    return any && total > 0 ? std::optional<double>(total) : std::nullopt;
}

} // namespace tuneup::cli
