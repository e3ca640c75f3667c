#pragma once
// Text from a trace file is bytes: a kernel name, a command line or a range's message may hold
// sequences that are not UTF-8 (a damaged file, a program that printed Latin-1). Whatever tuneup writes
// for others to parse (JSON, a tuneup file's TEXT, HTML) is valid UTF-8: invalid sequences become
// U+FFFD, the replacement character, as a browser or Python's errors="replace" would show them.

#include <string>
#include <string_view>

namespace tuneup {

// True when `text` is valid UTF-8 (no overlong forms, surrogates or code points beyond U+10FFFF).
bool isValidUtf8(std::string_view text);

// `text` with every maximal invalid subsequence replaced by U+FFFD (the Unicode "substitution of
// maximal subparts" practice); valid text comes back unchanged.
std::string validUtf8(std::string_view text);

} // namespace tuneup
