#include "library_functions.h"

namespace tuneup::agent {

std::string_view libraryFunctionName(uint16_t function) {
    static constexpr std::string_view kNames[] = {
#define TUNEUP_NAME(id, name) name,
        TUNEUP_LIBRARY_FUNCTIONS(TUNEUP_NAME)
#undef TUNEUP_NAME
    };
    static_assert(sizeof kNames / sizeof kNames[0] == size_t(LibraryFunction::Count));
    return function < size_t(LibraryFunction::Count) ? kNames[function] : std::string_view("?");
}

} // namespace tuneup::agent
