// The scanner that cuts a JSON array between its elements, and the windows cut with it
// (import/json_window_splitter.h, import/json_windows.h).

#include "import/json_window_splitter.h"
#include "import/json_windows.h"

#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

using namespace tuneup::analysis;
using Cut = JsonArraySplitter::Cut;
using Stop = JsonArraySplitter::Stop;

namespace {

// Where the scanner stops over a whole text fed in pieces of `piece` bytes: the offset of every stop
// and how it stopped, until the array ends or the text does.
std::vector<std::pair<size_t, Stop>> stops(std::string_view text, Cut cut, size_t piece, bool bytewise) {
    JsonArraySplitter splitter;
    std::vector<std::pair<size_t, Stop>> found;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t n = std::min(piece, text.size() - pos);
        const auto r
            = bytewise ? splitter.scanBytes(text.data() + pos, n, cut) : splitter.scan(text.data() + pos, n, cut);
        pos += r.used;
        if (r.stop == Stop::More) continue;
        found.emplace_back(pos, r.stop);
        if (r.stop == Stop::ArrayEnd) break;
    }
    return found;
}

// A cursor over a string, handing it out `step` bytes at a time (as chunks would).
class StringCursor final : public JsonCursor {
public:
    StringCursor(std::string text, size_t step)
        : m_text(std::move(text))
        , m_step(step) { }
    std::string_view available() override {
        return std::string_view(m_text).substr(m_pos, std::min(m_step, m_text.size() - m_pos));
    }
    void consume(size_t bytes) override { m_pos += bytes; }
    uint64_t offset() const override { return m_pos; }
    std::string recent(size_t n) const override {
        return m_text.substr(m_pos - std::min(n, m_pos), std::min(n, m_pos));
    }

private:
    std::string m_text;
    size_t m_step, m_pos = 0;
};

bool parses(const char* text) {
    rapidjson::StringStream stream(text);
    rapidjson::BaseReaderHandler<> ignore;
    return !rapidjson::Reader().Parse<kJsonParseFlags>(stream, ignore).IsError();
}

// Random text of JSON's structural bytes, strings with escapes, and filler: valid or not.
std::string randomText(std::mt19937& rng, size_t size) {
    static constexpr std::string_view kBytes = "{}[]\",:\\ a0\n";
    std::string text;
    std::uniform_int_distribution<size_t> pick(0, kBytes.size() - 1);
    while (text.size() < size)
        text += kBytes[pick(rng)];
    return text;
}

// An array body of `events` Kineto-like events, compact or pretty, with brackets, quotes and
// backslashes inside strings.
std::string eventsText(size_t events, bool pretty) {
    std::string text;
    for (size_t i = 0; i < events; ++i) {
        if (i > 0) text += pretty ? ",\n  " : ",";
        text += R"({"ph": "X", "name": "k[)" + std::to_string(i) + R"(]{\"x\\\\\"}", "ts": )" + std::to_string(i)
            + R"(.5, "args": {"grid": [1, 2, 3], "s": "]}", "e": "\\"}})";
    }
    return text;
}

} // namespace

TEST(JsonArraySplitter, CutsAfterElementsNotInsideStrings) {
    const std::string e0 = R"({"a": "}]"})", e1 = R"([1, {"b": "\"]"}])", e2 = R"({"c": "\\"})";
    const std::string body = e0 + ", " + e1 + ",\n" + e2 + R"(, 7, "x]" ] , {"after": 1})";
    for (bool bytewise : { false, true }) {
        const auto found = stops(body, Cut::AfterElement, 1000, bytewise);
        ASSERT_EQ(found.size(), 4u);
        EXPECT_EQ(found[0], std::make_pair(e0.size(), Stop::AfterElement));
        EXPECT_EQ(found[1], std::make_pair(e0.size() + 2 + e1.size(), Stop::AfterElement));
        EXPECT_EQ(found[2], std::make_pair(e0.size() + 2 + e1.size() + 2 + e2.size(), Stop::AfterElement));
        EXPECT_EQ(found[3], std::make_pair(body.find(" ] ") + 1, Stop::ArrayEnd)); // at the bracket, not past it
    }
}

