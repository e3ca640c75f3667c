// Every trace item (common/trace_items.h: what TUNEUP_TRACE and `tuneup record --trace` accept) is named
// where users look for it: `tuneup record --help`, the README's paragraph on --trace, and docs/agent.md's
// TUNEUP_TRACE row. An item added to the parsers and not to these fails here.

#include "run_program.h"
#include "trace_items.h"

#include <cctype>
#include <gtest/gtest.h>
#include <string>

using namespace tuneup;
using namespace tuneup::test;

namespace {

// `name` as a word of a list: not part of a longer name ("sync" in "async", "cuda" in "cudaGetDevice").
bool namesItem(const std::string& text, std::string_view name) {
    const auto boundary = [](char c) { return !(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'); };
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1))
        if ((at == 0 || boundary(text[at - 1]))
            && (at + name.size() == text.size() || boundary(text[at + name.size()])))
            return true;
    return false;
}

// The text from the line holding `start` to the next blank line.
std::string paragraph(const std::string& text, const std::string& start) {
    size_t at = text.find(start);
    if (at == std::string::npos) return {};
    at = text.rfind('\n', at);
    at = at == std::string::npos ? 0 : at + 1;
    return text.substr(at, text.find("\n\n", at) - at);
}

TEST(TraceItems, RecordHelpNamesEveryItem) {
    const ProgramResult help = runProgram(TUNEUP_BINARY, { "record", "--help" });
    ASSERT_EQ(help.code, 0) << help.err;
    const std::string option = paragraph(help.out, "--trace");
    ASSERT_FALSE(option.empty()) << help.out;
    for (const TraceItem& item : kTraceItems)
        EXPECT_TRUE(namesItem(option, item.name)) << item.name << " is missing from:\n" << option;
}

TEST(TraceItems, TheReadmeNamesEveryItem) {
    const std::string text = paragraph(readFile(std::string(TUNEUP_SOURCE_DIR) + "/README.md"), "`--trace` chooses");
    ASSERT_FALSE(text.empty());
    for (const TraceItem& item : kTraceItems)
        EXPECT_TRUE(namesItem(text, item.name)) << item.name << " is missing from:\n" << text;
}

TEST(TraceItems, TheAgentsSettingsTableNamesEveryItem) {
    const std::string text
        = paragraph(readFile(std::string(TUNEUP_SOURCE_DIR) + "/docs/agent.md"), "| `TUNEUP_TRACE` |");
    ASSERT_FALSE(text.empty());
    const std::string row = text.substr(text.find("| `TUNEUP_TRACE` |"));
    for (const TraceItem& item : kTraceItems)
        EXPECT_TRUE(namesItem(row.substr(0, row.find('\n')), item.name)) << item.name << " is missing from the row";
}

TEST(TraceItems, NamesAreListedForErrors) {
    EXPECT_TRUE(isTraceItem("noisy-api"));
    EXPECT_FALSE(isTraceItem("noisy"));
    EXPECT_EQ(traceItemNames().substr(0, 17), "nvtx, torch, cuda");
    EXPECT_TRUE(traceItemNames().ends_with(", none"));
}

} // namespace