TEST(JsonArraySplitter, StopsOnlyAtTheEndWithoutCuts) {
    const std::string body = eventsText(200, false) + "]}";
    for (bool bytewise : { false, true }) {
        const auto found = stops(body, Cut::None, 100, bytewise);
        ASSERT_EQ(found.size(), 1u);
        EXPECT_EQ(found[0], std::make_pair(body.size() - 2, Stop::ArrayEnd));
    }
    // A '}' where the array should close ends it too: the parser then reports it.
    EXPECT_EQ(stops("1, 2}", Cut::None, 10, false).back(), std::make_pair(size_t(4), Stop::ArrayEnd));
}

TEST(JsonArraySplitter, CommaCutsForScalars) {
    const std::string body = R"(1, "a,b", [2, 3], 4])";
    const auto found = stops(body, Cut::AfterElementOrComma, 1000, false);
    ASSERT_EQ(found.size(), 5u);
    EXPECT_EQ(found[0], std::make_pair(size_t(2), Stop::AfterComma));
    EXPECT_EQ(found[1], std::make_pair(body.find("\",") + 2, Stop::AfterComma));
    EXPECT_EQ(found[2], std::make_pair(body.find("3]") + 2, Stop::AfterElement));
    EXPECT_EQ(found[3], std::make_pair(body.find("], 4") + 2, Stop::AfterComma));
    EXPECT_EQ(found[4], std::make_pair(body.size() - 1, Stop::ArrayEnd));
}

TEST(JsonArraySplitter, SimdAndBytewiseAgreeOnAnyText) {
    std::mt19937 rng(7);
    for (int round = 0; round < 300; ++round) {
        const std::string text = round % 3 == 0 ? eventsText(20, round % 2) + "]" : randomText(rng, 50 + round * 7);
        const size_t piece = 1 + rng() % 200;
        for (Cut cut : { Cut::None, Cut::AfterElement })
            ASSERT_EQ(stops(text, cut, piece, false), stops(text, cut, piece, true)) << "round " << round;
        JsonArraySplitter simd, bytes;
        simd.scan(text.data(), text.size(), Cut::None);
        bytes.scanBytes(text.data(), text.size(), Cut::None);
        EXPECT_GE(simd.maxDepth(), bytes.maxDepth()) << "a bound, never less";
    }
}

TEST(JsonWindowReader, WindowsHoldWholeElementsAndParse) {
    for (bool pretty : { false, true }) {
        const std::string body = eventsText(500, pretty);
        const std::string text = "[" + body + "]}";
        for (size_t windowBytes : { size_t(1), size_t(100), size_t(5000), size_t(1) << 20 }) {
            StringCursor cursor(text, 333);
            cursor.consume(1);
            JsonWindowReader reader(cursor, windowBytes);
            JsonWindow window;
            std::string joined;
            size_t windows = 0;
            do {
                reader.next(window);
                ++windows;
                EXPECT_EQ(window.offset, 1 + joined.size());
                EXPECT_EQ(std::string_view(window.text(), window.prefix), window.placeholder ? "[\"\"" : "[");
                EXPECT_TRUE(parses(window.text())) << window.text();
                EXPECT_FALSE(window.endOfText);
                joined += window.content();
            } while (!window.last);
            EXPECT_EQ(joined, body);
            EXPECT_EQ(cursor.offset(), text.size() - 2); // at the closing bracket
            EXPECT_EQ(reader.parserState(), "[\"\"");
            if (windowBytes == 1) {
                EXPECT_EQ(windows, 501u); // one element each, and an empty last one at the bracket
            } else if (windowBytes == (size_t(1) << 20)) {
                EXPECT_EQ(windows, 1u);
            }
        }
    }
}

// The first windows are 1/16, 1/8, 1/4 and 1/2 of the size asked for, so that parsing threads start early;
// each ends at the first element end past its size.
TEST(JsonWindowReader, FirstWindowsRampUpToTheSizeAskedFor) {
    const std::string body = eventsText(5000, false);
    const std::string text = "[" + body + "]";
    const size_t element = body.size() / 5000 + 8; // an upper bound on one element and its comma
    StringCursor cursor(text, 4096);
    cursor.consume(1);
    constexpr size_t kWindow = 64 * 1024;
    JsonWindowReader reader(cursor, kWindow);
    JsonWindow window;
    for (size_t target : { kWindow / 16, kWindow / 8, kWindow / 4, kWindow / 2, kWindow, kWindow }) {
        reader.next(window);
        ASSERT_FALSE(window.last);
        EXPECT_GE(window.contentSize, target);
        EXPECT_LT(window.contentSize, target + element);
    }
}

TEST(JsonWindowReader, EndOfTextAndParserState) {
    {
        StringCursor cursor("[ ]", 10);
        cursor.consume(1);
        JsonWindowReader reader(cursor, 100);
        JsonWindow window;
        reader.next(window);
        EXPECT_TRUE(window.last);
        EXPECT_EQ(window.content(), " ");
        EXPECT_EQ(reader.parserState(), "[");
    }
    {
        StringCursor cursor("[1, 2, ]", 10);
        cursor.consume(1);
        JsonWindowReader reader(cursor, 100);
        JsonWindow window;
        reader.next(window);
        EXPECT_EQ(reader.parserState(), "[\"\",");
    }
    {
        const std::string text = R"([{"a": 1}, {"b": [2)";
        StringCursor cursor(text, 4);
        cursor.consume(1);
        JsonWindowReader reader(cursor, 1600); // a first window of 100 bytes
        JsonWindow window;
        reader.next(window);
        EXPECT_TRUE(window.last);
        EXPECT_TRUE(window.endOfText);
        EXPECT_EQ(window.content(), text.substr(1));
        EXPECT_EQ(window.textOffset(window.size), text.size()); // errors at the end are at the end
        EXPECT_EQ(window.context(text.size()), R"([{"a": 1}, {"b": [2<HERE><end of data>)");
    }
}

TEST(JsonWindowReader, ElementsBiggerThanAWindowGrowIt) {
    const std::string big = R"({"name": ")" + std::string(100000, 'x') + R"(", "args": {"a": [1]}})";
    const std::string body = big + ", {}, " + big;
    const std::string text = "[" + body + "]";
    StringCursor cursor(text, 4096);
    cursor.consume(1);
    JsonWindowReader reader(cursor, 1000);
    JsonWindow window;
    reader.next(window);
    EXPECT_EQ(window.content(), big);
    EXPECT_GE(window.maxDepth, 4); // "[", the event, args, the array
    std::string joined(window.content());
    do {
        reader.next(window);
        EXPECT_TRUE(parses(window.text()));
        EXPECT_LE(window.contentSize, big.size() + 10);
        joined += window.content();
    } while (!window.last);
    EXPECT_EQ(joined, body);
}

TEST(JsonWindowReader, BadTextCannotGrowAWindowWithoutBound) {
    // A quote missing: the scanner sees strings where the parser sees none, and never a cut. The
    // window is checked as it grows and ends at the error instead of reading everything.
    std::string text = R"([{"a": "x}, {"b": "y"}, )";
    for (int i = 0; i < 20000; ++i)
        text += R"({"k": "v"}, )";
    text += "]";
    StringCursor cursor(text, 1000);
    cursor.consume(1);
    JsonWindowReader reader(cursor, 100);
    JsonWindow window;
    reader.next(window);
    EXPECT_TRUE(window.last);
    EXPECT_LT(window.contentSize, 10000u) << "stopped long before the end of the text";
    EXPECT_FALSE(parses(window.text()));
}

TEST(JsonWindowReader, ArraysOfScalarsAreCutToo) {
    std::string body;
    for (int i = 0; i < 100000; ++i)
        body += std::to_string(i) + ", ";
    const std::string text = "[" + body + "0]";
    StringCursor cursor(text, 4096);
    cursor.consume(1);
    JsonWindowReader reader(cursor, 1000);
    JsonWindow window;
    size_t largest = 0;
    std::string joined;
    do {
        reader.next(window);
        largest = std::max(largest, window.contentSize);
        EXPECT_TRUE(parses(window.text()));
        joined += window.content();
    } while (!window.last);
    EXPECT_EQ(joined, body + "0");
    EXPECT_LT(largest, 100000u);
}
